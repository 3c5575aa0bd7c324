package instrument

import (
	"go/ast"
	"go/types"
	"strings"
)

// Frames: instrumented code must show its callers the frames it shows
// under go test (runtime.Callers, runtime.Caller, a panic's stack; an
// Example's output may print them). Hooks add none (they return before
// the user's code goes on), and neither may the rewrite: no function of
// racekit's may call a function of the user's in its place.
//
//   - A test function's goroutine does racekit's bookkeeping (rttest) in
//     the function itself: every function of a test file whose first
//     parameter is a named *testing.T or *testing.B begins with
//     "defer rttest.Stop(rttest.Start(t))", one of type func(*testing.PB)
//     with "defer rttest.PBStop(rttest.PBStart(pb))" (testPrologue), and
//     t.Run, b.Run, b.RunParallel, f.Fuzz and synctest.Test pass the
//     user's function on as it is when it has that prologue (a function
//     literal, or a function or method of the package's test files:
//     hasPrologue); else rttest's wrapping variants (RunWrap, ...) call
//     it, one frame more. A file that is not a test file but imports
//     testing (a library that runs tests: cockroachdb/datadriven's Walk,
//     testify's suite) has its t.Run hooked too (testHooks), and its
//     function literals get the prologue as well, so that a literal it
//     passes to t.Run runs as written (datadriven's tests print their
//     stacks).
//   - A go statement whose function is a literal begins that literal with
//     the goroutine's Begin and a deferred GoEnd (goStmt, through litPre),
//     so that the goroutine runs the literal itself, as under go; a go
//     statement of a named function or a function value still runs it
//     from a literal of racekit's (its Begin must come first, and only
//     the literal can carry the child's identity to its goroutine).
//   - m.Run() is rttest.MRunDone(m.Run(), site), called where the user
//     called it.

// testPrologue returns the prologue of a function with type typ of a test
// file, or of a function literal (lit) in another file whose calls of
// package testing are hooked (testHooks): Start and Stop around a function
// whose first parameter is a named *testing.T or *testing.B, PBStart and
// PBStop around a func(*testing.PB); "" for any other. (A function
// declared outside the test files is run by the wrapping variants all the
// same, hasPrologue: it needs none.)
func (r *rewriter) testPrologue(typ *ast.FuncType, lit bool) string {
	if !(r.in.IsTest || lit && r.testHooks()) || typ.Params == nil || len(typ.Params.List) == 0 || len(typ.Params.List[0].Names) == 0 {
		return ""
	}
	name := typ.Params.List[0].Names[0].Name
	if name == "_" {
		return ""
	}
	switch types.TypeString(r.info.TypeOf(typ.Params.List[0].Type), nil) {
	case "*testing.T", "*testing.B":
		return "defer " + testAlias + ".Stop(" + testAlias + ".Start(" + name + ")); "
	case "*testing.PB":
		if typ.Params.NumFields() == 1 && (typ.Results == nil || typ.Results.NumFields() == 0) {
			return "defer " + testAlias + ".PBStop(" + testAlias + ".PBStart(" + name + ")); "
		}
	}
	return ""
}

// wrapArg: the hooks of package testing's calls that run a function of
// the user's on a goroutine of the framework's, and the index of that
// function among the call's arguments.
var wrapArg = map[string]int{
	"Run":          1, // t.Run(name, f)
	"RunB":         1, // b.Run(name, f)
	"RunParallel":  0, // b.RunParallel(body)
	"Fuzz":         0, // f.Fuzz(ff)
	"SynctestTest": 1, // synctest.Test(t, f)
}

// testHook returns the name of hook h for a call with arguments args: the
// wrapping variant of a hook of wrapArg when the function passed may not
// begin with testPrologue's prologue.
func (r *rewriter) testHook(h hook, args []ast.Expr) hook {
	i, ok := wrapArg[h.name]
	if !ok || !h.test {
		return h
	}
	switch {
	case len(args) == 1 && isTupleExpr(r.info, args[0]):
		// t.Run(named(tc)): the function is a result of that call.
		call, isCall := unparen(args[0]).(*ast.CallExpr)
		ok = isCall && r.returnsPrologue(call, i)
	case i < len(args):
		ok = r.hasPrologue(args[i])
	default:
		ok = false
	}
	if !ok {
		h.name += "Wrap"
	}
	return h
}

// hasPrologue reports whether the function e evaluates to begins with
// testPrologue's prologue: a function literal of this file that has one,
// or a function or method declared in a test file of this package with
// such a first parameter (a method value's wrapper is not a frame).
func (r *rewriter) hasPrologue(e ast.Expr) bool {
	var fn *types.Func
	switch x := unparen(e).(type) {
	case *ast.FuncLit:
		return r.testPrologue(x.Type, true) != ""
	case *ast.CallExpr:
		return r.returnsPrologue(x, 0)
	case *ast.Ident:
		fn, _ = r.info.Uses[x].(*types.Func)
	case *ast.SelectorExpr:
		if sel := r.info.Selections[x]; sel != nil {
			if sel.Kind() == types.MethodVal {
				fn, _ = sel.Obj().(*types.Func)
			}
		} else {
			fn, _ = r.info.Uses[x.Sel].(*types.Func)
		}
	}
	if fn == nil || fn.Pkg() != r.in.Pkg || !strings.HasSuffix(r.fset.Position(fn.Pos()).Filename, "_test.go") {
		return false
	}
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Params().Len() == 0 || sig.TypeParams().Len() > 0 {
		return false
	}
	p := sig.Params().At(0)
	if p.Name() == "" || p.Name() == "_" {
		return false
	}
	switch types.TypeString(p.Type(), nil) {
	case "*testing.T", "*testing.B":
		return true
	case "*testing.PB":
		return sig.Params().Len() == 1 && sig.Results().Len() == 0
	}
	return false
}

// returnsPrologue reports whether call calls a function of this file
// (not a method, not generic) whose every return statement returns, as
// its result k, a function that has testPrologue's prologue: a test
// factory, t.Run(name, makeTest(tc)), or t.Run(makeNamed(tc)) (k 1).
func (r *rewriter) returnsPrologue(call *ast.CallExpr, k int) bool {
	id, ok := unparen(call.Fun).(*ast.Ident)
	if !ok {
		return false
	}
	fn, _ := r.info.Uses[id].(*types.Func)
	if fn == nil || fn.Pkg() != r.in.Pkg {
		return false
	}
	var decl *ast.FuncDecl
	for _, d := range r.in.File.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Type.TypeParams == nil && fd.Body != nil && r.info.Defs[fd.Name] == fn {
			decl = fd
		}
	}
	if decl == nil || decl.Type.Results.NumFields() != k+1 || r.factories[fn] {
		return false // or a factory that calls itself
	}
	if r.factories == nil {
		r.factories = map[*types.Func]bool{}
	}
	r.factories[fn] = true
	defer delete(r.factories, fn)
	ok, returns := true, 0
	ast.Inspect(decl.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false // its returns are its own
		case *ast.ReturnStmt:
			returns++
			if len(x.Results) != k+1 || !r.hasPrologue(x.Results[k]) {
				ok = false
			}
		}
		return ok
	})
	return ok && returns > 0
}
