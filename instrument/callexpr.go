package instrument

// Calls: hooked calls (sync, channels, package testing), calls into
// untraced code (BarrierPairs, std effects, fresh results), builtins
// (append, copy, delete, clear, make), variadic slices.

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"
)

func (r *rewriter) isBuiltin(e ast.Expr) bool {
	id := identOf(e)
	if id == nil {
		return false
	}
	_, ok := r.info.Uses[id].(*types.Builtin)
	return ok
}

// isFuncName reports whether e names a function (not a variable): a
// package-level function, possibly qualified or instantiated, or a method
// expression T.M.
func (r *rewriter) isFuncName(e ast.Expr) bool {
	switch x := unparen(e).(type) {
	case *ast.Ident:
		_, ok := r.info.Uses[x].(*types.Func)
		return ok
	case *ast.SelectorExpr:
		if sel := r.info.Selections[x]; sel != nil {
			return sel.Kind() == types.MethodExpr
		}
		_, ok := r.info.Uses[x.Sel].(*types.Func)
		return ok
	case *ast.IndexExpr:
		return r.isFuncName(x.X)
	case *ast.IndexListExpr:
		return r.isFuncName(x.X)
	}
	return false
}

// calledFunc returns the function or method a call expression calls
// statically, or nil.
func (r *rewriter) calledFunc(e ast.Expr) *types.Func {
	c, ok := unparen(e).(*ast.CallExpr)
	if !ok {
		return nil
	}
	fun := unparen(c.Fun)
	switch x := fun.(type) {
	case *ast.IndexExpr:
		fun = x.X
	case *ast.IndexListExpr:
		fun = x.X
	}
	switch x := unparen(fun).(type) {
	case *ast.Ident:
		f, _ := r.info.Uses[x].(*types.Func)
		return f
	case *ast.SelectorExpr:
		if sel := r.info.Selections[x]; sel != nil {
			if sel.Kind() == types.MethodVal {
				f, _ := sel.Obj().(*types.Func)
				return f
			}
			return nil
		}
		f, _ := r.info.Uses[x.Sel].(*types.Func)
		return f
	}
	return nil
}

func hookName(h hook) string {
	if h.test {
		return testAlias + "." + h.name
	}
	return rtAlias + "." + h.name
}

// testHooks reports whether the calls of package testing that rttest
// models are hooked in this file: a test file, or another file that
// imports testing. testify's suite runs a suite's tests with t.Run from
// suite.go: without Run's edges, each test's code after the suite raced
// with the suite's tests (corpus session 30, 23 false races in
// TestRunSuite). Its function literals get testPrologue's prologue too.
func (r *rewriter) testHooks() bool {
	if r.in.IsTest {
		return true
	}
	for _, im := range r.in.File.Imports {
		if im.Path.Value == `"testing"` {
			return true
		}
	}
	return false
}

// hookCall instruments a call that has a hook: it returns the hook, the
// receiver argument's text ("" for a function) and the call's arguments,
// all instrumented. ok is false for other calls (nothing done).
//
// A call whose one argument is a call of several results, b.Run(bench(8))
// (held-out typeid's benchmarks), cannot take the hook's receiver or site
// beside that argument: call binds its results first, in a function
// literal (spreadCall), a go statement (inGo) in its temporaries, and a
// defer statement in a block around it (deferStmt: the literal would move
// the evaluation of the arguments from the defer statement to the call).
func (r *rewriter) hookCall(call *ast.CallExpr, inGo bool) (h hook, recv string, args []ast.Expr, ok bool) {
	fn := r.calledFunc(call)
	if fn == nil {
		return hook{}, "", nil, false
	}
	if r.bareMemStats[call] {
		return hook{}, "", nil, false
	}
	if spreadArg(r.info, call) && !inGo && r.deferSpread[call] == nil {
		if _, named := r.spreadResult(call); !named {
			return hook{}, "", nil, false
		}
	}
	if mk := methodKey(fn); mk != "" {
		h, ok = methodHooks[mk]
		if !ok || h.name == "" {
			return hook{}, "", nil, false
		}
		if h.test && !r.testHooks() {
			return hook{}, "", nil, false
		}
		sx := unparen(call.Fun)
		if ix, isIx := sx.(*ast.IndexExpr); isIx {
			sx = ix.X
		}
		se, isSel := unparen(sx).(*ast.SelectorExpr)
		if !isSel {
			return hook{}, "", nil, false
		}
		sel := r.info.Selections[se]
		if sel == nil || sel.Kind() != types.MethodVal {
			return hook{}, "", nil, false
		}
		if recv, ok = r.receiverArg(se.X, sel, h.test, h.value); !ok {
			if recv, ok = r.lockerArg(se.X, fn); !ok {
				return hook{}, "", nil, false
			}
			h = methodHooks["sync.Locker."+fn.Name()]
		}
	} else {
		h, ok = funcHooks[funcKey(fn)]
		if !ok || h.name == "" || h.test && !r.testHooks() {
			return hook{}, "", nil, false
		}
	}
	if h.test {
		r.useTest = true
		h = r.testHook(h, call.Args) // testframes.go
	}
	for _, a := range call.Args {
		r.rd(a)
	}
	return h, recv, call.Args, true
}

// receiverArg instruments x, the receiver of a hooked method, and returns
// the text of the hook's receiver argument: a pointer to the sync object
// the method is declared on (following embedded fields); x itself for
// interface methods and for package testing's hooks (asIs: they take
// testing.TB); for hooks that take the value (value: reflect.Value's), x
// or the embedded field the method is promoted from, as the method's
// receiver takes it. It returns false, instrumenting nothing, when that
// field is one this file cannot name (unexported, of another package):
// the call is then instrumented as any call.
func (r *rewriter) receiverArg(x ast.Expr, sel *types.Selection, asIs, value bool) (string, bool) {
	xt := typeOf(r.info, x)
	_, xIface := core(xt).(*types.Interface)
	if xIface || asIs {
		r.rd(x)
		return r.text(x), true
	}
	// A method promoted from an embedded field (a struct embedding
	// reflect.Value, a sync.Mutex two levels down): the field's names
	// along the selection's path.
	var fields []string
	t := xt
	path := sel.Index()
	for _, i := range path[:len(path)-1] {
		st := t
		if p, ok := core(st).(*types.Pointer); ok {
			st = p.Elem()
		}
		s, ok := core(st).(*types.Struct)
		if !ok {
			break
		}
		f := s.Field(i)
		if !r.canSelect(f) {
			return "", false
		}
		fields = append(fields, f.Name())
		t = f.Type()
	}
	if value || isPointer(xt) {
		r.rd(x)
	} else {
		r.loc(x)
	}
	text := r.text(x)
	for _, f := range fields {
		text = "(" + text + ")." + f
	}
	if _, isIface := core(t).(*types.Interface); isIface {
		return text, true
	}
	if value {
		fn, _ := sel.Obj().(*types.Func)
		if fn == nil {
			return text, true
		}
		// As the method's receiver takes it (a *reflect.Value's Int).
		recvPtr := isPointer(fn.Type().(*types.Signature).Recv().Type())
		switch {
		case recvPtr && !isPointer(t):
			return "&(" + text + ")", true
		case !recvPtr && isPointer(t):
			return "(*" + text + ")", true
		}
		return text, true
	}
	if isPointer(t) {
		return text, true
	}
	return "&(" + text + ")", true
}

// lockerArg is receiverArg for the Lock or Unlock of a sync.Mutex or
// RWMutex promoted through a field this file cannot name (unexported, of
// another package): x itself, as a sync.Locker, whose hook finds the
// embedded mutex at run time (rt.lockerObj). false for other methods.
func (r *rewriter) lockerArg(x ast.Expr, fn *types.Func) (string, bool) {
	if k := methodKey(fn); k != "sync.Mutex.Lock" && k != "sync.Mutex.Unlock" && k != "sync.RWMutex.Lock" && k != "sync.RWMutex.Unlock" {
		return "", false
	}
	if isPointer(typeOf(r.info, x)) {
		r.rd(x)
		return r.text(x), true
	}
	r.loc(x)
	return "&(" + r.text(x) + ")", true
}

// call instruments a call expression.
func (r *rewriter) call(x *ast.CallExpr) {
	if r.cgoOpaque(x) || r.cgoOpaque(x.Fun) {
		// A call of C (or a conversion to a C type): its Go operands are
		// read as any others.
		for _, a := range x.Args {
			r.rd(a)
		}
		return
	}
	// A conversion. string(b) of a byte or rune slice reads its elements;
	// []byte(s) allocates.
	if r.isType(x.Fun) {
		if len(x.Args) == 1 && isString(typeOf(r.info, x)) && isSlice(typeOf(r.info, x.Args[0])) {
			// Added before the argument's own read: the outer wrap.
			lo, hi := r.span(x.Args[0])
			r.ed.wrap(lo, hi, rtAlias+".Elems(", ", "+r.asite(x.Pos())+")")
		}
		if len(x.Args) == 1 && isSlice(typeOf(r.info, x)) && isString(typeOf(r.info, x.Args[0])) {
			// []byte(s) makes a new array (rt.Alloc's reason).
			lo, hi := r.span(x)
			r.ed.wrapInner(lo, hi, rtAlias+".MakeSlice(", ", "+r.site(x.Pos())+")")
		}
		for _, a := range x.Args {
			r.rd(a)
		}
		return
	}
	if r.isBuiltin(x.Fun) {
		r.builtin(x)
		return
	}
	if id := identOf(x.Fun); id != nil {
		if o, ok := r.info.Uses[id].(*types.Func); ok && o.Pkg() != nil && o.Pkg().Path() == "unsafe" {
			for _, a := range x.Args {
				r.rd(a)
			}
			return
		}
	}
	if lit, ok := unparen(x.Fun).(*ast.FuncLit); ok && !r.deferCalls[x] {
		mark(&r.calledLits, lit) // before its body is rewritten (funcLit)
	}
	r.noteCall(x) // callsites.go
	r.tbResult(x) // tblock.go
	r.cancelArgs(x, r.calledFunc(x))
	if h, recv, args, ok := r.hookCall(x, false); ok {
		lo, hi := r.span(x)
		g := r.newGen(lo)
		// A spread argument's results, bound before the call: by
		// deferStmt around the defer statement, or by spreadCall's
		// literal (closed by spreadEnd).
		var bound []string
		var spreadEnd string
		if names := r.deferSpread[x]; names != nil {
			mark(&r.hookedSpread, x)
			bound = names
		} else if spreadArg(r.info, x) {
			recv, bound, spreadEnd = r.spreadCall(g, x, recv)
		}
		if h.name == "MRun" {
			// m.Run() called where it was: rttest.MRunDone(m.Run(), site).
			g.lit(testAlias + ".MRunDone(" + recv + ".Run(), " + r.site(x.Pos()) + ")")
			r.ed.collapse(lo, hi, g.end(hi))
			return
		}
		name := hookName(h)
		if h.g {
			name += "G"
		}
		g.lit(name + "(")
		site := r.site
		if fn := r.calledFunc(x); fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == "reflect" {
			// reflect's accesses: reports show the Value method
			// above the call, as go test -race does.
			site = func(p token.Pos) string { return r.calleeSite(p, fn) }
		}
		if h.sited {
			g.lit(site(x.Pos()) + ", " + r.syncFlag() + ")(")
		}
		first := true
		if recv != "" {
			g.lit(recv)
			first = false
		}
		if bound != nil {
			if !first {
				g.lit(", ")
			}
			first = false
			g.lit(strings.Join(bound, ", "))
		} else {
			for _, a := range args {
				if !first {
					g.lit(", ")
				}
				first = false
				r.piece(g, a)
			}
		}
		if x.Ellipsis.IsValid() {
			g.lit("...")
		}
		if !h.noSite && !h.sited {
			if !first {
				g.lit(", ")
			}
			g.lit(site(x.Pos()))
		}
		if h.rec && !h.sited {
			g.lit(", " + r.syncFlag())
		}
		if h.g {
			g.lit(", " + r.gArg())
		}
		g.lit(")" + spreadEnd)
		r.ed.collapse(lo, hi, g.end(hi))
		return
	}
	if ct := typeOf(r.info, x.Fun); isCancelFunc(ct) {
		// A deferred (or go) call evaluates its function value now and
		// calls it later: the release must come with the call (defer
		// cancel(), whose context's Done another goroutine waits for).
		// So must a CancelCauseFunc's anywhere: the function value is
		// evaluated before the cause, whose making (cancel(&failure{err}))
		// the goroutine that reads context.Cause after Done must see
		// (held-out alitto/pond/v2's futures).
		if r.noBarrier[x] || isCancelCauseFunc(ct) {
			r.cancelLater(x.Fun, ct)
		} else {
			lo, hi := r.span(x.Fun)
			r.ed.wrap(lo, hi, rtAlias+".CtxCancel(", ", "+r.site(x.Pos())+")")
		}
	}
	fn := r.calledFunc(x)
	if r.keptDone(x) {
		defer func() {
			lo, hi := r.span(x)
			r.ed.wrap(lo, hi, rtAlias+".CtxDoneChan(", ", "+r.site(x.Pos())+")")
		}()
	}
	if fn != nil && fn.Name() == "Err" && fn.Pkg() != nil && fn.Pkg().Path() == "context" {
		defer func() {
			lo, hi := r.span(x)
			if se, ok := unparen(x.Fun).(*ast.SelectorExpr); ok && plainExpr(r.info, se.X) &&
				!slices.Contains(r.defines, rootName(se.X)) && types.AssignableTo(typeOf(r.info, se.X), ctxType(fn)) {
				// The context, evaluated again: rt.CtxErr looks up its
				// Done channel (a deadline's cancel, ctxDoneSeen).
				clo, chi := r.span(se.X)
				r.ed.wrap(lo, hi, rtAlias+".CtxErr(", ", "+string(r.ed.src[clo:chi])+", "+r.site(x.Pos())+")")
				return
			}
			r.ed.wrap(lo, hi, rtAlias+".CtxDoneV(", ", "+r.site(x.Pos())+")")
		}()
	}
	var pre string // an event recorded before the call
	if fn != nil && (timerCalls[methodKey(fn)] || methodKey(fn) == "" && timerCalls[funcKey(fn)]) {
		// (funcKey names a method too: time.Time.After is not time.After.)
		pre = "Timer"
	}
	write, read, sys, readSys := r.ioEdges(fn)
	if p := ioBeforeHook(write, read, sys); p != "" {
		pre = p
		if r.deferCalls[x] && r.ioLater(x, write, read, sys, readSys) {
			pre = ""
		}
	}
	if pre != "" {
		// Recorded while the last argument is evaluated, after the
		// others, that is, just before the call: rt.Before(x, site) is
		// x. A release must come after what the arguments' evaluation
		// writes (w.Write(encode(m)), whose bytes the reader's side may
		// reach). Constant and untyped arguments would take the hook's
		// type, and cause nothing: the last other one goes through it,
		// or, with none, the function value: rt.Before(f, site)(x).
		lo, hi := r.span(r.lastOperand(x))
		r.ed.wrap(lo, hi, rtAlias+"."+pre+"Before(", ", "+r.site(x.Pos())+")")
	}
	// Wraps of an argument go outside its reads' hooks, which take its
	// address: added before the arguments are read.
	r.ctxParentCall(x, fn)
	dep := r.depReceiver(x, fn)
	if dep != nil {
		// The release goes with the last argument too (b.Put(fresh())
		// hands over what fresh writes): rt.DepArgBefore(a, b, site) is
		// a; the receiver, a plain expression, is evaluated again.
		lo, hi := r.span(dep)
		if last := r.lastOperand(x); last != x.Fun {
			alo, ahi := r.span(last)
			r.ed.wrap(alo, ahi, rtAlias+".DepArgBefore(", ", "+string(r.ed.src[lo:hi])+", "+r.site(x.Pos())+")")
		} else {
			r.ed.wrap(lo, hi, rtAlias+".DepBefore(", ", "+r.site(x.Pos())+")")
		}
	}
	std := r.stdCall(x)             // accesses inside the standard library (stdcalls.go)
	cb := r.callbackLockCall(x, fn) // a callback under a std mutex (callbacklock.go)
	r.variadicSlice(x, fn)
	if se, ok := unparen(x.Fun).(*ast.SelectorExpr); ok {
		if r.calledFun == nil {
			r.calledFun = map[*ast.SelectorExpr]bool{}
		}
		r.calledFun[se] = true // a call, not a method value: bindHooked leaves it
	}
	r.rd(x.Fun)
	for _, a := range x.Args {
		r.rd(a)
	}
	if std != nil {
		std()
	}
	if cb != nil {
		cb()
	}
	r.freshCall(x, fn)
	r.ctxSeenCall(x, fn)
	r.decodeCall(x, fn)
	r.heldPtrCall(x, fn)
	if isPipeWrite(fn) {
		r.afterCall(x, "PipeWritten", "") // rt.PipeWritten: after the reader's Read
	} else if read {
		r.afterCall(x, readHook(readSys), "") // rt.IORead, rt.IOSysRead
	} else if r.callbackCall(x, fn) {
		r.afterCall(x, "IORead", "") // rt.IORead
	}
	if dep != nil {
		lo, hi := r.span(dep) // a plain expression: evaluated again after
		r.afterCall(x, "DepAfter", string(r.ed.src[lo:hi])+", ")
	}
	r.barrierCall(x)
}

// spreadArg reports whether call's one argument is a call of several
// results, f(g()).
func spreadArg(info *types.Info, call *ast.CallExpr) bool {
	return len(call.Args) == 1 && isTupleExpr(info, call.Args[0])
}

// spreadResult is the result list of a function literal that returns
// what call returns ("bool ", "(int, error) ", "" for none), and whether
// the file can name those types.
func (r *rewriter) spreadResult(call *ast.CallExpr) (string, bool) {
	switch t := typeOf(r.info, call).(type) {
	case nil:
		return "", true
	case *types.Tuple:
		if t.Len() == 0 {
			return "", true
		}
		var names []string
		for i := 0; i < t.Len(); i++ {
			n, ok := r.typeName(t.At(i).Type(), call.Pos())
			if !ok {
				return "", false
			}
			names = append(names, n)
		}
		return "(" + strings.Join(names, ", ") + ") ", true
	default:
		n, ok := r.typeName(t, call.Pos())
		return n + " ", ok
	}
}

// spreadCall begins, in g, a function literal that binds the receiver
// (recv, evaluated first as in the call) and the results of x's one
// argument to locals, and returns what the hook's call then takes in
// their place, and the text that closes the literal and calls it:
//
//	func() bool { _rk1 := b; _rk2, _rk3 := bench(8); return rttest.RunBWrap(_rk1, _rk2, _rk3, site) }()
//
// hookCall has checked that spreadResult can name the result types.
func (r *rewriter) spreadCall(g *gen, x *ast.CallExpr, recv string) (string, []string, string) {
	res, _ := r.spreadResult(x)
	g.lit("func() " + res + "{ ")
	if recv != "" {
		t := r.tmp()
		g.lit(t + " := " + recv + "; ")
		recv = t
	}
	names := r.tupleTemps(x.Args[0])
	g.lit(strings.Join(names, ", ") + " := ")
	r.piece(g, x.Args[0])
	g.lit("; ")
	if res != "" {
		g.lit("return ")
	}
	return recv, names, " }()"
}

// deferStmt instruments a defer statement. A deferred hooked call whose one
// argument is a call of several results has them bound, at the defer
// statement as Go evaluates them, in a block around it:
//
//	{ _rk1, _rk2 := ptrDelta(); defer rt.AtomicAddInt64(_rk1, _rk2, site) }
//
// (the defer still runs at the function's return; the receiver is then
// evaluated after the argument, not before).
func (r *rewriter) deferStmt(x *ast.DeferStmt) {
	r.noBarrier[x.Call] = true // the call runs later: not bracketed here
	mark(&r.deferCalls, x.Call)
	call := x.Call
	if !spreadArg(r.info, call) {
		r.rd(call)
		return
	}
	names := r.tupleTemps(call.Args[0])
	if r.deferSpread == nil {
		r.deferSpread = map[*ast.CallExpr][]string{}
	}
	r.deferSpread[call] = names
	r.rd(call)
	if !r.hookedSpread[call] {
		delete(r.deferSpread, call) // not hooked: the call is as written
		return
	}
	lo, hi := r.span(x)
	g := r.newGen(lo)
	g.lit("{ " + strings.Join(names, ", ") + " := ")
	r.piece(g, call.Args[0])
	g.lit("; ")
	g.piece(lo, r.ed.render(lo, hi))
	g.lit(" }")
	r.ed.collapse(lo, hi, g.end(hi))
}

// tupleTemps returns a new temporary for each result of e, a call of
// several results.
func (r *rewriter) tupleTemps(e ast.Expr) []string {
	names := make([]string, typeOf(r.info, e).(*types.Tuple).Len())
	for i := range names {
		names[i] = r.tmp()
	}
	return names
}

// isTupleExpr reports whether e is a call with several results.
func isTupleExpr(info *types.Info, e ast.Expr) bool {
	_, ok := typeOf(info, e).(*types.Tuple)
	return ok
}

// ioEdges reports whether a call of fn is ordered as an I/O write (a
// release before it) and as an I/O read (an acquire after it): ioKind's
// classes, depIOKind's for an untraced dependency's function; sys, whether
// the write's release stands for system calls the call makes itself
// (ioAtSyscalls; never an untraced dependency's, whose I/O may run on
// goroutines of its own); and readSys, the same of the read's acquire
// (readAtSyscalls).
func (r *rewriter) ioEdges(fn *types.Func) (write, read, sys, readSys bool) {
	if r.untracedDep(fn) {
		write, read = depIOKind(fn)
		return write, read, false, false
	}
	write, read = ioKind(fn)
	return write, read, write && ioAtSyscalls(fn), read && readAtSyscalls(fn)
}

// readHook names the rt hook recorded after a call that may read: IORead,
// or IOSysRead where the read's acquire stands for its system calls.
func readHook(readSys bool) string {
	if readSys {
		return "IOSysRead"
	}
	return "IORead"
}

// ioLater wraps the function value of x, a deferred I/O call with no
// arguments whose function is a func() or func() error (Close, Flush,
// Sync, Wait), in rt.IOLater or IOLaterE, which record its edges when it
// runs, at the function's return, not at the defer statement; it reports
// whether it did. (Other deferred I/O calls keep their release at the
// defer statement, and lose their acquire.)
func (r *rewriter) ioLater(x *ast.CallExpr, write, read, sys, readSys bool) bool {
	sig, ok := core(typeOf(r.info, x.Fun)).(*types.Signature)
	if !ok || len(x.Args) != 0 || sig.Params().Len() != 0 {
		return false
	}
	hook := ""
	switch res := sig.Results(); {
	case res.Len() == 0:
		hook = "IOLater"
	case res.Len() == 1 && isErrorType(res.At(0).Type()):
		hook = "IOLaterE"
	default:
		return false
	}
	var kinds []string
	if write {
		kinds = append(kinds, rtAlias+".IOLaterWrite")
	}
	if sys {
		kinds = append(kinds, rtAlias+".IOLaterSys")
	}
	if read {
		kinds = append(kinds, rtAlias+".IOLaterPipe", rtAlias+".IOLaterRead")
		if readSys {
			kinds = append(kinds, rtAlias+".IOLaterSysRead")
		}
	}
	lo, hi := r.span(x.Fun)
	r.ed.wrap(lo, hi, rtAlias+"."+hook+"(", ", "+r.site(x.Pos())+", "+strings.Join(kinds, "|")+")")
	return true
}

// ioBeforeHook names the rt hook (rt.<name>Before) that releases before
// an I/O call of those classes, or "": sys, a write whose system calls rt
// sees (ioAtSyscalls), releases only where rt does not.
func ioBeforeHook(write, read, sys bool) string {
	switch {
	case write && read && sys:
		return "IOReadSys"
	case write && read:
		return "IORead"
	case write && sys:
		return "IOSys"
	case write:
		return "IO"
	case read:
		return "Read" // rt.ReadBefore: an io.Pipe's writer may wait for it (rt's pipeObj)
	}
	return ""
}

// afterCall records rt.<hook>(prefix site) after the call x returns:
// around it, rt.<hook>V(x, prefix site), when its one result is used;
// after its statement otherwise (several results, none used: a
// statement's own wraps end where the call does). Not for a deferred or
// go statement's call, which runs later: IOReadV(tx.Rollback(), s) would
// run it now (defer tx.Rollback() rolled back at once).
func (r *rewriter) afterCall(x *ast.CallExpr, hook, prefix string) {
	if r.noBarrier[x] {
		return
	}
	r.afterCallArgs(x, hook, prefix+r.site(x.Pos()))
}

// afterCallArgs is afterCall with the hook's arguments given whole.
func (r *rewriter) afterCallArgs(x *ast.CallExpr, hook, args string) {
	t := typeOf(r.info, x)
	if tuple, ok := t.(*types.Tuple); ok && tuple.Len() != 1 || r.discarded[x] || t == nil {
		r.after = append(r.after, rtAlias+"."+hook+"("+args+")")
		return
	}
	lo, hi := r.span(x)
	r.ed.wrap(lo, hi, rtAlias+"."+hook+"V(", ", "+args+")")
}

// variadicSlice records the slice a call of traced variadic function fn
// makes of its arguments (f(a, b) passes []T{a, b}), written out so that
// rt.MakeSlice records its array's allocation, as for a literal: the
// callee's accesses of its parameter's elements are recorded, and the
// array may have had a dead object's address. Only where the element type
// can be named in the file (not a type parameter or another package's
// unexported type). A function value (fn nil: a closure, as go.uber.org/fx's
// tests' validateApp(t, opts...)) may be traced code too.
func (r *rewriter) variadicSlice(x *ast.CallExpr, fn *types.Func) {
	if x.Ellipsis.IsValid() || fn != nil && (fn.Pkg() == nil || !r.traced(fn.Pkg().Path())) {
		return
	}
	sig, ok := core(typeOf(r.info, x.Fun)).(*types.Signature)
	if !ok || !sig.Variadic() {
		return
	}
	n := sig.Params().Len()
	if len(x.Args) < n {
		return // no variadic argument: the parameter is nil
	}
	if _, tuple := typeOf(r.info, x.Args[0]).(*types.Tuple); tuple {
		return // f(g()), g's results spread
	}
	elem := sig.Params().At(n - 1).Type().(*types.Slice).Elem()
	name, ok := r.typeName(elem, x.Pos())
	if !ok {
		return
	}
	lo, _ := r.span(x.Args[n-1])
	_, hi := r.span(x.Args[len(x.Args)-1])
	r.ed.wrapOuter(lo, hi, rtAlias+".MakeSlice([]"+name+"{", "}, "+r.site(x.Args[n-1].Pos())+")...") // the call's ')' follows
}

// builtin instruments calls of the predeclared functions.
func (r *rewriter) builtin(x *ast.CallExpr) {
	name := identOf(x.Fun).Name
	switch name {
	case "Sizeof", "Alignof", "Offsetof":
		return // not evaluated
	case "len", "cap":
		if len(x.Args) == 1 {
			t := typeOf(r.info, x.Args[0])
			if isArray(t) {
				r.loc(x.Args[0])
				return
			}
			if isMap(t) {
				// len of a map reads it (as for the Go race detector).
				lo, hi := r.span(x.Args[0])
				r.ed.wrap(lo, hi, rtAlias+".MR(", ", "+r.asite(x.Pos())+")")
			}
		}
	case "append":
		r.appendCall(x)
		return
	case "new":
		lo, hi := r.span(x)
		r.ed.wrapInner(lo, hi, rtAlias+".New(", ", "+r.site(x.Pos())+")")
	case "make":
		if len(x.Args) >= 1 {
			fn := ""
			switch t := typeOf(r.info, x); {
			case isMap(t):
				fn = "MakeMap"
			case isSlice(t):
				fn = "MakeSlice"
			case isChan(t):
				fn = "MakeChan"
			}
			if fn != "" {
				lo, hi := r.span(x)
				r.ed.wrap(lo, hi, rtAlias+"."+fn+"(", ", "+r.site(x.Pos())+")")
			}
		}
	case "copy":
		if len(x.Args) == 2 {
			for _, a := range x.Args {
				r.rd(a)
			}
			fn := "Copy"
			switch src := typeOf(r.info, x.Args[1]); {
			case isString(src):
				fn = "CopyString"
			case isBytesOrString(src):
				fn = "CopyBytesOrString"
			}
			r.replaceCall(x, fn, x.Args, r.asite(x.Pos()))
			return
		}
	case "delete", "clear":
		if len(x.Args) >= 1 && isMap(typeOf(r.info, x.Args[0])) {
			lo, hi := r.span(x.Args[0])
			r.ed.wrap(lo, hi, rtAlias+".MW(", ", "+r.asite(x.Pos())+")")
		}
		for _, a := range x.Args {
			r.rd(a)
		}
		return
	case "close":
		if len(x.Args) == 1 {
			r.rd(x.Args[0])
			r.replaceCall(x, "Close", x.Args, r.site(x.Pos())+", "+r.syncFlag())
			return
		}
	}
	for _, a := range x.Args {
		r.rd(a)
	}
}

// replaceCall replaces the call x by rt.fn(args..., site).
func (r *rewriter) replaceCall(x *ast.CallExpr, fn string, args []ast.Expr, site string) {
	lo, hi := r.span(x)
	g := r.newGen(lo)
	g.lit(rtAlias + "." + fn + "(")
	for _, a := range args {
		r.piece(g, a)
		g.lit(", ")
	}
	g.lit(site + ")")
	r.ed.collapse(lo, hi, g.end(hi))
}

// appendCall instruments append: the elements it stores are written, the
// elements of a spread slice read.
func (r *rewriter) appendCall(x *ast.CallExpr) {
	for _, a := range x.Args {
		r.rd(a)
	}
	if len(x.Args) < 2 {
		return
	}
	if x.Ellipsis.IsValid() {
		fn := "AppendSlice"
		switch src := typeOf(r.info, x.Args[1]); {
		case isString(src):
			fn = "AppendString"
		case isBytesOrString(src):
			fn = "AppendBytesOrString"
		}
		r.replaceCall(x, fn, x.Args, r.asite(x.Pos()))
		return
	}
	// Elements of the slice's own element type go through rt.Append,
	// which also sees the slice appended to; others (an element converted
	// to an interface, say, which the hook's type inference would not
	// accept) through rt.AppendN around the append.
	if st, ok := core(typeOf(r.info, x.Args[0])).(*types.Slice); ok {
		same := true
		for _, a := range x.Args[1:] {
			tv, ok := r.info.Types[a]
			// An untyped constant or nil takes the element type; a typed
			// constant of another type (json.Number("") into an
			// []interface{}, json-iterator's tests) is converted below.
			if !ok || !(tv.Value != nil && isUntyped(tv.Type) || tv.IsNil() || types.Identical(tv.Type, st.Elem())) {
				same = false
			}
		}
		// Elements of another type are converted to the element type
		// where the file can name it (interface{} from
		// append(args, string(q)): AppendN cannot tell whether append
		// grew the slice, and a new array's allocation went unrecorded,
		// go-workflows' false race, corpus session 26).
		conv := ""
		if !same {
			if name, ok := r.typeName(st.Elem(), x.Pos()); ok {
				conv, same = "("+name+")", true
			}
		}
		if same {
			lo, hi := r.span(x)
			g := r.newGen(lo)
			g.lit(rtAlias + ".Append(")
			r.piece(g, x.Args[0])
			g.lit(", " + r.asite(x.Pos()))
			for _, a := range x.Args[1:] {
				g.lit(", " + conv)
				if conv != "" {
					g.lit("(")
				}
				r.piece(g, a)
				if conv != "" {
					g.lit(")")
				}
			}
			g.lit(")")
			r.ed.collapse(lo, hi, g.end(hi))
			return
		}
	}
	lo, hi := r.span(x)
	r.ed.wrap(lo, hi, rtAlias+".AppendN(", ", "+strconv.Itoa(len(x.Args)-1)+", "+r.asite(x.Pos())+")")
}

// isBytesOrString reports whether t is a type parameter that may be a byte
// slice or a string (~[]byte | ~string): no core type, which append and
// copy accept as their source all the same.
func isBytesOrString(t types.Type) bool {
	if _, ok := types.Unalias(t).(*types.TypeParam); !ok {
		return false
	}
	_, slice := core(t).(*types.Slice)
	return !slice && !isString(t)
}

// containsCall reports whether evaluating e may call a function or
// receive from a channel (function literals are not entered).
func containsCall(info *types.Info, e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found {
			return false
		}
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if tv, ok := info.Types[x.Fun]; ok && tv.IsType() {
				return true
			}
			if id := identOf(x.Fun); id != nil {
				if b, ok := info.Uses[id].(*types.Builtin); ok {
					switch b.Name() {
					case "len", "cap", "min", "max", "complex", "real", "imag", "new", "make", "append", "Sizeof", "Alignof", "Offsetof":
						return true
					}
				}
			}
			found = true
		case *ast.UnaryExpr:
			if x.Op == token.ARROW {
				found = true
			}
		}
		return !found
	})
	return found
}

// cancelArgs wraps the CancelFuncs handed to an untraced function, which
// calls them where no hook sees it (t.Cleanup(cancel), time.AfterFunc(d,
// cancel)), in rt.CtxCancelLater: the release is recorded when it does.
func (r *rewriter) cancelArgs(x *ast.CallExpr, fn *types.Func) {
	if fn == nil || fn.Pkg() == nil || r.traced(fn.Pkg().Path()) || x.Ellipsis.IsValid() {
		return
	}
	for _, a := range x.Args {
		if t := typeOf(r.info, a); isCancelFunc(t) {
			r.cancelLater(a, t)
		}
	}
}

// isErrorType reports whether t is the predeclared error.
func isErrorType(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}

// isNamedIn reports whether t is the type pkg.name.
func isNamedIn(t types.Type, pkg, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == pkg && n.Obj().Name() == name
}

// isPtrToNamedIn reports whether t is *pkg.name.
func isPtrToNamedIn(t types.Type, pkg, name string) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	return ok && isNamedIn(p.Elem(), pkg, name)
}

// rootName is the name of the variable a plain expression starts from.
func rootName(e ast.Expr) string {
	for {
		switch x := unparen(e).(type) {
		case *ast.Ident:
			return x.Name
		case *ast.SelectorExpr:
			e = x.X
		default:
			return ""
		}
	}
}

// lastOperand is the last argument of x whose evaluation a hook may
// follow: not a constant, an untyped value or a type (they would take the
// hook's type), not f(g()) with g's several results; x.Fun if there is
// none. A hook wrapped around it runs after every other operand of the
// call is evaluated, just before the call.
func (r *rewriter) lastOperand(x *ast.CallExpr) ast.Expr {
	for i := len(x.Args) - 1; i >= 0; i-- {
		if a := x.Args[i]; !r.inlineValue(a) && !r.isType(a) && !isTupleExpr(r.info, a) {
			return a
		}
	}
	return x.Fun
}
