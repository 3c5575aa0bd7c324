package instrument

import (
	"go/ast"
	"go/types"
)

// Calls of package testing's methods of a test that lock the test's mutex
// (and with -test.v the printer's) get rt.TBSync right before and right
// after them (rt/tb.go, rttest/tblock.go): a call statement
//
//	rt.TBSync(t, kind, site); t.Log(x); rt.TBSync(t, kind, site)
//
// and a call with a result (Failed, Skipped)
//
//	rt.TBBool(t, kind, site, rt.TBSyncFalse(t, kind, site) || t.Failed())
//
// The call stays where it was, on the user's frame: t.Log prints its
// caller's line and t.Helper marks its caller. Calls on an interface
// (testing.TB, or an interface of the code's own, as testify's TestingT
// and tHelper) are bracketed when the method has the name and signature of
// one of testing's: rttest checks the dynamic type. The receiver is
// evaluated again, so only a receiver reevaluable allows is bracketed.

// tbMethod is a locking method of testing.common: the lock (rt.TB*
// constants, as text) and its parameters (s: a string, v: ...any).
type tbMethod struct {
	kind   string
	params string
	result bool // returns a bool
}

var tbMethods = map[string]tbMethod{
	"Log":     {kind: "TBLock|" + rtAlias + ".TBPrint", params: "v"},
	"Logf":    {kind: "TBLock|" + rtAlias + ".TBPrint", params: "sv"},
	"Error":   {kind: "TBLock|" + rtAlias + ".TBPrint|" + rtAlias + ".TBAncestors", params: "v"},
	"Errorf":  {kind: "TBLock|" + rtAlias + ".TBPrint|" + rtAlias + ".TBAncestors", params: "sv"},
	"Fatal":   {kind: "TBLock|" + rtAlias + ".TBPrint|" + rtAlias + ".TBAncestors", params: "v"},
	"Fatalf":  {kind: "TBLock|" + rtAlias + ".TBPrint|" + rtAlias + ".TBAncestors", params: "sv"},
	"Skip":    {kind: "TBLock|" + rtAlias + ".TBPrint", params: "v"},
	"Skipf":   {kind: "TBLock|" + rtAlias + ".TBPrint", params: "sv"},
	"SkipNow": {kind: "TBLock"},
	"Fail":    {kind: "TBLock|" + rtAlias + ".TBAncestors"},
	"FailNow": {kind: "TBLock|" + rtAlias + ".TBAncestors"},
	"Helper":  {kind: "TBLock"},
	"Failed":  {kind: "TBRead", result: true},
	"Skipped": {kind: "TBRead", result: true},
}

// tbCall reports whether call is a call of a locking method of a test
// that can be bracketed, and returns the text of its receiver and the
// method.
func (r *rewriter) tbCall(call *ast.CallExpr) (recv string, m tbMethod, ok bool) {
	se, isSel := unparen(call.Fun).(*ast.SelectorExpr)
	if !isSel {
		return "", tbMethod{}, false
	}
	m, known := tbMethods[se.Sel.Name]
	if !known {
		return "", tbMethod{}, false
	}
	sel := r.info.Selections[se]
	if sel == nil || sel.Kind() != types.MethodVal {
		return "", tbMethod{}, false
	}
	fn, _ := sel.Obj().(*types.Func)
	if fn == nil || fn.Pkg() == nil || !tbSignature(fn, m) {
		return "", tbMethod{}, false
	}
	sig := fn.Type().(*types.Signature)
	_, onIface := core(sig.Recv().Type()).(*types.Interface)
	if fn.Pkg().Path() != "testing" && !onIface {
		return "", tbMethod{}, false // a concrete method of the code's own (a logger's Errorf)
	}
	recv, ok = r.reevaluable(se.X)
	if !ok {
		return "", tbMethod{}, false
	}
	if fn.Pkg().Path() == "testing" && !onIface {
		// A promoted method: follow the embedded fields to the test.
		var found bool
		if recv, found = r.tbEmbedded(recv, typeOf(r.info, se.X), sel.Index()); !found {
			return "", tbMethod{}, false
		}
	}
	return recv, m, true
}

// tbArgs returns TBSync's arguments for a call of m on recv.
func (r *rewriter) tbArgs(call *ast.CallExpr, recv string, m tbMethod) string {
	return recv + ", " + rtAlias + "." + m.kind + ", " + r.site(call.Pos())
}

// tbSignature reports whether fn has the signature of testing's method m.
func tbSignature(fn *types.Func, m tbMethod) bool {
	sig := fn.Type().(*types.Signature)
	res := sig.Results()
	if m.result {
		if res.Len() != 1 || !types.Identical(res.At(0).Type(), types.Typ[types.Bool]) {
			return false
		}
	} else if res.Len() != 0 {
		return false
	}
	ps := sig.Params()
	if ps.Len() != len(m.params) || sig.Variadic() != (m.params != "" && m.params[len(m.params)-1] == 'v') {
		return false
	}
	for i, c := range m.params {
		t := ps.At(i).Type()
		switch c {
		case 's':
			if !types.Identical(t, types.Typ[types.String]) {
				return false
			}
		case 'v':
			s, ok := t.(*types.Slice)
			if !ok {
				return false
			}
			it, ok := s.Elem().Underlying().(*types.Interface)
			if !ok || !it.Empty() {
				return false
			}
		}
	}
	return true
}

// tbEmbedded returns the text that reaches the test (a *testing.T, B or
// F, or a testing.TB) from recv, of type t, along the embedded fields of
// path (the method's index path), or false when a field on the way is not
// exported or not a pointer to a test.
func (r *rewriter) tbEmbedded(recv string, t types.Type, path []int) (string, bool) {
	for _, i := range path[:len(path)-1] {
		if isTestType(t) {
			return recv, true
		}
		st := t
		if p, ok := core(st).(*types.Pointer); ok {
			st = p.Elem()
		}
		s, ok := core(st).(*types.Struct)
		if !ok {
			return "", false
		}
		f := s.Field(i)
		if !f.Exported() {
			return "", false
		}
		recv = "(" + recv + ")." + f.Name()
		t = f.Type()
	}
	return recv, isTestType(t)
}

// isTestType reports whether t is *testing.T, *testing.B, *testing.F or
// testing.TB.
func isTestType(t types.Type) bool {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	} else if n, ok := types.Unalias(t).(*types.Named); ok {
		return n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "testing" && n.Obj().Name() == "TB"
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != "testing" {
		return false
	}
	switch n.Obj().Name() {
	case "T", "B", "F":
		return true
	}
	return false
}

// tbStmt brackets the call statement s, in a statement list, when it is
// a call of a locking method of a test without a result.
func (r *rewriter) tbStmt(s *ast.ExprStmt) {
	call, ok := unparen(s.X).(*ast.CallExpr)
	if !ok {
		return
	}
	recv, m, ok := r.tbCall(call)
	if !ok || m.result {
		return
	}
	sync := rtAlias + ".TBSync(" + r.tbArgs(call, recv, m) + ")"
	lo, hi := r.span(s)
	r.ed.insertAt(lo, sync+"; ", lo, hi)
	r.after = append(r.after, sync)
}

// tbResult brackets call when it is a call of a locking method of a test
// with a result; before its other instrumentation (the outer wrap).
func (r *rewriter) tbResult(call *ast.CallExpr) {
	recv, m, ok := r.tbCall(call)
	if !ok || !m.result {
		return
	}
	args := r.tbArgs(call, recv, m)
	lo, hi := r.span(call)
	r.ed.wrap(lo, hi, rtAlias+".TBBool("+args+", "+rtAlias+".TBSyncFalse("+args+") || ", ")")
}
