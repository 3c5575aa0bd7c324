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
// mutex: the receiver is wrapped (rt.CallbackLock), or for a package
// function the first argument (rt.CallbackLockArg, with the package's
// Default object), and rt.CallbackDone follows the call. It returns the
// wraps to add after the operands' own instrumentation (stdCallSite.post).
func (r *rewriter) callbackLockCall(x *ast.CallExpr, fn *types.Func) (post func()) {
	if fn == nil || fn.Pkg() == nil || r.noBarrier[x] {
		return nil
	}
	field, ok := callbackLocks[stdKey(fn)]
	if !ok {
		return nil
	}
	se, ok := unparen(x.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	site := r.site(x.Pos())
	c := &stdCallSite{r: r, x: x, fn: fn}
	sig := fn.Type().(*types.Signature)
	if sig.Recv() != nil {
		hook, args := "CallbackLock", ""
		if field == slogHandler {
			hook = "SlogCallback"
		} else {
			layout, ok := lockLayout(fn, field)
			if !ok {
				return nil
			}
			args = ", " + layout
		}
		if r.info.Selections[se] == nil || len(r.info.Selections[se].Index()) != 1 {
			return nil // a method promoted through an embedded field: not marked
		}
		if isPointer(typeOf(r.info, se.X)) {
			c.wrap(se.X, rtAlias+"."+hook+"(", args+", "+site+")")
		} else if r.addressable(se.X) {
			c.wrap(se.X, "(*"+rtAlias+"."+hook+"(&", args+", "+site+"))")
		} else {
			return nil
		}
	} else {
		pkg, isIdent := unparen(se.X).(*ast.Ident)
		def, _ := fn.Pkg().Scope().Lookup("Default").(*types.Func)
		if !isIdent || def == nil || len(x.Args) == 0 || r.isType(x.Args[0]) || isTupleExpr(r.info, x.Args[0]) {
			return nil
		}
		if tv, ok := r.info.Types[x.Args[0]]; !ok || tv.IsNil() {
			return nil // (an untyped constant takes its default type: string or any, as the parameter)
		}
		out, ok := def.Type().(*types.Signature).Results().At(0).Type().(*types.Pointer)
		if !ok {
			return nil
		}
		hook, args := "SlogCallbackArg", ""
		if field != slogHandler {
			obj, _, _ := types.LookupFieldOrMethod(out, true, fn.Pkg(), fn.Name())
			m, _ := obj.(*types.Func)
			if m == nil {
				return nil
			}
			layout, ok := lockLayout(m, field)
			if !ok {
				return nil
			}
			hook, args = "CallbackLockArg", ", "+layout
		}
		c.wrap(x.Args[0], rtAlias+"."+hook+"(", ", "+pkg.Name+".Default()"+args+", "+site+")")
	}
	r.afterCallArgs(x, "CallbackDone", site)
	return c.post
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
