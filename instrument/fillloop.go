package instrument

import (
	"go/ast"
	"go/token"
	"go/types"
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
// Only loops whose parts can be evaluated again with no effect qualify:
// lo and hi are constants, local variables no other goroutine reaches, or
// len of one; the slices are such variables, which the body does not
// assign, nor the loop variable or the bounds; i is an int. The range is
// s[lo:min(hi, len(s))]: the loop panics at len(s). A loop that panics
// earlier (at the end of another slice, a division by zero, a negative
// shift) has recorded the accesses of the iterations it did not run: a
// program that recovers may then see a race on elements it did not
// touch, one the loop would have had had it run on.

// elemAccess is the accesses of one slice in one direction: its
// elements at the loop's index, first named at pos.
type elemAccess struct {
	slice ast.Expr
	pos   token.Pos
	write bool
}

// elemBody is what the body of an element-wise loop accesses.
type elemBody struct {
	r        *rewriter
	iv       *types.Var // the loop variable; nil: none (a range's key is blank)
	accs     []elemAccess
	slices   map[*types.Var]bool // the slices indexed by iv
	assigned map[*types.Var]bool // the locals the body assigns
}

// note records an access of slice unless an earlier one of the same slice
// and direction stands for it.
func (b *elemBody) note(slice ast.Expr, pos token.Pos, write bool) {
	s := b.r.localVar(slice, false)
	b.slices[s] = true
	for _, a := range b.accs {
		if a.write == write && b.r.localVar(a.slice, false) == s {
			return
		}
	}
	b.accs = append(b.accs, elemAccess{slice, pos, write})
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
		if !b.indexed(x) {
			return false
		}
		if update {
			b.note(x.X, x.Pos(), false)
		}
		b.note(x.X, x.Pos(), true)
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

// indexed reports whether x is s[i] for the loop variable i and a local
// slice variable s (of a slice type, not a type parameter's).
func (b *elemBody) indexed(x *ast.IndexExpr) bool {
	if b.iv == nil || !b.r.indexedBy(x, b.iv) {
		return false
	}
	_, ok := b.r.localVar(x.X, false).Type().Underlying().(*types.Slice)
	return ok
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
		if b.indexed(x) {
			b.note(x.X, x.Pos(), false)
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
// accesses of elements [lo, hi) of each slice, hi given as text: reads
// innermost, so they are recorded first (s[i] += v reads, then writes).
func (b *elemBody) hooks(hi string) (pre, post string) {
	r := b.r
	for _, write := range []bool{false, true} {
		for _, a := range b.accs {
			if a.write != write {
				continue
			}
			hook := ".LoopRangeR("
			if write {
				hook = ".LoopRangeW("
			}
			pre = rtAlias + hook + r.text(a.slice) + ", " + pre
			post += ", " + hi + ", " + r.asite(a.pos) + ")"
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
	post, ok := x.Post.(*ast.IncDecStmt)
	if !ok || post.Tok != token.INC || r.localVar(post.X, false) != iv {
		return false
	}
	cond, ok := x.Cond.(*ast.BinaryExpr)
	if !ok || cond.Op != token.LSS || r.localVar(cond.X, false) != iv {
		return false
	}
	if !r.loopBound(init.Rhs[0]) || !r.loopBound(cond.Y) {
		return false
	}
	b, ok := r.elemLoopBody(x.Body.List, iv, r.boundVars(init.Rhs[0], cond.Y)...)
	if !ok || len(b.accs) == 0 {
		return false
	}
	pre, post2 := b.hooks(r.text(cond.Y))
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
		b.note(x.X, x.Value.Pos(), false)
	}
	if len(b.accs) == 0 {
		return false
	}
	pre, post := b.hooks(hiText)
	lo, hi := r.span(x.X)
	r.ed.wrap(lo, hi, rtAlias+".LoopAlso(", ", "+pre+"0"+post+")")
	return true
}

// boundVars returns the local variables the loop bounds es name (n, or s
// in len(s)).
func (r *rewriter) boundVars(es ...ast.Expr) []*types.Var {
	var vs []*types.Var
	for _, e := range es {
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
// a local slice variable.
func (r *rewriter) loopBound(e ast.Expr) bool {
	tv, ok := r.info.Types[e]
	if !ok || !types.Identical(tv.Type, types.Typ[types.Int]) && !isUntyped(tv.Type) {
		return false
	}
	if tv.Value != nil {
		return true
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

// indexedBy reports whether x is s[i] for a local slice variable s and
// the loop variable iv.
func (r *rewriter) indexedBy(x *ast.IndexExpr, iv *types.Var) bool {
	s := r.localVar(x.X, false)
	return s != nil && isSlice(s.Type()) && r.localVar(x.Index, false) == iv
}
