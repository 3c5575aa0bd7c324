package instrument

import (
	"go/ast"
	"go/types"
	"slices"
)

// ctxArgHook names rt's hook Ctx<suffix> for an argument a of type
// context.Context, ReqCtx<suffix> for an *http.Request (which carries
// one), or "" for any other.
func ctxArgHook(info *types.Info, a ast.Expr, suffix string) string {
	switch t := typeOf(info, a); {
	case isNamedIn(t, "context", "Context"):
		return "Ctx" + suffix
	case isPtrToNamedIn(t, "net/http", "Request"):
		return "ReqCtx" + suffix
	}
	return ""
}

// ctxParentFuncs are package context's functions whose first argument is
// a parent context they register with (propagateCancel); those that
// return a cancel function as well are true.
var ctxParentFuncs = map[string]bool{
	"WithCancel": true, "WithCancelCause": true, "WithTimeout": true, "WithTimeoutCause": true,
	"WithDeadline": true, "WithDeadlineCause": true, "AfterFunc": false,
}

// ctxRegisteringFuncs are standard-library functions (types.Func's
// FullName) that register with the context they are given, or an
// *http.Request's, inside: a WithCancel, WithDeadline or AfterFunc of it,
// which takes its mutex as propagateCancel does (net's connect, tls's
// handshake, database/sql's rows and transactions, net/http's transport).
// Only these: most functions that take a context only read its values or
// wait on its Done channel, and a mutex they do not take would order what
// -race reports.
var ctxRegisteringFuncs = map[string]bool{
	"(*net.Dialer).DialContext":                   true,
	"(*crypto/tls.Dialer).DialContext":            true,
	"(*crypto/tls.Conn).HandshakeContext":         true,
	"os/signal.NotifyContext":                     true,
	"(*database/sql.DB).BeginTx":                  true,
	"(*database/sql.Conn).BeginTx":                true,
	"(*database/sql.DB).QueryContext":             true,
	"(*database/sql.DB).QueryRowContext":          true,
	"(*database/sql.Conn).QueryContext":           true,
	"(*database/sql.Conn).QueryRowContext":        true,
	"(*database/sql.Tx).QueryContext":             true,
	"(*database/sql.Tx).QueryRowContext":          true,
	"(*database/sql.Stmt).QueryContext":           true,
	"(*database/sql.Stmt).QueryRowContext":        true,
	"(*net/http.Client).Do":                       true,
	"(*net/http.Transport).RoundTrip":             true,
	"(*net/http/httputil.ReverseProxy).ServeHTTP": true,
	"golang.org/x/sync/errgroup.WithContext":      true,
}

// ctxParentCall passes the parent context of such a call through
// rt.CtxParent, which records the parent's Done call and mutex as
// propagateCancel takes them (rt's ctxMuObj). A call that returns a
// cancel function passes it through rt.CtxParentOf and itself through
// rt.CtxMade, which keep the new context under its parent for the cancel
// (rt's ctxNode); a standard-library function that registers with its
// context (ctxRegisteringFuncs) passes that context through rt.CtxParent.
func (r *rewriter) ctxParentCall(x *ast.CallExpr, fn *types.Func) {
	if fn == nil || fn.Pkg() == nil {
		return
	}
	if fn.Pkg().Path() != "context" {
		r.ctxRegisteringCall(x, fn)
		return
	}
	made, ok := ctxParentFuncs[fn.Name()]
	if !ok || len(x.Args) == 0 || r.inlineValue(x.Args[0]) || isTupleExpr(r.info, x.Args[0]) {
		return
	}
	lo, hi := r.span(x.Args[0])
	if made {
		r.ed.wrap(lo, hi, rtAlias+".CtxParentOf(", ", "+r.site(x.Args[0].Pos())+")")
		lo, hi = r.span(x)
		r.ed.wrap(lo, hi, rtAlias+".CtxMade(", ")")
		return
	}
	if pf := r.calledFunc(x.Args[0]); pf != nil && pf.Pkg() != nil && pf.Pkg().Path() == "context" &&
		(pf.Name() == "Background" || pf.Name() == "TODO") {
		return // never done: no channel, no mutex
	}
	r.ed.wrap(lo, hi, rtAlias+".CtxParent(", ", "+r.site(x.Args[0].Pos())+")")
}

// ctxType is context.Context, from fn, a function of package context.
func ctxType(fn *types.Func) types.Type {
	if o := fn.Pkg().Scope().Lookup("Context"); o != nil {
		return o.Type()
	}
	return types.Typ[types.Invalid]
}

// ctxRegisteringCall passes the context argument of a call of one of
// ctxRegisteringFuncs, or the *http.Request that carries it, through
// rt.CtxParent or rt.ReqCtxParent.
func (r *rewriter) ctxRegisteringCall(x *ast.CallExpr, fn *types.Func) {
	if !ctxRegisteringFuncs[fn.FullName()] || r.traced(fn.Pkg().Path()) {
		return
	}
	for _, a := range x.Args {
		hook := ctxArgHook(r.info, a, "Parent")
		if hook == "" || r.inlineValue(a) || isTupleExpr(r.info, a) {
			continue
		}
		lo, hi := r.span(a)
		r.ed.wrap(lo, hi, rtAlias+"."+hook+"(", ", "+r.site(a.Pos())+")")
		return
	}
}

// ctxSeenCall records, after a call into untraced code (the standard
// library, an untraced dependency) that takes a context and can fail, an
// acquire of the cancels when that context is done by then (rt.CtxSeen):
// the callee may have returned because it saw the cancel, where racekit
// does not see it, and handed the caller what the canceller made. net/http
// returns context.Cause(ctx), the error an errgroup cancels its context
// with, which another goroutine made (held-out batch BX: a false race on
// go-containerregistry's transport.Error, read by httputil.DumpRequestOut's
// caller while the goroutine whose upload failed wrote it). The context is
// an argument of type context.Context, or an *http.Request, which carries
// one, given as a plain expression (evaluated again after the call).
func (r *rewriter) ctxSeenCall(x *ast.CallExpr, fn *types.Func) {
	if fn == nil || fn.Pkg() == nil || r.traced(fn.Pkg().Path()) {
		return
	}
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Results().Len() == 0 || !isErrorType(sig.Results().At(sig.Results().Len()-1).Type()) {
		return
	}
	for _, a := range x.Args {
		hook := ctxArgHook(r.info, a, "Seen")
		if hook == "" || !plainExpr(r.info, a) || slices.Contains(r.defines, rootName(a)) {
			continue // after the statement, the name may be another variable
		}
		lo, hi := r.span(a)
		r.afterCall(x, hook, string(r.ed.src[lo:hi])+", ")
		return
	}
}
