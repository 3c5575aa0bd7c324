package instrument

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// Element-wise loops: a loop whose body is straight-line assignments of
// local variables and of elements of slices by the loop's index, from
// values that read no memory but local variables and elements at that
// index,
//
//	for i := lo; i < hi; i++ { s[i] = v }
//	for i := lo; i < hi; i++ { dst[i] = src[i] + 1 }
//	for i := range b { b[i] ^= byte(key); key = bits.RotateLeft32(key, -8) }
//	for _, c := range b { h = h*31 + uint32(c) }
//
// records one range event for each slice and kind before it runs, instead
// of an event per element and iteration (rt.LoopRangeR, rt.LoopRangeW: in
// a for loop's init, i := rt.LoopRangeW(s, lo, hi, site, rec); around a
// range loop's operand, rt.LoopAlso(s, rt.LoopRangeW(s, 0, len(s), ...))).
// The loop synchronizes with nothing (its only calls are those of math
// and math/bits, which touch no memory), has no branch out of it and
// writes each element it names in every iteration, so its accesses are
// ordered with every other goroutine's as the one event is. bigcache's
// TestCacheDelRandomly fills a 1 KiB value byte by byte 800,000 times on
// each of two goroutines; coder/websocket's TestMask masks 64 KiB buffers
// byte by byte 10,000 times a subtest.
//
// A for loop may step by a constant (i += 2), name elements at the index
// plus or minus a constant (s[i+1]), and index a row of a local slice of
// slices by constants and locals the body does not assign (g[r-1][i]):
// a red-black stencil's inner loop,
//
//	for j := 1 + (i+colour)%2; j < n-1; j += 2 {
//		g[i][j] = w * (g[i-1][j] + g[i+1][j] + g[i][j-1] + g[i][j+1])
//	}
//
// records one range per row, offset and direction (rt.LoopStepR/W,
// rt.LoopRowR/W, which also record the row's read; a step over 1 is a
// sparse range of 8-byte elements, an event per element of others), where
// it recorded six events per iteration (Java Grande's SOR, the overhead
// table's sor). A column, rows at the loop's index and a fixed element,
//
//	for k := 0; k < n; k++ { s += a[i][k] * b[k][j] }
//
// records the rows' reads as one sparse range and each element
// (rt.LoopColR/W), in the hook's loop rather than one hook call per access
// of the body (the overhead table's cpu).
//
// Only loops whose parts can be evaluated again with no effect qualify:
// hi is a constant, a local variable no other goroutine reaches, or len
// of one, or one of those plus or minus a constant; lo reads no memory
// but such variables (it is evaluated once, in the hooks' call); the
// slices are such variables, which the body does not assign, nor the loop
// variable, the bound or a row's index; i is an int. The range is
// s[lo:min(hi, len(s))]: the loop panics at len(s). A loop that panics
// earlier (at the end of another slice, a division by zero, a negative
// shift) has recorded the accesses of the iterations it did not run: a
// program that recovers may then see a race on elements it did not
// touch, one the loop would have had had it run on.

// elemAccess is the accesses of one slice in one direction: its
// elements at the loop's index plus off, first named at pos. The slice is
// a local variable s, or a row t[e] of a local slice of slices t whose
// index e names only constants and locals the body does not assign (a
// stencil's g[i-1][j]): the loop reads the row in each iteration, and the
// hook once.
type elemAccess struct {
	elemIndex
	pos   token.Pos
	write bool
}

// elemBody is what the body of an element-wise loop accesses.
type elemBody struct {
	r        *rewriter
	iv       *types.Var // the loop variable; nil: none (a range's key is blank)
	accs     []elemAccess
	slices   map[*types.Var]bool // the slices indexed by iv, and the locals rows' indexes name
	assigned map[*types.Var]bool // the locals the body assigns
}

// elemMaxOff bounds the constant of an index i+c (a stencil's neighbours).
const elemMaxOff = 1 << 16

// note records an access of slice's element at the loop's index plus off
// unless an earlier one of the same slice, offset and direction stands
// for it.
func (b *elemBody) note(x elemIndex, pos token.Pos, write bool) {
	key := b.r.text(x.slice)
	if x.col != nil {
		key += "[][" + b.r.text(x.col) + "]"
	}
	for _, a := range b.accs {
		if a.write == write && a.off == x.off && a.row == x.row && a.key == key {
			return
		}
	}
	x.key = key
	b.accs = append(b.accs, elemAccess{x, pos, write})
}

// elemLoopBody reports whether stmts, the body of a loop with loop
// variable iv (nil: none), are straight-line assignments that qualify,
// with what they access. fixed are the variables besides iv and the
// slices that the body must not assign (the bounds').
func (r *rewriter) elemLoopBody(stmts []ast.Stmt, iv *types.Var, fixed ...*types.Var) (*elemBody, bool) {
	b := &elemBody{r: r, iv: iv, slices: map[*types.Var]bool{}, assigned: map[*types.Var]bool{}}
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if len(st.Lhs) != len(st.Rhs) {
				return nil, false
			}
			for _, e := range st.Rhs {
				if !b.value(e) {
					return nil, false
				}
			}
			update := st.Tok != token.ASSIGN && st.Tok != token.DEFINE
			for _, e := range st.Lhs {
				if !b.target(e, st.Tok == token.DEFINE, update) {
					return nil, false
				}
			}
		case *ast.IncDecStmt:
			if !b.target(st.X, false, true) {
				return nil, false
			}
		case *ast.EmptyStmt:
		default:
			return nil, false
		}
	}
	for _, v := range append(fixed, iv) {
		if v != nil && b.assigned[v] {
			return nil, false
		}
	}
	for s := range b.slices {
		if b.assigned[s] {
			return nil, false
		}
	}
	return b, true
}

// target reports whether e, assigned in the body, is a local variable or
// an element s[i] (read too when update: op= and ++).
func (b *elemBody) target(e ast.Expr, define, update bool) bool {
	if x, ok := unparen(e).(*ast.IndexExpr); ok {
		ix, ok := b.indexed(x)
		if !ok {
			return false
		}
		if update {
			b.note(ix, x.Pos(), false)
		}
		b.note(ix, x.Pos(), true)
		return true
	}
	if isBlank(e) {
		return true
	}
	v := b.r.localVar(e, define)
	if v == nil && define {
		v = b.r.localVar(e, false) // redeclared by :=
	}
	if v == nil {
		return false
	}
	b.assigned[v] = true
	return true
}

// elemIndex is an element the body names: the slice, and the constant
// added to the loop's index; or a column col of a local slice of slices
// (slice), its rows at the loop's index plus off (a matrix product's
// b[k][j] in the loop over k).
type elemIndex struct {
	slice ast.Expr
	off   int64
	row   bool
	col   ast.Expr
	key   string // the slice's text, and the column's (note)
}

// indexed reports whether x is s[i+c] for the loop variable i, a constant
// c (none, or added or subtracted) and a local slice variable s (of a
// slice type, not a type parameter's), or a row t[e] of a local slice of
// slices (elemAccess), noting the variables it names as fixed.
func (b *elemBody) indexed(x *ast.IndexExpr) (elemIndex, bool) {
	r := b.r
	if b.iv == nil {
		return elemIndex{}, false
	}
	off, ok := r.indexOffset(x.Index, b.iv)
	if !ok {
		if row, isRow := unparen(x.X).(*ast.IndexExpr); isRow {
			return b.rowIndexed(x, row, 0)
		}
		return elemIndex{}, false
	}
	if s := r.localVar(x.X, false); s != nil {
		if _, ok := s.Type().Underlying().(*types.Slice); !ok {
			return elemIndex{}, false
		}
		b.slices[s] = true
		return elemIndex{slice: x.X, off: off}, true
	}
	row, ok := unparen(x.X).(*ast.IndexExpr)
	if !ok {
		return elemIndex{}, false
	}
	return b.rowIndexed(x, row, off)
}

// rowIndexed is indexed for x, row[index]: a row at a fixed index and
// its element at the loop's index plus off, or a column (a fixed index) of
// the row at the loop's index plus off.
func (b *elemBody) rowIndexed(x, row *ast.IndexExpr, off int64) (elemIndex, bool) {
	r := b.r
	t := r.localVar(row.X, false)
	if t == nil {
		return elemIndex{}, false
	}
	rows, ok := t.Type().Underlying().(*types.Slice)
	if !ok {
		return elemIndex{}, false
	}
	if _, ok := rows.Elem().Underlying().(*types.Slice); !ok {
		return elemIndex{}, false
	}
	fixed := func(e ast.Expr) bool {
		vs, ok := r.fixedIndex(e)
		for _, v := range vs {
			if v == b.iv {
				return false
			}
			b.slices[v] = true
		}
		return ok
	}
	_, elemByIV := r.indexOffset(x.Index, b.iv)
	rowOff, rowByIV := r.indexOffset(row.Index, b.iv)
	switch {
	case elemByIV && !rowByIV && fixed(row.Index):
		b.slices[t] = true
		return elemIndex{slice: x.X, off: off, row: true}, true
	case rowByIV && !elemByIV && fixed(x.Index):
		b.slices[t] = true
		return elemIndex{slice: row.X, off: rowOff, col: x.Index}, true
	}
	return elemIndex{}, false
}

// indexOffset reports whether e is iv, iv+c, c+iv or iv-c for an int
// constant c of at most elemMaxOff, and returns the offset.
func (r *rewriter) indexOffset(e ast.Expr, iv *types.Var) (int64, bool) {
	base, n, _ := r.plusConst(e)
	return n, r.localVar(base, false) == iv
}

// plusConst splits e, base+c, c+base or base-c for an int constant c of
// at most elemMaxOff, into base and the signed constant (split); any other
// e is its own base, plus 0.
func (r *rewriter) plusConst(e ast.Expr) (base ast.Expr, c int64, split bool) {
	x, ok := unparen(e).(*ast.BinaryExpr)
	if !ok || x.Op != token.ADD && x.Op != token.SUB {
		return e, 0, false
	}
	if n, ok := r.smallConst(x.Y); ok {
		if x.Op == token.SUB {
			n = -n
		}
		return x.X, n, true
	}
	if n, ok := r.smallConst(x.X); ok && x.Op == token.ADD {
		return x.Y, n, true
	}
	return e, 0, false
}

// smallConst returns the value of e when it is an integer constant of at
// most elemMaxOff in magnitude.
func (r *rewriter) smallConst(e ast.Expr) (int64, bool) {
	tv, ok := r.info.Types[e]
	if !ok || tv.Value == nil {
		return 0, false
	}
	n, exact := constant.Int64Val(constant.ToInt(tv.Value))
	if !exact || n > elemMaxOff || n < -elemMaxOff {
		return 0, false
	}
	return n, true
}

// fixedIndex reports whether e, a row's index, is an int constant, a
// local variable or one plus or minus a constant, and returns the
// variable (which the body must not assign).
func (r *rewriter) fixedIndex(e ast.Expr) ([]*types.Var, bool) {
	tv, ok := r.info.Types[e]
	if !ok || !types.Identical(tv.Type, types.Typ[types.Int]) && !isUntyped(tv.Type) {
		return nil, false
	}
	if tv.Value != nil {
		return nil, true
	}
	base, _, _ := r.plusConst(e)
	if v := r.localVar(base, false); v != nil {
		return []*types.Var{v}, true
	}
	return nil, false
}

// value reports whether e reads no memory but local variables and
// elements s[i] (noted), and calls nothing but pure functions (pureCall).
func (b *elemBody) value(e ast.Expr) bool {
	r := b.r
	if tv, ok := r.info.Types[e]; ok && tv.Value != nil {
		return true
	}
	switch x := unparen(e).(type) {
	case *ast.Ident:
		return r.localVar(x, false) != nil
	case *ast.UnaryExpr:
		switch x.Op {
		case token.SUB, token.ADD, token.XOR, token.NOT:
			return b.value(x.X)
		}
	case *ast.BinaryExpr:
		return b.value(x.X) && b.value(x.Y)
	case *ast.IndexExpr:
		if ix, ok := b.indexed(x); ok {
			b.note(ix, x.Pos(), false)
			return true
		}
	case *ast.CallExpr:
		if x.Ellipsis != token.NoPos || !b.pureCall(x) {
			return false
		}
		for _, a := range x.Args {
			if !b.value(a) {
				return false
			}
		}
		return true
	}
	return false
}

// pureCall reports whether c calls what touches no memory and does not
// panic: a conversion to a basic type, min, max, len or cap of a local, a
// function of math, or of math/bits but those that panic (Div, Rem).
func (b *elemBody) pureCall(c *ast.CallExpr) bool {
	r := b.r
	if r.isType(c.Fun) {
		_, basic := typeOf(r.info, c).Underlying().(*types.Basic)
		return basic && len(c.Args) == 1
	}
	if r.isBuiltin(c.Fun) {
		switch identOf(c.Fun).Name {
		case "min", "max":
			return true
		case "len", "cap":
			return len(c.Args) == 1 && r.localVar(c.Args[0], false) != nil
		}
		return false
	}
	sel, ok := unparen(c.Fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	fn, ok := r.info.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Signature().Recv() != nil {
		return false
	}
	switch fn.Pkg().Path() {
	case "math":
		return true
	case "math/bits":
		return !strings.HasPrefix(fn.Name(), "Div") && !strings.HasPrefix(fn.Name(), "Rem")
	}
	return false
}

// hooks returns the text around a loop's first index that records b's
// accesses of elements [lo, hi) of each slice by step (at lo+off, ...),
// hi given as text: reads innermost, so they are recorded first (s[i] +=
// v reads, then writes).
func (b *elemBody) hooks(hi string, step int64) (pre, post string) {
	r := b.r
	for _, write := range []bool{false, true} {
		dir := "R("
		if write {
			dir = "W("
		}
		for _, a := range b.accs {
			if a.write != write {
				continue
			}
			by := ", " + hi + ", " + strconv.FormatInt(step, 10) + ", " + strconv.FormatInt(a.off, 10) + ", "
			switch {
			case a.col != nil:
				pre = rtAlias + ".LoopCol" + dir + r.text(a.slice) + ", " + r.text(a.col) + ", " + pre
				post += by + r.site(a.pos) + ", " + r.asite(a.pos) + ")"
			case a.row:
				row := unparen(a.slice).(*ast.IndexExpr)
				pre = rtAlias + ".LoopRow" + dir + r.text(row.X) + ", " + r.text(row.Index) + ", " + pre
				post += by + r.site(a.pos) + ", " + r.asite(row.Pos()) + ")"
			case step != 1 || a.off != 0:
				pre = rtAlias + ".LoopStep" + dir + r.text(a.slice) + ", " + pre
				post += by + r.asite(a.pos) + ")"
			default:
				pre = rtAlias + ".LoopRange" + dir + r.text(a.slice) + ", " + pre
				post += ", " + hi + ", " + r.asite(a.pos) + ")"
			}
		}
	}
	return pre, post
}

// fillLoop rewrites x when it is an element-wise for loop, and reports
// whether it did (the loop is then left as written otherwise).
func (r *rewriter) fillLoop(x *ast.ForStmt) bool {
	init, ok := x.Init.(*ast.AssignStmt)
	if !ok || init.Tok != token.DEFINE || len(init.Lhs) != 1 || len(init.Rhs) != 1 || r.norace {
		return false
	}
	iv := r.localVar(init.Lhs[0], true)
	if iv == nil || !types.Identical(iv.Type(), types.Typ[types.Int]) {
		return false
	}
	step, ok := r.loopStep(x.Post, iv)
	if !ok {
		return false
	}
	cond, ok := x.Cond.(*ast.BinaryExpr)
	if !ok || cond.Op != token.LSS || r.localVar(cond.X, false) != iv {
		return false
	}
	if !r.loopStart(init.Rhs[0]) || !r.loopBound(cond.Y) {
		return false
	}
	b, ok := r.elemLoopBody(x.Body.List, iv, r.boundVars(cond.Y)...)
	if !ok || len(b.accs) == 0 {
		return false
	}
	pre, post2 := b.hooks(r.text(cond.Y), step)
	lo, hi := r.span(init.Rhs[0])
	r.ed.wrap(lo, hi, pre, post2)
	return true
}

// rangeLoop rewrites x when it is an element-wise range loop over a local
// slice variable or an int, and reports whether it did: the range's
// operand becomes rt.LoopAlso(s, hooks), which records the accesses and
// returns s.
func (r *rewriter) rangeLoop(x *ast.RangeStmt) bool {
	if x.Tok != token.DEFINE || x.Key == nil || r.norace {
		return false
	}
	var iv *types.Var
	if !isBlank(x.Key) {
		if iv = r.localVar(x.Key, true); iv == nil {
			return false
		}
	}
	value := x.Value != nil && !isBlank(x.Value)
	if value && r.localVar(x.Value, true) == nil {
		return false
	}
	var hiText string
	var fixed []*types.Var
	if s := r.localVar(x.X, false); s != nil && isSlice(s.Type()) {
		if _, ok := s.Type().Underlying().(*types.Slice); !ok {
			return false // a type parameter's core type: LoopRangeR cannot infer E
		}
		hiText = "len(" + r.text(x.X) + ")"
		fixed = append(fixed, s)
	} else if x.Value == nil && r.loopBound(x.X) {
		hiText = r.text(x.X)
		fixed = r.boundVars(x.X)
	} else {
		return false
	}
	b, ok := r.elemLoopBody(x.Body.List, iv, fixed...)
	if !ok {
		return false
	}
	if value {
		// Each iteration reads the element it assigns the value.
		b.note(elemIndex{slice: x.X}, x.Value.Pos(), false)
	}
	if len(b.accs) == 0 {
		return false
	}
	pre, post := b.hooks(hiText, 1)
	lo, hi := r.span(x.X)
	r.ed.wrap(lo, hi, rtAlias+".LoopAlso(", ", "+pre+"0"+post+")")
	return true
}

// loopStep reports whether post is iv++ or iv += c for a positive int
// constant c, and returns the step.
func (r *rewriter) loopStep(post ast.Stmt, iv *types.Var) (int64, bool) {
	switch p := post.(type) {
	case *ast.IncDecStmt:
		return 1, p.Tok == token.INC && r.localVar(p.X, false) == iv
	case *ast.AssignStmt:
		if p.Tok != token.ADD_ASSIGN || len(p.Lhs) != 1 || len(p.Rhs) != 1 || r.localVar(p.Lhs[0], false) != iv {
			return 0, false
		}
		n, ok := r.smallConst(p.Rhs[0])
		return n, ok && n > 0
	}
	return 0, false
}

// loopStart reports whether e, a fill loop's first index, is an int
// computed from constants and local variables only (1 + (i+colour)%2):
// it is evaluated once, in the hooks' call, as the loop evaluated it.
func (r *rewriter) loopStart(e ast.Expr) bool {
	tv, ok := r.info.Types[e]
	if !ok || !types.Identical(tv.Type, types.Typ[types.Int]) && !isUntyped(tv.Type) {
		return false
	}
	b := &elemBody{r: r, slices: map[*types.Var]bool{}, assigned: map[*types.Var]bool{}}
	return b.value(e) && len(b.accs) == 0
}

// boundVars returns the local variables the loop bounds es name (n, or s
// in len(s), or either plus or minus a constant).
func (r *rewriter) boundVars(es ...ast.Expr) []*types.Var {
	var vs []*types.Var
	for _, e := range es {
		e, _, _ = r.plusConst(e)
		if c, ok := unparen(e).(*ast.CallExpr); ok && len(c.Args) == 1 {
			e = c.Args[0]
		}
		if v := r.localVar(e, false); v != nil {
			vs = append(vs, v)
		}
	}
	return vs
}

// localVar returns the variable e names when it is a local one no other
// goroutine reaches (not captured, no address taken), or nil. def: e
// declares it.
func (r *rewriter) localVar(e ast.Expr, def bool) *types.Var {
	id, ok := unparen(e).(*ast.Ident)
	if !ok {
		return nil
	}
	var obj types.Object
	if def {
		obj = r.info.Defs[id]
	} else {
		obj = r.info.Uses[id]
	}
	v, ok := obj.(*types.Var)
	if !ok || v.IsField() || isPackageVar(v) || r.shared[v] {
		return nil
	}
	return v
}

// loopBound reports whether e, a bound of a fill loop, can be evaluated
// again with no effect: an int constant, a local int variable, or len of
// a local slice variable, or one of those plus or minus a constant.
func (r *rewriter) loopBound(e ast.Expr) bool {
	tv, ok := r.info.Types[e]
	if !ok || !types.Identical(tv.Type, types.Typ[types.Int]) && !isUntyped(tv.Type) {
		return false
	}
	if tv.Value != nil {
		return true
	}
	if base, _, split := r.plusConst(e); split {
		return r.loopBound(base)
	}
	if r.localVar(e, false) != nil {
		return true
	}
	c, ok := unparen(e).(*ast.CallExpr)
	if !ok || len(c.Args) != 1 || !r.isBuiltin(c.Fun) {
		return false
	}
	if id := identOf(c.Fun); id == nil || id.Name != "len" {
		return false
	}
	v := r.localVar(c.Args[0], false)
	return v != nil && isSlice(v.Type())
}
