package instrument

import (
	"go/ast"
	"go/token"
	"go/types"
)

// Receives. An expression <-ch becomes a hook that receives (recv); a
// receive that is a whole statement receives in the user's function
// instead (recvStmt, recvAssign), so that a goroutine blocked in it shows
// that function on top of its stack, as under go test -race (goleak's
// IgnoreTopFunction, runtime.Stack).

// recv instruments the receive <-ch (or v, ok := <-ch when commaOK).
func (r *rewriter) recv(u *ast.UnaryExpr, commaOK bool) {
	r.rd(u.X)
	lo, hi := r.span(u)
	fn := "Recv"
	if commaOK {
		fn = "Recv2"
	}
	switch {
	case r.timerChan(u.X):
		fn += "T"
	case r.ctxDone(u.X):
		fn += "Ctx"
	}
	ga := ""
	if fn == "Recv" || fn == "Recv2" {
		fn += "G"
		ga = ", " + r.gArg()
	}
	g := r.newGen(lo)
	g.lit(rtAlias + "." + fn + "(")
	r.piece(g, u.X)
	g.lit(", " + r.site(u.OpPos) + ga + ")")
	r.ed.collapse(lo, hi, g.end(hi))
}

// recvStmt rewrites the statement <-ch (see inFrameRecv). It reports
// whether it did: a timer's or a context's channel keeps its own hook.
func (r *rewriter) recvStmt(x *ast.ExprStmt, u *ast.UnaryExpr) bool {
	if r.timerChan(u.X) || r.ctxDone(u.X) {
		return false
	}
	r.inFrameRecv(x, u, "_", "", token.DEFINE)
	return true
}

// recvAssign rewrites v := <-ch, v, ok := <-ch, v = <-ch and v, ok = <-ch
// in a statement list (see inFrameRecv) when the variables are not shared
// (no write or allocation of theirs to record). It reports whether it did.
func (r *rewriter) recvAssign(x *ast.AssignStmt) bool {
	if x.Tok != token.DEFINE && x.Tok != token.ASSIGN || len(x.Rhs) != 1 || len(x.Lhs) > 2 {
		return false
	}
	u, ok := unparen(x.Rhs[0]).(*ast.UnaryExpr)
	if !ok || u.Op != token.ARROW || r.timerChan(u.X) || r.ctxDone(u.X) {
		return false
	}
	names := make([]string, 2)
	for i, l := range x.Lhs {
		id, ok := l.(*ast.Ident)
		if !ok {
			return false
		}
		v, _ := r.info.Defs[id].(*types.Var)
		if v == nil {
			v, _ = r.info.Uses[id].(*types.Var)
		}
		if id.Name != "_" && (v == nil || r.shared[v]) {
			return false
		}
		names[i] = id.Name
	}
	if names[1] == "" {
		names[1] = "_"
	}
	r.inFrameRecv(x, u, names[0], names[1], x.Tok)
	return true
}

// inFrameRecv rewrites the statement s, a receive u into v (and ok: "_"
// when not kept; "" for the statement <-ch) with tok := or =, as
//
//	c := ch; g := rt.RecvRangeG(c, site, G); v, ok := <-c; rt.RecvPostOK(c, site, g, ok)
//
// with = in a block of its own (it declares nothing, and its temporaries
// must not be jumped over by a goto), as is the statement <-ch.
func (r *rewriter) inFrameRecv(s ast.Stmt, u *ast.UnaryExpr, v, ok string, tok token.Token) {
	_, block := s.(*ast.ExprStmt)
	block = block || tok == token.ASSIGN
	op, okDecl := " := ", ""
	if ok == "_" {
		ok = r.tmp()
		if tok == token.ASSIGN {
			okDecl = "var " + ok + " bool; "
		}
	}
	if tok == token.ASSIGN {
		op = " = "
	}
	r.rd(u.X)
	lo, hi := r.span(s)
	site := r.site(u.OpPos)
	g := r.newGen(lo)
	c, pre := r.tmp(), r.tmp()
	if ok == "" {
		ok = r.tmp() // the statement <-ch: its temporaries in the order c, g, ok
	}
	open, close := "", ""
	if block {
		open, close = "{ ", " }"
	}
	g.lit(open + c + " := ")
	r.piece(g, u.X)
	g.lit("; " + pre + " := " + rtAlias + ".RecvRangeG(" + c + ", " + site + ", " + r.gArg() + "); " + okDecl + v + ", " + ok + op + "<-" + c +
		"; " + rtAlias + ".RecvPostOK(" + c + ", " + site + ", " + pre + ", " + ok + ")" + close)
	r.ed.collapse(lo, hi, g.end(hi))
}

// ctxDone reports whether ch is a call of a context's Done method.
func (r *rewriter) ctxDone(ch ast.Expr) bool {
	fn := r.calledFunc(ch)
	return fn != nil && fn.Name() == "Done" && fn.Pkg() != nil && fn.Pkg().Path() == "context"
}

// keptDone reports whether x, a call of a context's Done method, gives its
// channel to something other than a receive right there (a return, an
// assignment, an argument): a later receive from it cannot be known for a
// context's, so the channel is marked when it is made (rt.CtxDoneChan).
func (r *rewriter) keptDone(x *ast.CallExpr) bool {
	if !r.ctxDone(x) {
		return false
	}
	if r.doneRecvd == nil {
		r.doneRecvd = map[*ast.CallExpr]bool{}
		ast.Inspect(r.in.File, func(n ast.Node) bool {
			if u, ok := n.(*ast.UnaryExpr); ok && u.Op == token.ARROW {
				if c, ok := unparen(u.X).(*ast.CallExpr); ok {
					r.doneRecvd[c] = true
				}
			}
			return true
		})
	}
	return !r.doneRecvd[x]
}
