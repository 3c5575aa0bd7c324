package instrument

// Call sites: every call in traced code is a site of its function, with
// the traced function it calls (trace.Site.Call). The trace records no
// event at a call; the analysis picks, when a function is entered, the
// call of its caller it came from, so that a report's outer frames show
// the calls' lines, as Go's race reports do, not their functions' last
// recorded accesses.

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// callSite is a call noted while its function was rewritten.
type callSite struct {
	fn     string       // the calling function, as its sites name it
	at     token.Pos    // where reports show the call (callPos)
	end    token.Pos    // its closing parenthesis
	callee string       // the traced function called; "" when not known; ".M" for an interface's method M
	lit    *ast.FuncLit // a function literal called where it is written: its name once known (litNames)
}

// noteCall notes the call x of the function being rewritten.
func (r *rewriter) noteCall(x *ast.CallExpr) {
	if r.fn == "" || !x.Rparen.IsValid() {
		return
	}
	callee, ok := r.tracedCallee(x)
	if !ok {
		return
	}
	lit, _ := unparen(x.Fun).(*ast.FuncLit)
	if !r.calledLits[lit] {
		lit = nil // a defer statement's: its frame shows the function's end, not the call
	}
	r.calls = append(r.calls, callSite{fn: r.fn, at: callPos(r.fset, x), end: x.Rparen, callee: callee, lit: lit})
}

// callPos is the position a report shows for the call x: the called name
// (the method's, for x.M()) on the line of the opening parenthesis, which
// is the line Go's tracebacks give a call; the parenthesis when the name
// is on another line.
func callPos(fset *token.FileSet, x *ast.CallExpr) token.Pos {
	var name ast.Node
	switch f := unparen(x.Fun).(type) {
	case *ast.Ident:
		name = f
	case *ast.SelectorExpr:
		name = f.Sel
	}
	if name != nil && fset.PositionFor(name.Pos(), false).Line == fset.PositionFor(x.Lparen, false).Line {
		return name.Pos()
	}
	return x.Lparen
}

// tracedCallee names the function x calls as its sites name it (funcName)
// when that is known statically and traced; "." and the method's name for
// an interface's method (trace.Call.Func: the analysis then tells apart
// two interface calls of one function by the method entered, as
// urfave/cli's flagSet's c.WithSeparatorSpec(spec) and f.Apply(set)); ""
// when x may enter traced code otherwise: a func value, or an untraced
// function (standard library or not) handed a func or an interface,
// which may call it back. ok is false when x cannot enter traced code:
// an untraced function handed neither (sync.Mutex.Lock, atomic.AddInt64).
func (r *rewriter) tracedCallee(x *ast.CallExpr) (name string, ok bool) {
	fn := r.calledFunc(x)
	if fn == nil || fn.Pkg() == nil {
		return "", true
	}
	fn = fn.Origin()
	sig := fn.Signature()
	if recv := sig.Recv(); recv != nil && types.IsInterface(recv.Type()) {
		return "." + fn.Name(), true
	}
	if !r.traced(fn.Pkg().Path()) {
		return "", mayCallBack(sig)
	}
	name = runtimeName(fn)
	if fn.Pkg().Name() == "main" {
		// A main package's functions are named main.f in its sites.
		name = "main" + strings.TrimPrefix(name, fn.Pkg().Path())
	}
	return name, true
}

// mayCallBack reports whether a function of signature sig is handed a
// func or an interface (its receiver or a parameter), through which it
// may call traced code.
func mayCallBack(sig *types.Signature) bool {
	callable := func(t types.Type) bool {
		if s, ok := t.Underlying().(*types.Slice); ok {
			t = s.Elem() // a variadic parameter
		}
		switch t.Underlying().(type) {
		case *types.Signature, *types.Interface:
			return true
		}
		return false
	}
	if sig.Recv() != nil && callable(sig.Recv().Type()) {
		return true
	}
	for v := range sig.Params().Variables() {
		if callable(v.Type()) {
			return true
		}
	}
	return false
}

// callTable makes the noted calls sites of their functions and returns
// their table for rt.RegisterFileCalls: (site, callee's index in the
// file's function names plus 1, or 0 when not known, end line, end
// column) quadruples.
func (r *rewriter) callTable() []uint32 {
	out := make([]uint32, 0, 4*len(r.calls))
	for _, c := range r.calls {
		k := r.siteIn(c.at, c.fn, false)
		if c.lit != nil {
			c.callee = r.litNames[c.lit]
		}
		callee := 0
		if c.callee != "" {
			callee = r.funcIndex(c.callee) + 1
		}
		end := r.fset.PositionFor(c.end, false)
		out = append(out, uint32(k), uint32(callee), uint32(end.Line), uint32(end.Column))
	}
	return out
}
