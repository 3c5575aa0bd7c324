package instrument

import (
	"go/ast"
	"go/token"
	"go/types"
)

// Fill and copy loops: a loop that only stores into the elements of a
// slice by its index, from values that read no memory or the same index
// of another slice,
//
//	for i := lo; i < hi; i++ { s[i] = v }
//	for i := lo; i < hi; i++ { dst[i] = src[i] + 1 }
//
// records one range event for each slice before it runs, instead of an
// event per element and iteration (rt.LoopRangeR, rt.LoopRangeW in its
// init: i := rt.LoopRangeW(s, lo, hi, site, rec)). The loop synchronizes
// with nothing, so its accesses are ordered with every other goroutine's
// as the one event is. bigcache's TestCacheDelRandomly fills a 1 KiB value
// byte by byte 800,000 times on each of two goroutines.
//
// Only loops whose parts can be evaluated again with no effect qualify:
// lo and hi are constants, local variables no other goroutine reaches, or
// len of one; the slices are such variables; i is an int. The range is
// s[lo:min(hi, len(s))]: the loop panics at len(s).

// fillLoop rewrites x when it is such a loop, and reports whether it did
// (the loop is then left as written otherwise).
func (r *rewriter) fillLoop(x *ast.ForStmt) bool {
	init, ok := x.Init.(*ast.AssignStmt)
	if !ok || init.Tok != token.DEFINE || len(init.Lhs) != 1 || len(init.Rhs) != 1 {
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
	if len(x.Body.List) != 1 {
		return false
	}
	as, ok := x.Body.List[0].(*ast.AssignStmt)
	if !ok || as.Tok != token.ASSIGN || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
		return false
	}
	dst, ok := unparen(as.Lhs[0]).(*ast.IndexExpr)
	if !ok || !r.indexedBy(dst, iv) {
		return false
	}
	var reads []*ast.IndexExpr
	if !r.fillValue(as.Rhs[0], iv, &reads) {
		return false
	}
	// The hooks go around lo (the wraps added first are outermost).
	lo, hi := r.span(init.Rhs[0])
	bounds := ", " + r.text(cond.Y) + ", "
	for _, rd := range reads {
		r.ed.wrap(lo, hi, rtAlias+".LoopRangeR("+r.text(rd.X)+", ", bounds+r.asite(rd.Pos())+")")
	}
	r.ed.wrap(lo, hi, rtAlias+".LoopRangeW("+r.text(dst.X)+", ", bounds+r.asite(dst.Pos())+")")
	return true
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

// fillValue reports whether e, the value a fill loop stores, reads no
// memory but local variables and elements src[i] (collected in reads).
func (r *rewriter) fillValue(e ast.Expr, iv *types.Var, reads *[]*ast.IndexExpr) bool {
	if tv, ok := r.info.Types[e]; ok && tv.Value != nil {
		return true
	}
	switch x := unparen(e).(type) {
	case *ast.Ident:
		return r.localVar(x, false) != nil
	case *ast.UnaryExpr:
		switch x.Op {
		case token.SUB, token.ADD, token.XOR, token.NOT:
			return r.fillValue(x.X, iv, reads)
		}
	case *ast.BinaryExpr:
		return r.fillValue(x.X, iv, reads) && r.fillValue(x.Y, iv, reads)
	case *ast.IndexExpr:
		if r.indexedBy(x, iv) {
			*reads = append(*reads, x)
			return true
		}
	case *ast.CallExpr:
		// A conversion between basic types.
		if len(x.Args) != 1 || !r.isType(x.Fun) {
			return false
		}
		if _, basic := typeOf(r.info, x).Underlying().(*types.Basic); !basic {
			return false
		}
		return r.fillValue(x.Args[0], iv, reads)
	}
	return false
}
