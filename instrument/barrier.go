package instrument

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// BarrierPairs (RDIT, thesis chapter 4): a call from traced code into
// code that is not traced becomes
//
//	rt.CallBegin(site, operands...); f(args); rt.CallEnd(site)
//
// where the operands are the receiver and the arguments that may hold
// pointers; rt records a MethodBegin with D, the addresses they reach, and
// a MethodEnd (rt/barrier.go). Which calls qualify:
//
//   - a call of a function or a concrete method, known statically, declared
//     in a package that is not traced (FileInput.Traced): the standard
//     library, excluded packages, dependencies not included;
//   - not replaced or bracketed by a hook already (methodHooks, funcHooks,
//     timers, I/O calls, log.Fatal), and not in a package whose
//     synchronization rt models itself (noBarrierPkgs);
//   - with some operand whose type may hold a pointer (a pointer, slice,
//     map, channel or interface, or a struct or array holding one): the
//     others are pure functions of values (strconv.Itoa, math.Sqrt,
//     strings.Split), whose D is empty and which cannot synchronize with
//     anything. A func value does not count: a closure's captures are
//     opaque to the runtime's walk, and a traced callback records its own
//     events inside the BarrierPair.
//
// Interface method calls and calls of func values are left alone: the
// target may be traced code, which records its own events (a BarrierPair
// around it would only hide races between its callers); when it is not,
// what it does stays unseen, as before.
//
// Bracketing keeps the evaluation order and evaluates everything once:
//
//   - An operand is simple when evaluating it again has no effect and
//     gives the same value: a local variable that no other goroutine or
//     closure can reach, the address of a variable (&x, also for x.f.g
//     through no pointer), a constant. When every operand holding pointers
//     is simple, CallBegin gets them again, before the statement (call in
//     a statement: f(x); x := f(y); a, b = f(y); x op= f(y)) or as
//     rt.CallEnd1(rt.CallBegin(site, ops...), f(ops...)) inside an
//     expression (one result: Go evaluates the two calls left to right).
//   - When exactly one operand holding pointers is not simple, it records
//     the MethodBegin as it is evaluated: rt.CallArg(v, site, ops...) is
//     v (for an addressable receiver, (*rt.CallArg(&x, ...)), so that a
//     pointer method still gets x). The operands before it are simple or
//     hold no pointers; those after it are evaluated before the call, so
//     the call happens between the hooks. In a statement, rt.CallEnd
//     follows the statement; in an expression (one result),
//     rt.CallEnd1V(f(..., rt.CallArg(v, ...), ...), site).
//   - With two or more, in a statement, the receiver and the arguments are
//     evaluated first into temporaries in their order:
//     { t0, t1 := x, a; rt.CallBegin(site, t0, t1); t0.M(t1); rt.CallEnd(site) }
//     (without the braces for :=, whose variables must stay in scope, and
//     then not in files with goto, which may not jump over them).
//   - Left unbracketed: such calls inside expressions, calls in go and
//     defer statements, method expressions (T.M(x)), statements outside a
//     statement list whose call has no result (a for post statement),
//     calls with several results inside an expression (return f(p)), and
//     calls whose argument is another call's results (f(g())).
//
// A call that panics skips CallEnd: its BarrierPair stays open, which
// detectors read as extending to the end of the trace (more ordered, never
// a false race).

// noBarrierPkgs are untraced packages whose calls get no BarrierPair: rt
// models their synchronization (sync, sync/atomic, context, time's
// timers, os/signal, the testing framework through rttest), or they do not
// touch the program's memory in ways D could describe (runtime, unsafe).
var noBarrierPkgs = map[string]bool{
	"sync": true, "sync/atomic": true, "context": true, "time": true, "os/signal": true,
	"testing": true, "runtime": true, "unsafe": true,
}

// bpPlan is how one call is bracketed.
type bpPlan struct {
	call  *ast.CallExpr
	site  string
	ops   []string // CallBegin's operands (simple mode)
	temps bool     // operands through temporaries (statement only)

	recv     ast.Expr   // the receiver of a method call, or nil
	recvAddr bool       // it is passed as &recv
	wrap     []ast.Expr // operands that hold pointers and are not simple
	sel      string     // the method's name

	stmtLo int    // temps mode: where the statement starts
	prefix string // temps mode: the temporaries and CallBegin, built in call
}

// traced reports whether calls into package path are traced.
func (r *rewriter) traced(path string) bool {
	if r.in.Traced != nil {
		return r.in.Traced(strings.TrimSuffix(path, "_test"))
	}
	return strings.TrimSuffix(path, "_test") == strings.TrimSuffix(r.in.Pkg.Path(), "_test")
}

// barrierPlan decides whether call is a call into untraced code that gets
// a BarrierPair, and how (stmt: the call is a whole statement, or the
// right-hand side of one, in a statement list).
func (r *rewriter) barrierPlan(call *ast.CallExpr, stmt bool) *bpPlan {
	fn := r.calledFunc(call)
	if fn == nil || fn.Pkg() == nil {
		return nil
	}
	path := fn.Pkg().Path()
	if r.traced(path) || noBarrierPkgs[path] {
		return nil
	}
	fk, mk := funcKey(fn), methodKey(fn)
	if _, ok := methodHooks[mk]; ok && mk != "" {
		return nil
	}
	if _, ok := funcHooks[fk]; ok && mk == "" {
		return nil
	}
	if timerCalls[fk] || timerCalls[mk] || isLogFatal(fk) || isLogFatal(mk) {
		return nil
	}
	if w, rd := ioKind(fn); w || rd {
		return nil
	}
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil {
		return nil
	}
	if sig.Recv() != nil && types.IsInterface(sig.Recv().Type()) {
		return nil // dynamic dispatch: the target may be traced
	}
	p := &bpPlan{call: call}
	anyPtr := false
	// The receiver of a method value call x.M(args).
	fun := unparen(call.Fun)
	if se, ok := fun.(*ast.SelectorExpr); ok {
		if sel := r.info.Selections[se]; sel != nil && sel.Kind() == types.MethodVal {
			p.recv, p.sel = se.X, se.Sel.Name
			xt := typeOf(r.info, se.X)
			switch {
			case isPointer(xt):
				anyPtr = true
				if op, ok := r.simpleOperand(se.X); ok {
					p.ops = append(p.ops, op)
				} else {

					p.wrap = append(p.wrap, se.X)
				}
			case r.addressable(se.X):
				// The callee gets &x (a pointer method, maybe of an
				// embedded field) or a copy of x (read by the hidden
				// code): D is what &x reaches.
				p.recvAddr = true
				if recvIsPointer(sel) || len(sel.Index()) > 1 || hasPointers(xt) {
					anyPtr = true
					if r.simpleAddr(se.X) {
						p.ops = append(p.ops, "&"+r.text(se.X))
					} else {

						p.wrap = append(p.wrap, se.X)
					}
				}
			case hasPointers(xt):
				// A value, such as a call's result: copied.
				anyPtr = true
				p.wrap = append(p.wrap, se.X)
			}
		}
	}
	for _, a := range call.Args {
		t := typeOf(r.info, a)
		if tu, ok := t.(*types.Tuple); ok {
			// f(g()): g's results cannot be taken apart here.
			if hasPointers(tu) {
				return nil
			}
			continue
		}
		if !hasPointers(t) {
			continue
		}
		anyPtr = true
		if op, ok := r.simpleOperand(a); ok {
			if op != "" {
				p.ops = append(p.ops, op)
			}
		} else {

			p.wrap = append(p.wrap, a)
		}
	}
	if !anyPtr {
		return nil
	}
	if len(p.wrap) >= 2 {
		if !stmt {
			return nil
		}
		// An untyped argument that is not a constant (a comparison) would
		// take its default type in a temporary.
		for i, a := range call.Args {
			if tv, ok := r.info.Types[a]; ok && tv.Value == nil && !tv.IsNil() && isUntyped(tv.Type) && !r.untypedToParam(a, sig, i) {
				return nil
			}
		}
		p.temps = true
		p.ops = nil
	}
	p.site = r.site(call.Pos())
	return p
}

// simpleOperand reports whether e can be evaluated again for CallBegin
// (see simple above), and its text ("" for nil and constants).
func (r *rewriter) simpleOperand(e ast.Expr) (string, bool) {
	if tv, ok := r.info.Types[e]; ok && (tv.Value != nil || tv.IsNil()) {
		return "", true
	}
	switch x := unparen(e).(type) {
	case *ast.Ident:
		if v, ok := r.info.Uses[x].(*types.Var); ok && !isPackageVar(v) && !r.shared[v] && !v.IsField() {
			return x.Name, true
		}
	case *ast.UnaryExpr:
		if x.Op == token.AND && r.simpleAddr(x.X) {
			return "&" + r.text(x.X), true
		}
	case *ast.FuncLit:
		return "", true // opaque to the walk; evaluating it has no effect
	}
	return "", false
}

// simpleAddr reports whether &e has no effect and a stable value: e is a
// variable, or a field of one reached through no pointer.
func (r *rewriter) simpleAddr(e ast.Expr) bool {
	switch x := unparen(e).(type) {
	case *ast.Ident:
		v, ok := r.info.Uses[x].(*types.Var)
		return ok && !v.IsField()
	case *ast.SelectorExpr:
		if r.pkgVarSel(x) {
			return true
		}
		sel := r.info.Selections[x]
		if sel == nil || sel.Kind() != types.FieldVal || sel.Indirect() || isPointer(typeOf(r.info, x.X)) {
			return false
		}
		return r.simpleAddr(x.X)
	}
	return false
}

// addressable reports whether &e is allowed: a variable, a pointer
// indirection, a field of an addressable struct or through a pointer, an
// element of a slice or of an addressable array.
func (r *rewriter) addressable(e ast.Expr) bool {
	switch x := unparen(e).(type) {
	case *ast.Ident:
		v, ok := r.info.Uses[x].(*types.Var)
		return ok && !v.IsField()
	case *ast.StarExpr:
		return !r.isType(x)
	case *ast.SelectorExpr:
		if r.pkgVarSel(x) {
			return true
		}
		sel := r.info.Selections[x]
		if sel == nil || sel.Kind() != types.FieldVal {
			return false
		}
		return sel.Indirect() || isPointer(typeOf(r.info, x.X)) || r.addressable(x.X)
	case *ast.IndexExpr:
		t := typeOf(r.info, x.X)
		switch {
		case isSlice(t), isPtrToArray(t):
			return true
		case isArray(t):
			return r.addressable(x.X)
		}
	}
	return false
}

// hasPointers reports whether values of type t may reach memory the
// runtime's walk follows: pointers, slices, maps, channels, interfaces,
// and structs and arrays holding one (strings are immutable; funcs and
// unsafe.Pointer are opaque to it).
func hasPointers(t types.Type) bool {
	return hasPointersSeen(t, map[types.Type]bool{})
}

func hasPointersSeen(t types.Type, seen map[types.Type]bool) bool {
	if t == nil {
		return false
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch u := t.Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Map, *types.Chan, *types.Interface:
		return true
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			if hasPointersSeen(u.Field(i).Type(), seen) {
				return true
			}
		}
	case *types.Array:
		return u.Len() > 0 && hasPointersSeen(u.Elem(), seen)
	case *types.Tuple:
		for i := 0; i < u.Len(); i++ {
			if hasPointersSeen(u.At(i).Type(), seen) {
				return true
			}
		}
	}
	return false
}

// stmtBarrier plans the BarrierPair of a statement in a statement list
// whose expression (or single right-hand side) is e, before the statement
// is instrumented.
func (r *rewriter) stmtBarrier(s ast.Stmt, e ast.Expr, inList bool) *bpPlan {
	if !inList {
		return nil
	}
	call, ok := unparen(e).(*ast.CallExpr)
	if !ok {
		return nil
	}
	p := r.barrierPlan(call, true)
	if p == nil {
		return nil
	}
	if a, ok := s.(*ast.AssignStmt); ok && a.Tok == token.DEFINE && p.temps && len(r.gotoLabels) > 0 {
		return nil
	}
	p.stmtLo = r.off(s.Pos())
	r.stmtCalls[call] = p
	return p
}

// finishStmtBarrier brackets statement s (instrumented) with CallBegin and
// CallEnd.
func (r *rewriter) finishStmtBarrier(p *bpPlan, s ast.Stmt) {
	if p == nil {
		return
	}
	lo, hi := r.span(s)
	end := "; " + rtAlias + ".CallEnd(" + p.site + ")"
	if len(p.wrap) == 1 {
		r.ed.appendAt(hi, end, lo, hi) // CallArg begins it
		return
	}
	if !p.temps {
		r.ed.insertAt(lo, rtAlias+".CallBegin("+strings.Join(append([]string{p.site}, p.ops...), ", ")+"); ", lo, hi)
		r.ed.appendAt(hi, end, lo, hi)
		return
	}
	if a, ok := s.(*ast.AssignStmt); ok && a.Tok == token.DEFINE {
		r.ed.insertAt(lo, p.prefix, lo, hi)
		r.ed.appendAt(hi, end, lo, hi)
		return
	}
	r.ed.insertAt(lo, "{ "+p.prefix, lo, hi)
	r.ed.appendAt(hi, end+" }", lo, hi)
}

// barrierCall brackets the call x (its receiver and arguments already
// instrumented), at the end of call: a statement's call in temps mode is
// rewritten to use the temporaries (the statement adds the rest); a call
// inside an expression is wrapped in CallEnd1.
func (r *rewriter) barrierCall(x *ast.CallExpr) {
	if p := r.stmtCalls[x]; p != nil {
		if p.temps {
			r.tempsCall(p)
		} else if len(p.wrap) == 1 {
			r.wrapOperand(p)
		}
		return
	}
	if r.noBarrier[x] {
		return
	}
	if _, isTuple := typeOf(r.info, x).(*types.Tuple); isTuple || typeOf(r.info, x) == nil {
		return // no result or several: only in a statement
	}
	p := r.barrierPlan(x, false)
	if p == nil {
		return
	}
	lo, hi := r.span(x)
	if len(p.wrap) == 0 {
		r.ed.wrap(lo, hi, rtAlias+".CallEnd1("+rtAlias+".CallBegin("+strings.Join(append([]string{p.site}, p.ops...), ", ")+"), ", ")")
		return
	}
	r.wrapOperand(p)
	r.ed.wrap(lo, hi, rtAlias+".CallEnd1V(", ", "+p.site+")")
}

// wrapOperand makes the one operand of p that is not simple record the
// MethodBegin as it is evaluated: rt.CallArg(v, site, ops...) is v. The
// operands before it are simple or hold no pointers, and those after it
// are evaluated before the call: the call happens after the hook.
func (r *rewriter) wrapOperand(p *bpPlan) {
	op := p.wrap[0]
	olo, ohi := r.span(op)
	g := r.newGen(olo)
	tail := ", " + strings.Join(append([]string{p.site}, p.ops...), ", ") + ")"
	if op == p.recv && p.recvAddr {
		// The method gets &x: keep x addressable.
		g.lit("(*" + rtAlias + ".CallArg(&(")
		r.piece(g, op)
		g.lit(")" + tail + ")")
	} else {
		g.lit(rtAlias + ".CallArg(")
		r.piece(g, op)
		g.lit(tail)
	}
	r.ed.collapse(olo, ohi, g.end(ohi))
}

// tempsCall builds the temporaries of p (the receiver, then each argument
// that is not a constant or a function literal, in order) and replaces the
// call by one of the temporaries.
func (r *rewriter) tempsCall(p *bpPlan) {
	x := p.call
	stmtLo := p.stmtLo
	g := r.newGen(stmtLo)
	var names []string
	var vals []func()
	var ops []string
	var fun func(*gen)
	if p.recv != nil {
		t := r.tmp()
		names = append(names, t)
		recv := p.recv
		if p.recvAddr {
			vals = append(vals, func() { g.lit("&("); r.piece(g, recv); g.lit(")") })
		} else {
			vals = append(vals, func() { r.piece(g, recv) })
		}
		ops = append(ops, t)
		fun = func(cg *gen) { cg.lit(t + "." + p.sel) }
	} else {
		fun = func(cg *gen) { r.piece(cg, x.Fun) }
	}
	args := make([]func(*gen), len(x.Args)) // the call's arguments
	for i, a := range x.Args {
		if r.inlineValue(a) || isFuncLit(unparen(a)) {
			args[i] = func(cg *gen) { r.piece(cg, a) }
			continue
		}
		t := r.tmp()
		names = append(names, t)
		vals = append(vals, func() { r.piece(g, a) })
		args[i] = func(cg *gen) { cg.lit(t) }
		if hasPointers(typeOf(r.info, a)) {
			ops = append(ops, t)
		}
	}
	if len(names) > 0 {
		g.lit(strings.Join(names, ", ") + " := ")
		for i, v := range vals {
			if i > 0 {
				g.lit(", ")
			}
			v()
		}
		g.lit("; ")
	}
	g.lit(rtAlias + ".CallBegin(" + strings.Join(append([]string{p.site}, ops...), ", ") + "); ")
	p.prefix = g.end(stmtLo)
	lo, hi := r.span(x)
	cg := r.newGen(lo)
	fun(cg)
	cg.lit("(")
	for i, a := range args {
		if i > 0 {
			cg.lit(", ")
		}
		a(cg)
	}
	if x.Ellipsis.IsValid() {
		cg.lit("...")
	}
	cg.lit(")")
	r.ed.collapseChildren(lo, hi, cg.end(hi))
}

// callbackCall reports whether x calls a function of a module dependency
// that is not traced with a function literal among its arguments
// (testify's require.Eventually(t, func() bool {...}, ...)): the
// dependency may run the literal in a goroutine of its own and wait for it
// through channels the trace does not see. Such a goroutine releases the
// I/O object when it returns to untraced code (rt, leaveSlow), so the call
// acquires it when it returns (rt.IORead): the literal's accesses before
// it returned are ordered before the caller's after the call. That can
// only add order (races may be hidden, none invented). Not for the
// standard library, whose callbacks run in the caller's goroutine or have
// edges of their own, but for testing's runners (testRunners).
func (r *rewriter) callbackCall(x *ast.CallExpr, fn *types.Func) bool {
	if fn == nil || fn.Pkg() == nil || r.noBarrier[x] || r.traced(fn.Pkg().Path()) {
		return false
	}
	if stdPath(fn.Pkg().Path()) {
		return testRunners[fn.FullName()]
	}
	for _, a := range x.Args {
		if _, ok := unparen(a).(*ast.FuncLit); ok {
			return true
		}
	}
	return false
}

// testRunners run the test functions they are given in goroutines of the
// testing framework's own and wait for them (testify's suite tests run a
// suite inside a test with testing.RunTests): the call acquires the I/O
// object those goroutines release when they return to untraced code.
var testRunners = map[string]bool{
	"testing.RunTests": true, "testing.RunBenchmarks": true, "testing.RunExamples": true, "testing.Main": true,
}

// depReceiver returns the receiver of x when x calls a method of an
// untraced dependency (not the standard library) on a pointer given by a
// plain expression (a variable, a field of one): rt.DepBefore and
// DepAfter order the calls made on that object, as the dependency's own
// locks would (see rt.DepBefore). The expression is evaluated again after
// the call, so it must have no effect of its own.
func (r *rewriter) depReceiver(x *ast.CallExpr, fn *types.Func) ast.Expr {
	if r.noBarrier[x] || !r.untracedDep(fn) {
		return nil
	}
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return nil
	}
	se, ok := unparen(x.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	if sel := r.info.Selections[se]; sel == nil || sel.Kind() != types.MethodVal {
		return nil
	}
	if _, ok := typeOf(r.info, se.X).Underlying().(*types.Pointer); !ok || !plainExpr(r.info, se.X) {
		return nil
	}
	return se.X
}

// untracedDep reports whether fn is a function of an untraced dependency:
// not the standard library, not a package the user --exclude's (those
// get BarrierPairs alone: RDIT's case).
func (r *rewriter) untracedDep(fn *types.Func) bool {
	if fn == nil || fn.Pkg() == nil {
		return false
	}
	p := fn.Pkg().Path()
	if r.traced(p) || stdPath(p) || noBarrierPkgs[p] {
		return false
	}
	return r.in.Excluded == nil || !r.in.Excluded(p)
}

// plainExpr reports whether evaluating e twice is evaluating it once: a
// variable, or a field of a plain expression.
func plainExpr(info *types.Info, e ast.Expr) bool {
	switch x := unparen(e).(type) {
	case *ast.Ident:
		_, isVar := info.Uses[x].(*types.Var)
		return isVar
	case *ast.SelectorExpr:
		if sel := info.Selections[x]; sel != nil {
			if sel.Kind() != types.FieldVal || sel.Indirect() && !plainExpr(info, x.X) {
				return false
			}
			return plainExpr(info, x.X)
		}
		_, isVar := info.Uses[x.Sel].(*types.Var) // a package's variable
		return isVar
	}
	return false
}
