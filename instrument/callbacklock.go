package instrument

import (
	"go/ast"
	"go/types"
)

// Callbacks under a std mutex: log.Logger's output methods format the
// line, then call the Logger's io.Writer holding the Logger's own mutex
// (outMu), so two goroutines' Writes through one Logger never overlap, an
// order Go's race detector sees in std's Lock and Unlock (and so do
// log/slog's TextHandler and JSONHandler, under theirs). racekit does not
// trace std, and a Writer of the program's that relies on it (hashicorp/
// serf's GatedWriter appends to a slice under a read lock) raced. The call
// is marked (rt.CallbackLock on the receiver, rt.CallbackDone after it),
// and the program's Write methods note their entry and return
// (rt.WriteEnter, rt.WriteLeave): a Write entered from inside the marked
// call records an acquire of the mutex and its return the release,
// inside the real critical section.

// callbackLocks are the std functions that call a Write of the program's
// holding a mutex, by stdKey: the mutex's field in the receiver (for a
// package-level function, in the object its package's Default function
// returns), or slogHandler for log/slog's, whose mutex the Logger's
// handler holds (rt.SlogCallback finds it).
var callbackLocks = map[string]string{}

const slogHandler = "slog"

func init() {
	// (Not Fatal: the trace is finished before it, isLogFatal.)
	for _, m := range []string{"Print", "Printf", "Println", "Output", "Panic", "Panicf", "Panicln"} {
		callbackLocks["log.Logger."+m] = "outMu"
		callbackLocks["log."+m] = "outMu"
	}
	for _, m := range []string{"Debug", "Info", "Warn", "Error"} {
		for _, f := range []string{m, m + "Context"} {
			callbackLocks["log/slog.Logger."+f] = slogHandler
			callbackLocks["log/slog."+f] = slogHandler
		}
	}
	for _, f := range []string{"Log", "LogAttrs"} {
		callbackLocks["log/slog.Logger."+f] = slogHandler
		callbackLocks["log/slog."+f] = slogHandler
	}
}

// callbackLockCall marks the call x of fn if fn calls back holding a
// mutex: the receiver is wrapped (rt.CallbackLock, rt.SlogCallback), or
// the first argument (rt.CallbackLockArg, rt.SlogCallbackArg) with the
// object the mutex is in: for a package-level function its package's
// Default object, for a method promoted from an embedded Logger (type L
// struct{ *log.Logger }) the receiver's field, evaluated again (a pure
// receiver only); rt.CallbackDone follows the call. It returns the wraps
// to add after the operands' own instrumentation (stdCallSite.post).
func (r *rewriter) callbackLockCall(x *ast.CallExpr, fn *types.Func) (post func()) {
	if fn == nil || fn.Pkg() == nil || r.noBarrier[x] {
		return nil
	}
	se, ok := unparen(x.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	if logIfaceMethod(fn) {
		// Through an interface whose value may be a *log.Logger: rt
		// looks at the value (rt.CallbackLockAny). Not through an
		// interface embedded in a struct (type LogEntry struct{ Logger },
		// e.Println(...): hyperjumptech/grule-rule-engine): the receiver
		// written is the struct, which rt cannot look into, and its
		// wrapped value is not addressable for the embedded field's read.
		if sel := r.info.Selections[se]; sel == nil || len(sel.Index()) != 1 {
			return nil
		}
		site := r.site(x.Pos())
		c := &stdCallSite{r: r, x: x, fn: fn}
		c.wrap(se.X, rtAlias+".CallbackLockAny(", ", "+site+")")
		r.afterCallArgs(x, "CallbackDone", site)
		return c.post
	}
	field, ok := callbackLocks[stdKey(fn)]
	if !ok {
		return nil
	}
	// The type of the object the mutex is in: the receiver's, or what the
	// package's Default returns.
	sig := fn.Type().(*types.Signature)
	var holder types.Type
	if sig.Recv() != nil {
		holder = sig.Recv().Type()
	} else if def, _ := fn.Pkg().Scope().Lookup("Default").(*types.Func); def != nil && def.Type().(*types.Signature).Results().Len() == 1 {
		holder = def.Type().(*types.Signature).Results().At(0).Type()
	} else {
		return nil
	}
	hook, args := "SlogCallback", ""
	if field != slogHandler {
		layout, ok := lockLayout(holder, field)
		if !ok {
			return nil
		}
		hook, args = "CallbackLock", ", "+layout
	}
	site := r.site(x.Pos())
	c := &stdCallSite{r: r, x: x, fn: fn}
	sel := r.info.Selections[se]
	switch {
	case sig.Recv() != nil && sel != nil && len(sel.Index()) == 1:
		if isPointer(typeOf(r.info, se.X)) {
			c.wrap(se.X, rtAlias+"."+hook+"(", args+", "+site+")")
		} else if r.addressable(se.X) {
			c.wrap(se.X, "(*"+rtAlias+"."+hook+"(&", args+", "+site+"))")
		} else {
			return nil
		}
	case sig.Recv() != nil:
		if sel == nil || !r.markableFirstArg(x) {
			return nil
		}
		path, last, viaPtr, ok := embeddedPath(typeOf(r.info, se.X), sel.Index())
		src, pure := r.reevaluable(se.X)
		if !ok || !pure {
			return nil
		}
		obj := "(" + src + ")" + path
		if !isPointer(last) {
			if !viaPtr && !r.addressable(se.X) {
				return nil
			}
			obj = "&" + obj
		}
		c.wrap(x.Args[0], rtAlias+"."+hook+"Arg(", ", "+obj+args+", "+site+")")
	default:
		pkg, isIdent := unparen(se.X).(*ast.Ident)
		if !isIdent || !r.markableFirstArg(x) {
			return nil
		}
		c.wrap(x.Args[0], rtAlias+"."+hook+"Arg(", ", "+pkg.Name+".Default()"+args+", "+site+")")
	}
	r.afterCallArgs(x, "CallbackDone", site)
	return c.post
}

// markableFirstArg reports whether the first argument of x can pass
// through rt.CallbackLockArg: a value with a type (an untyped constant
// takes its default type: the parameter's, string, or any's), not nil.
func (r *rewriter) markableFirstArg(x *ast.CallExpr) bool {
	if len(x.Args) == 0 || r.isType(x.Args[0]) || isTupleExpr(r.info, x.Args[0]) {
		return false
	}
	tv, ok := r.info.Types[x.Args[0]]
	return ok && !tv.IsNil()
}

// isWriteMethod reports whether d is a method Write([]byte) (int, error):
// an io.Writer a std function may call back (callbackLocks).
func (r *rewriter) isWriteMethod(d *ast.FuncDecl) bool {
	return d.Name.Name == "Write" && r.ioSignature(d)
}

// ioSignature reports whether d is a method of one []byte parameter
// returning (int, error).
func (r *rewriter) ioSignature(d *ast.FuncDecl) bool {
	fn, _ := r.info.Defs[d.Name].(*types.Func)
	if d.Recv == nil || fn == nil {
		return false
	}
	sig := fn.Type().(*types.Signature)
	return sig.Params().Len() == 1 && sig.Results().Len() == 2 && isByteSlice(sig.Params().At(0).Type()) &&
		isBasic(sig.Results().At(0).Type(), types.Int) && sig.Results().At(1).Type().String() == "error"
}

// logIfaceMethod reports whether fn is an interface's method with the name
// and shape of one of log.Logger's output methods (Printf(string, ...any),
// Print(...any), Println(...any), and the Panic ones): a library's logger
// interface, whose value is often a *log.Logger.
func logIfaceMethod(fn *types.Func) bool {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil || !types.IsInterface(sig.Recv().Type()) || !sig.Variadic() || sig.Results().Len() != 0 {
		return false
	}
	params := sig.Params()
	switch fn.Name() {
	case "Print", "Println", "Panic", "Panicln":
		if params.Len() != 1 {
			return false
		}
	case "Printf", "Panicf":
		if params.Len() != 2 || !types.Identical(params.At(0).Type(), types.Typ[types.String]) {
			return false
		}
	default:
		return false
	}
	last, ok := params.At(params.Len() - 1).Type().(*types.Slice)
	return ok && types.IsInterface(last.Elem()) && last.Elem().Underlying().(*types.Interface).Empty()
}

// driverIfaces are database/sql/driver's interfaces whose methods
// database/sql calls holding locks of its own (rt.DriverEnter).
var driverIfaces = []string{"Driver", "Connector", "Conn", "Stmt", "Rows", "Tx", "Result"}

// isDriverMethod reports whether d is an exported method of a type of the
// package (or a pointer to it) that implements one of driverIfaces: a
// database/sql driver's callback, which notes its entry and return
// (rt.DriverEnter, rt.DriverLeave).
func (r *rewriter) isDriverMethod(d *ast.FuncDecl) bool {
	if d.Recv == nil || !d.Name.IsExported() {
		return false
	}
	fn, _ := r.info.Defs[d.Name].(*types.Func)
	if fn == nil {
		return false
	}
	var drv *types.Package
	for _, p := range r.in.Pkg.Imports() {
		if p.Path() == "database/sql/driver" {
			drv = p
		}
	}
	if drv == nil {
		return false
	}
	t := fn.Type().(*types.Signature).Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	for _, name := range driverIfaces {
		o, _ := drv.Scope().Lookup(name).(*types.TypeName)
		if o == nil {
			continue
		}
		iface, ok := o.Type().Underlying().(*types.Interface)
		if !ok {
			continue
		}
		if types.Implements(t, iface) || types.Implements(types.NewPointer(t), iface) {
			return true
		}
	}
	return false
}
