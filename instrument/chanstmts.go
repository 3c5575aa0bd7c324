package instrument

// Statements that synchronize: channel sends, go statements (the child's
// Begin, its arguments evaluated before the fork), select.

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// send instruments ch <- v as
//
//	{ c, t := ch, v; g := rt.SendPreG(c, site, rec, G); c <- t; rt.SendPost(c, site, g) }
//
// (G: the function's goroutine state, gArg; SendPreG hands it on as g.)
func (r *rewriter) send(x *ast.SendStmt, inList bool) {
	r.rd(x.Chan)
	r.rd(x.Value)
	if !inList {
		return
	}
	lo, hi := r.span(x)
	s := r.site(x.Arrow)
	g := r.newGen(lo)
	c := r.tmp()
	g.lit("{ " + c + " := ")
	r.piece(g, x.Chan)
	val := ""
	tok := r.tmp()
	pre := "; " + tok + " := " + rtAlias + ".SendPreG(" + c + ", " + s + ", " + r.syncFlag() + ", " + r.gArg() + "); " + c + " <- "
	if r.inlineValue(x.Value) {
		g.lit(pre)
		r.piece(g, x.Value)
	} else {
		val = r.tmp()
		g.lit("; " + val + " := ")
		r.piece(g, x.Value)
		g.lit(pre + val)
	}
	g.lit("; " + rtAlias + ".SendPost(" + c + ", " + s + ", " + tok + ") }")
	r.ed.collapse(lo, hi, g.end(hi))
}

// inlineValue reports whether e is better left in place than evaluated
// into a temporary: a constant or nil (no accesses), an untyped value
// whose type comes from its context, or a generic function whose
// instantiation does (inferredFunc).
func (r *rewriter) inlineValue(e ast.Expr) bool {
	tv, ok := r.info.Types[e]
	if !ok || r.cgoOpaque(e) { // a C value: its Go type is not known here
		return true
	}
	return tv.Value != nil || tv.IsNil() || isUntyped(tv.Type) || r.inferredFunc(e)
}

// inferredFunc reports whether e names a generic function, f or pkg.F,
// whose type arguments Go infers from the parameter it is passed to
// (maps.EqualFunc(a, b, slices.Equal)): in a temporary, or through a
// generic hook, it has no type to infer them from ("cannot use generic
// function without instantiation"; held-out google.golang.org/grpc's
// xds/grpcservice did not build). Evaluating it anywhere is the same.
func (r *rewriter) inferredFunc(e ast.Expr) bool {
	var id *ast.Ident
	switch x := unparen(e).(type) {
	case *ast.Ident:
		id = x
	case *ast.SelectorExpr:
		pkg, ok := unparen(x.X).(*ast.Ident)
		if !ok {
			return false
		}
		if _, ok := r.info.Uses[pkg].(*types.PkgName); !ok {
			return false
		}
		id = x.Sel
	default:
		return false
	}
	if _, ok := r.info.Uses[id].(*types.Func); !ok {
		return false
	}
	_, ok := r.info.Instances[id]
	return ok
}

func isUntyped(t types.Type) bool {
	b, ok := t.(*types.Basic)
	return ok && b.Info()&types.IsUntyped != 0
}

// goStmt rewrites go f(a, b) as
//
//	{ f1, a1, b1 := f, a, b; c := rt.Fork(site)
//	  go func() { rt.Begin(c); defer rt.End(c); f1(a1, b1); c.Ok() }() }
//
// evaluating the function value and the arguments before the fork, as the
// go statement does. Package-level functions, builtins, function literals
// and constant arguments stay in place.
func (r *rewriter) goStmt(x *ast.GoStmt) {
	call := x.Call
	lo, hi := r.span(x)
	site := r.site(x.Go)
	g := r.newGen(lo)
	var names []string
	var vals []ast.Node
	var valTexts []string // for hook arguments not from the source
	var callee string
	var args []string
	var dots string
	var c string        // the child's variable, set early for a literal
	var spread ast.Expr // the one argument, a call of several results
	var spreadNames []string
	if call.Ellipsis.IsValid() {
		dots = "..."
	}

	if hk, recv, hargs, ok := r.hookCall(call, true); ok {
		// A hooked call: its receiver and arguments are evaluated now.
		callee = hookName(hk)
		if hk.sited {
			callee += "(" + site + ", true)" // rec: as below
		}
		if recv != "" {
			t := r.tmp()
			names = append(names, t)
			vals = append(vals, nil)
			valTexts = append(valTexts, recv)
			args = append(args, t)
		}
		for _, a := range hargs {
			if spreadArg(r.info, call) {
				spread, spreadNames = a, r.tupleTemps(a) // bound after the receiver (below)
				args = append(args, spreadNames...)
				continue
			}
			if r.inlineValue(a) {
				args = append(args, r.text(a))
				continue
			}
			t := r.tmp()
			names = append(names, t)
			vals = append(vals, a)
			valTexts = append(valTexts, "")
			args = append(args, t)
		}
		if !hk.noSite && !hk.sited {
			args = append(args, site)
		}
		if hk.rec && !hk.sited {
			args = append(args, "true") // in the new goroutine, outside every frame
		}
		dots = ""
		if call.Ellipsis.IsValid() {
			args[len(args)-1] += "..."
		}
	} else {
		fun := unparen(call.Fun)
		if lit, ok := fun.(*ast.FuncLit); ok {
			// The goroutine runs the literal itself, which begins with
			// its Begin (testframes.go).
			c = r.tmp()
			if r.litPre == nil {
				r.litPre = map[*ast.FuncLit]string{}
			}
			r.litPre[lit] = rtAlias + ".Begin(" + c + "); defer " + rtAlias + ".GoEnd(" + c + "); "
		}
		r.rd(call.Fun)
		switch {
		case r.isBuiltin(fun) && identOf(fun).Name == "close":
			callee = rtAlias + ".Close"
		case r.isBuiltin(fun), r.isFuncName(fun):
			callee = r.text(call.Fun)
		case isFuncLit(fun):
			callee = r.text(call.Fun)
		default:
			t := r.tmp()
			names = append(names, t)
			vals = append(vals, call.Fun)
			valTexts = append(valTexts, "")
			callee = t
			if isCancelFunc(typeOf(r.info, call.Fun)) {
				// Called in the new goroutine: it releases there.
				callee = rtAlias + ".CtxCancel(" + t + ", " + r.site(call.Pos()) + ")"
			}
		}
		sig, _ := core(typeOf(r.info, call.Fun)).(*types.Signature)
		if spreadArg(r.info, call) {
			// go f(g()): g's results, bound on their own (a tuple
			// cannot share an assignment), after the function value.
			spread, spreadNames = call.Args[0], r.tupleTemps(call.Args[0])
			r.rd(spread)
			args = append(args, spreadNames...)
		}
		for i, a := range call.Args {
			if spread != nil {
				break
			}
			r.rd(a)
			if r.inlineValue(a) && !r.untypedToParam(a, sig, i) {
				args = append(args, r.text(a))
				continue
			}
			t := r.tmp()
			names = append(names, t)
			vals = append(vals, a)
			valTexts = append(valTexts, "")
			args = append(args, t)
		}
	}

	g.lit("{ ")
	if len(names) > 0 {
		g.lit(strings.Join(names, ", ") + " := ")
		for i, v := range vals {
			if i > 0 {
				g.lit(", ")
			}
			if v == nil {
				g.lit(valTexts[i])
			} else {
				r.piece(g, v)
			}
		}
		g.lit("; ")
	}
	if spread != nil {
		g.lit(strings.Join(spreadNames, ", ") + " := ")
		r.piece(g, spread)
		g.lit("; ")
	}
	if c != "" {
		// A literal: go lit(args), the literal rendered with its lines.
		g.lit(c + " := " + rtAlias + ".Fork(" + site + "); go ")
		r.piece(g, call.Fun)
		g.lit("(" + strings.Join(args, ", ") + dots + ") }")
		r.ed.collapse(lo, hi, g.end(hi))
		return
	}
	c = r.tmp()
	g.lit(c + " := " + rtAlias + ".Fork(" + site + "); go func() { " + rtAlias + ".Begin(" + c + "); defer " + rtAlias + ".End(" + c + "); ")
	callee, after := r.goIOEdges(call, callee)
	g.lit(callee)
	if callee == rtAlias+".Close" {
		args = append(args, site, "true")
	}
	g.lit("(" + strings.Join(args, ", ") + dots + "); " + after + c + ".Ok() }() }")
	r.ed.collapse(lo, hi, g.end(hi))
}

// goIOEdges gives an I/O call that a go statement runs, go io.Copy(dst,
// src), the edges callExpr gives one in place, inside the new goroutine: a
// release before the call (the callee passed through rt's Before hook, as
// the arguments were evaluated by the parent) and an acquire after it,
// returned as a statement. The Go race detector sees the write and read
// system calls in the new goroutine (syscall's ioSync), ordered after the
// go statement (held-out google.golang.org/grpc: a test proxy stores its
// backend connection, then starts go io.Copy(p.in, p.out); the cleanup
// that reads the field runs after the client read what the copy wrote).
// A generic callee is left alone: its instantiation is inferred from the
// arguments, which the hook would hide.
func (r *rewriter) goIOEdges(call *ast.CallExpr, callee string) (string, string) {
	fn := r.calledFunc(call) // nil for a literal and a function variable (a CancelFunc)
	if fn == nil {
		return callee, ""
	}
	if sig, ok := fn.Type().(*types.Signature); !ok || sig.TypeParams().Len() > 0 {
		return callee, ""
	}
	write, read, sys, readSys := r.ioEdges(fn)
	if pre := ioBeforeHook(write, read, sys); pre != "" {
		callee = rtAlias + "." + pre + "Before(" + callee + ", " + r.site(call.Pos()) + ")"
	}
	after := ""
	if isPipeWrite(fn) {
		after = rtAlias + ".PipeWritten(" + r.site(call.Pos()) + "); "
	} else if read {
		after = rtAlias + "." + readHook(readSys) + "(" + r.site(call.Pos()) + "); "
	}
	return callee, after
}

// untypedToParam reports whether an untyped, non-constant argument (a
// comparison, say) can go through a temporary: its default type is the
// parameter's type.
func (r *rewriter) untypedToParam(a ast.Expr, sig *types.Signature, i int) bool {
	tv, ok := r.info.Types[a]
	if !ok || tv.Value != nil || tv.IsNil() || !isUntyped(tv.Type) || sig == nil {
		return false
	}
	var pt types.Type
	n := sig.Params().Len()
	switch {
	case sig.Variadic() && i >= n-1:
		if s, ok := sig.Params().At(n - 1).Type().(*types.Slice); ok {
			pt = s.Elem()
		}
	case i < n:
		pt = sig.Params().At(i).Type()
	}
	return pt != nil && types.Identical(pt, types.Default(tv.Type))
}

func isFuncLit(e ast.Expr) bool {
	_, ok := e.(*ast.FuncLit)
	return ok
}

// selectStmt rewrites a select with channel cases: the channels and sent
// values are evaluated into temporaries (in source order, as select does),
// every case's pre-operation is recorded, and each case records its
// post-operation first when chosen.
func (r *rewriter) selectStmt(x *ast.SelectStmt, label *ast.LabeledStmt) {
	cases := r.selectCases(x)
	// A select that a goto jumps to keeps its label on a switch with one
	// default clause that holds the prelude and the select: the goto runs
	// the prelude again, as it evaluates the channels again, a break that
	// names the label leaves the switch where it left the select, and an
	// unlabelled continue or break means what it meant (fasthttp's
	// pipeline writer, `againChR: select { case chR <- w: ...`).
	outerLabel := label != nil && r.gotoLabels[r.labelObj(label)]
	nch := 0
	for _, k := range cases {
		if k.cc.Comm != nil {
			nch++
		}
	}
	if nch == 0 {
		return
	}
	lo, hi := r.outerSpan(x, label)
	g := r.newGen(lo)
	if outerLabel {
		g.lit(r.labelText(label) + "switch { default: ")
	} else {
		g.lit("{ ")
	}
	r.selectPrelude(g, cases, nch)
	if !outerLabel {
		g.lit(r.labelText(label))
	}
	slo, _ := r.span(x)
	blo, _ := r.span(x.Body)
	g.piece(slo, r.ed.render(slo, blo+1)) // "select {"
	_, shi := r.span(x)
	for ci, k := range cases {
		clo, _ := r.span(k.cc)
		// The clause runs to the next one, so that comments between
		// clauses are kept.
		chi := shi - 1
		if ci+1 < len(cases) {
			chi, _ = r.span(cases[ci+1].cc)
		}
		colon := r.off(k.cc.Colon)
		r.selectClauseHead(g, k, clo, colon)
		if colon+1 < chi {
			g.piece(colon+1, r.ed.render(colon+1, chi))
		}
	}
	g.piece(shi-1, "}")
	g.lit(" }")
	r.ed.collapse(lo, hi, g.end(hi))
}

// selectCase is one clause of a select that selectStmt rewrites: its
// operation, its site, and the temporaries the prelude evaluates its
// channel and sent value into.
type selectCase struct {
	cc      *ast.CommClause
	ch, val string
	recv    *ast.UnaryExpr
	send    *ast.SendStmt
	site    string
}

// selectCases instruments the clauses of the select x (their operands,
// the variables they assign or declare, their bodies) and returns them,
// with the sites of their channel operations.
func (r *rewriter) selectCases(x *ast.SelectStmt) []selectCase {
	var cases []selectCase
	for _, c := range x.Body.List {
		cc := c.(*ast.CommClause)
		k := selectCase{cc: cc}
		switch s := cc.Comm.(type) {
		case *ast.SendStmt:
			k.send = s
			r.rd(s.Chan)
			r.rd(s.Value)
			k.site = r.site(s.Arrow)
		case *ast.ExprStmt:
			k.recv = unparen(s.X).(*ast.UnaryExpr)
		case *ast.AssignStmt:
			k.recv = unparen(s.Rhs[0]).(*ast.UnaryExpr)
			if s.Tok == token.ASSIGN {
				for _, l := range s.Lhs {
					r.lv(l, "W")
				}
			} else {
				for _, l := range s.Lhs {
					if v, _ := r.info.Defs[l.(*ast.Ident)].(*types.Var); v != nil {
						r.allocAt(r.off(cc.Colon)+1, v, l.Pos())
					}
				}
			}
		}
		if k.recv != nil {
			r.rd(k.recv.X)
			k.site = r.site(k.recv.OpPos)
		}
		r.block(cc.Body)
		cases = append(cases, k)
	}
	return cases
}

// selectPrelude writes what runs before the select: the channels and sent
// values evaluated into temporaries (set in cases), every case's
// pre-operation, and the scheduler's choice of the case that proceeds (nch
// of the cases have channels).
func (r *rewriter) selectPrelude(g *gen, cases []selectCase, nch int) {
	for i := range cases {
		k := &cases[i]
		switch {
		case k.send != nil:
			k.ch = r.tmp()
			g.lit(k.ch + " := ")
			r.piece(g, k.send.Chan)
			g.lit("; ")
			if !r.inlineValue(k.send.Value) {
				k.val = r.tmp()
				g.lit(k.val + " := ")
				r.piece(g, k.send.Value)
				g.lit("; ")
			}
		case k.recv != nil:
			k.ch = r.tmp()
			g.lit(k.ch + " := ")
			if r.ctxDone(k.recv.X) {
				// What the Done call did inside package context
				// (rt.ctxDoneCalled), whichever case proceeds.
				g.lit(rtAlias + ".CtxDoneCall(")
				r.piece(g, k.recv.X)
				g.lit(", " + k.site + "); ")
				continue
			}
			r.piece(g, k.recv.X)
			g.lit("; ")
		}
	}
	for _, k := range cases {
		switch {
		case k.send != nil:
			g.lit(rtAlias + ".SelectSendPre(" + k.ch + ", " + k.site + ", " + r.syncFlag() + "); ")
		case k.recv != nil:
			g.lit(rtAlias + ".RecvPre(" + k.ch + ", " + k.site + "); ")
		}
	}
	// Under rt's controlled scheduler, SelectWait decides which case
	// proceeds (or parks the goroutine): the others' channels become nil.
	def := "false"
	if nch < len(cases) {
		def = "true"
	}
	pick := r.tmp()
	g.lit(pick + " := " + rtAlias + ".SelectWait(" + def + "); ")
	ci := 0
	for _, k := range cases {
		if k.ch != "" {
			g.lit(k.ch + " = " + rtAlias + ".SelectCase(" + k.ch + ", " + strconv.Itoa(ci) + ", " + pick + "); ")
			ci++
		}
	}
}

// selectClauseHead writes the clause k's head, from its start clo to its
// colon: a default clause's as written, a channel case's operating on the
// temporaries, followed by its post-operation.
func (r *rewriter) selectClauseHead(g *gen, k selectCase, clo, colon int) {
	switch {
	case k.cc.Comm == nil:
		g.piece(clo, r.ed.render(clo, colon+1))
	case k.send != nil:
		g.piece(clo, "case ")
		if k.val != "" {
			g.lit(k.ch + " <- " + k.val)
		} else {
			g.lit(k.ch + " <- ")
			r.piece(g, k.send.Value)
		}
		g.lit(": " + rtAlias + ".SelectSendPost(" + k.ch + ", " + k.site + ");")
	default:
		g.piece(clo, "case ")
		r.selectRecvHead(g, k)
	}
}

// selectRecvHead writes a receive case's operation on its temporary, after
// "case ", with the receive's post-operation (and a timer's or context's
// event) first in the clause; values received into existing variables go
// through temporaries, assigned after it.
func (r *rewriter) selectRecvHead(g *gen, k selectCase) {
	post := rtAlias + ".RecvPost(" + k.ch + ", " + k.site + ", nil);"
	if r.timerChan(k.recv.X) {
		post += " " + rtAlias + ".TimerFired(" + k.site + ");"
	}
	if r.ctxDone(k.recv.X) {
		post += " " + rtAlias + ".CtxDoneOf(" + k.ch + ", " + k.site + ");"
	}
	switch s := k.cc.Comm.(type) {
	case *ast.ExprStmt:
		g.lit("<-" + k.ch + ": " + post)
	case *ast.AssignStmt:
		if s.Tok == token.DEFINE {
			for i, l := range s.Lhs {
				if i > 0 {
					g.lit(", ")
				}
				r.piece(g, l)
			}
			g.lit(" := <-" + k.ch + ": " + post)
		} else {
			tmps := make([]string, len(s.Lhs))
			for i := range tmps {
				tmps[i] = r.tmp()
			}
			g.lit(strings.Join(tmps, ", ") + " := <-" + k.ch + ": " + post + " ")
			for i, l := range s.Lhs {
				if i > 0 {
					g.lit(", ")
				}
				r.piece(g, l)
			}
			g.lit(" = " + strings.Join(tmps, ", ") + ";")
		}
	}
}
