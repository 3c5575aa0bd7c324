package instrument

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// Quiet functions: a declared function whose body the rewriter left as it
// was (no hook, no BarrierPair, no temporary) and which calls nothing that
// could record an event keeps its original body, without Enter and
// Leave. Nothing is ever recorded inside such a frame, so no event's stack
// would show it, no sampler has an access of it to keep or drop, and the
// offline samplers (which decide at each FuncEnter of a trace) see the
// same calls as the runtime's. What it saves is the point of doing it:
// Enter and a deferred Leave cost about 25 ns a call and make the
// function too big to inline, and Go code is full of small leaf methods
// (raytracer's vector arithmetic: add, sub, scale, dot, norm) that the
// compiler inlines when they are left alone.
//
// A body is quiet when it has no function literal, go, defer, select, send
// or receive, no range over a channel or a function, and every call in it
// is a builtin, a conversion, a call of a quiet function declared in the
// same file (found by a fixpoint), or a static
// call into an untraced package whose receiver and parameters are plain
// values (no pointer, slice, map, channel, interface, func or
// unsafe.Pointer: math.Sqrt, not sort.Slice or fmt.Sprint, which can call
// back into traced code). A function literal is quiet only if it calls no
// function of the package (its Enter is dropped at once: see funcLit).
// Atomic functions (//racekit:atomic), main,
// TestMain and tests keep theirs: their Enter does more than count.
type quietFunc struct {
	fn      *types.Func
	enter   int           // index of its Enter edit in r.ed.edits
	callees []*types.Func // same-file functions it calls
	inline  bool          // an inline wrapper's shape, if not quiet (inline.go)
	site    string        // its declaration's site
}

// quietCalls reports whether body is quiet but for its calls of
// functions of this file, which it returns.
func (r *rewriter) quietCalls(body *ast.BlockStmt) (callees []*types.Func, ok bool) {
	ok = true
	ast.Inspect(body, func(n ast.Node) bool {
		if !ok {
			return false
		}
		switch x := n.(type) {
		case *ast.FuncLit, *ast.GoStmt, *ast.DeferStmt, *ast.SelectStmt, *ast.SendStmt:
			ok = false
		case *ast.UnaryExpr:
			ok = x.Op != token.ARROW
		case *ast.RangeStmt:
			switch core(typeOf(r.info, x.X)).(type) {
			case *types.Chan, *types.Signature:
				ok = false
			}
		case *ast.CallExpr:
			if r.isBuiltin(x.Fun) || r.isType(x.Fun) {
				return true
			}
			fn := r.calledFunc(x)
			if fn == nil || fn.Pkg() == nil {
				ok = false
				return false
			}
			fn = fn.Origin()
			sig := fn.Signature()
			if recv := sig.Recv(); recv != nil && types.IsInterface(recv.Type()) {
				ok = false
				return false
			}
			switch {
			case fn.Pkg() == r.in.Pkg:
				if r.fset.File(fn.Pos()) != r.tf {
					ok = false // another file's function: its Enter is not known here
					return false
				}
				callees = append(callees, fn)
			case r.traced(fn.Pkg().Path()):
				ok = false
			default:
				if recv := sig.Recv(); recv != nil && !plainValue(recv.Type()) {
					ok = false
				}
				for i := 0; ok && i < sig.Params().Len(); i++ {
					ok = plainValue(sig.Params().At(i).Type())
				}
			}
		}
		return ok
	})
	return callees, ok
}

// plainValue reports whether values of type t reach no memory and no code
// beyond themselves: booleans, numbers, strings, and structs and arrays of
// them.
func plainValue(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Kind() != types.UnsafePointer && u.Kind() != types.UntypedNil
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			if !plainValue(u.Field(i).Type()) {
				return false
			}
		}
		return true
	case *types.Array:
		return plainValue(u.Elem())
	}
	return false
}

// dropQuietEnters removes the Enter and Leave of the file's quiet
// functions, and returns them: a candidate stays quiet while every
// function of this file it calls is a quiet candidate too.
func (r *rewriter) dropQuietEnters() map[*types.Func]bool {
	quiet := map[*types.Func]bool{}
	for _, q := range r.quiet {
		quiet[q.fn] = true
	}
	for changed := true; changed; {
		changed = false
		for _, q := range r.quiet {
			if !quiet[q.fn] {
				continue
			}
			for _, c := range q.callees {
				if !quiet[c] {
					quiet[q.fn], changed = false, true
					break
				}
			}
		}
	}
	for _, q := range r.quiet {
		// Edits are only appended after a function's Enter, and a
		// statement's rewrite collapses only edits inside it, so the
		// index still holds; the check keeps a wrong one from erasing
		// another edit.
		if e := &r.ed.edits[q.enter]; quiet[q.fn] && strings.Contains(e.text, ".Enter(") {
			e.text = ""
		} else if !quiet[q.fn] && q.inline {
			r.dropFrame(q.enter, nil, q.site)
		}
	}
	return quiet
}
