package instrument

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// The rewriter's assignments: the right-hand side read before the
// left-hand side is written, hoisted where evaluation order needs it.

// recorded reports whether writing e is recorded.
func (r *rewriter) recorded(e ast.Expr) bool {
	if ix, ok := unparen(e).(*ast.IndexExpr); ok && isMap(typeOf(r.info, ix.X)) {
		return true
	}
	return r.sharedLoc(e)
}

func (r *rewriter) assign(x *ast.AssignStmt, inList bool) {
	commaOK := len(x.Lhs) == 2 && len(x.Rhs) == 1
	rhs := func() {
		if commaOK {
			if u, ok := unparen(x.Rhs[0]).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
				r.recv(u, true)
				return
			}
		}
		for i, e := range x.Rhs {
			if x.Tok == token.ASSIGN && len(x.Lhs) == len(x.Rhs) {
				r.cancelStored(e, typeOf(r.info, x.Lhs[i])) // outside rd's hook
			}
			r.rd(e)
		}
	}
	switch x.Tok {
	case token.DEFINE:
		rhs()
		if !inList {
			return
		}
		// Variables redeclared by := are assigned; escaping variables it
		// declares are new objects.
		for _, l := range x.Lhs {
			id, ok := l.(*ast.Ident)
			if !ok || id.Name == "_" {
				continue
			}
			lo, hi := r.span(x)
			if v, ok := r.info.Defs[id].(*types.Var); ok {
				if r.shared[v] {
					r.ed.appendAt(hi, "; "+r.allocVar("Alloc", id.Name, id.Pos()), lo, hi)
				}
				continue
			}
			if r.info.Defs[id] != nil || !r.sharedIdent(id) {
				continue
			}
			r.ed.appendAt(hi, "; "+rtAlias+".W(&"+id.Name+", "+r.asite(id.Pos())+")", lo, hi)
		}
		return
	case token.ASSIGN:
		kind := "W"
		hoist := inList
		anyRec := false
		for _, l := range x.Lhs {
			if r.recorded(l) {
				anyRec = true
			}
			if containsCall(r.info, l) {
				hoist = false
			}
		}
		anyCall := false
		for _, e := range x.Rhs {
			if containsCall(r.info, e) {
				anyCall = true
			}
			if tv, ok := r.info.Types[e]; ok && len(x.Rhs) == len(x.Lhs) && isUntyped(tv.Type) {
				hoist = false
			}
			if name, ctx := r.contextTyped(e); ctx && name == "" {
				hoist = false
			}
		}
		hoist = hoist && anyRec && anyCall
		for _, l := range x.Lhs {
			if r.headerData(l) {
				r.headerDataWrite(x, l, "W", inList)
				continue
			}
			if anyCall && (r.ifInit == ast.Stmt(x) || inList && !hoist) && r.writeAfter(l, kind) {
				continue
			}
			r.lv(l, kind)
		}
		rhs()
		if hoist {
			r.hoistAssign(x)
		}
	default: // op=
		if r.headerData(x.Lhs[0]) {
			r.headerDataWrite(x, x.Lhs[0], "RW", inList)
			r.rd(x.Rhs[0])
			return
		}
		r.lv(x.Lhs[0], "RW")
		r.rd(x.Rhs[0])
		if inList && r.recorded(x.Lhs[0]) && containsCall(r.info, x.Rhs[0]) && !containsCall(r.info, x.Lhs[0]) {
			if name, ctx := r.contextTyped(x.Rhs[0]); ctx && name == "" {
				return
			}
			if tv, ok := r.info.Types[x.Rhs[0]]; ok && !isUntyped(tv.Type) {
				r.hoistAssign(x)
			}
		}
	}
}

// writeAfter records the write of l, a variable that an assignment of
// the results of a call or receive writes, among the events after the
// statement, and reports whether it did: after a statement of a list, or
// for an if's or a switch's init statement before its condition or tag
// (initAllocs); a hoisted assignment (hoistAssign) needs none. The write happens after
// the call returns: recorded as the left-hand side's operand, it came
// before the call, and so before what the call waited for (`if err =
// serve(lis); err != nil` in a goroutine, where serve returns after
// another goroutine's `conn, err = net.Dial(...)` and lis.Close();
// sourcegraph/jsonrpc2's tests, corpus session 54). Only a plain
// variable: another location's operands would be evaluated again.
func (r *rewriter) writeAfter(l ast.Expr, kind string) bool {
	id, ok := unparen(l).(*ast.Ident)
	if !ok || !r.sharedIdent(id) {
		return false
	}
	t := typeOf(r.info, id)
	if whole(t) {
		kind += "1"
	}
	r.after = append(r.after, rtAlias+"."+kind+"(&"+id.Name+", "+r.valueSite(t, id.Pos())+")")
	return true
}

// hoistAssign rewrites l1, l2 op r1, r2 (already instrumented) as
//
//	{ t1, t2 := r1, r2; l1, l2 op t1, t2 }
//
// so that the writes are recorded after the right-hand side's calls and
// receives, where they happen. The left-hand side has no calls, so
// evaluating it after the right-hand side changes nothing.
func (r *rewriter) hoistAssign(x *ast.AssignStmt) {
	lo, hi := r.span(x)
	g := r.newGen(lo)
	// A constant stays where it is: in a temporary it would take its
	// default type (sn[0], sn[k] = f(), 0xff: 0xff is a byte, not an int).
	spread := len(x.Rhs) != len(x.Lhs) // l1, l2 = f()
	inline := func(e ast.Expr) bool { return !spread && r.inlineValue(e) }
	var tmps []string
	for _, e := range x.Rhs {
		if !inline(e) {
			tmps = append(tmps, r.tmp())
		}
	}
	if spread {
		for len(tmps) < len(x.Lhs) {
			tmps = append(tmps, r.tmp())
		}
	}
	if len(tmps) == 0 {
		return // every value stays in place (C's, cgoOpaque)
	}
	g.lit("{ " + strings.Join(tmps, ", ") + " := ")
	k := 0
	for _, e := range x.Rhs {
		if inline(e) {
			continue
		}
		if k > 0 {
			g.lit(", ")
		}
		k++
		r.typedPiece(g, e)
	}
	g.lit("; ")
	for i, e := range x.Lhs {
		if i > 0 {
			g.lit(", ")
		}
		r.piece(g, e)
	}
	g.lit(" " + x.Tok.String() + " ")
	if spread {
		g.lit(strings.Join(tmps, ", "))
	} else {
		k = 0
		for i, e := range x.Rhs {
			if i > 0 {
				g.lit(", ")
			}
			if inline(e) {
				r.piece(g, e)
				continue
			}
			g.lit(tmps[k])
			k++
		}
	}
	g.lit(" }")
	r.ed.collapse(lo, hi, g.end(hi))
}

// headerData reports whether e is the Data field of a reflect.SliceHeader
// or reflect.StringHeader (or of one a pointer points to): the compiler
// takes an assignment to it as a store of the pointer it holds, with a
// write barrier, and lets the memory it points to escape
// (ir.IsReflectHeaderDataField), which keeps that memory alive while the
// header's slice or string uses it. Written through rt's hook
// (*rt.W1(&h.Data, ...) = p) the store is an unsafe uintptr store: the
// memory stays on the stack and is gone when the function returns
// (held-out dop251/goja's unistring.FromUtf16 returned strings of freed
// stack memory: 218 of its 1050 tests failed or were lost under racekit).
func (r *rewriter) headerData(e ast.Expr) bool {
	sel, ok := unparen(e).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Data" {
		return false
	}
	t := typeOf(r.info, sel.X)
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != "reflect" {
		return false
	}
	return n.Obj().Name() == "SliceHeader" || n.Obj().Name() == "StringHeader"
}

// headerDataWrite instruments assignment x to a header's Data field l
// (headerData) as the compiler needs it: l stays the assignment's operand,
// its own operands instrumented (loc), and its write is recorded by a hook
// call of its own before the statement, where the hook of the operand
// would have run; only for a statement of a list (there is no place before
// an if's init statement) and an l without calls (evaluated twice).
func (r *rewriter) headerDataWrite(x *ast.AssignStmt, l ast.Expr, kind string, inList bool) {
	if !inList || containsCall(r.info, l) || !r.sharedLoc(l) {
		r.loc(l)
		return
	}
	lo, hi := r.span(l)
	text := string(r.ed.src[lo:hi])
	r.loc(l)
	slo, shi := r.span(x)
	r.ed.insertAt(slo, rtAlias+"."+kind+"1(&"+text+", "+r.valueSite(typeOf(r.info, l), l.Pos())+"); ", slo, shi)
}
