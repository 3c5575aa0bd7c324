package instrument

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// Inline wrappers: a small function that records nothing itself but calls
// traced functions (xxhash's New() { return NewWithSeed(0) }, whose
// NewWithSeed is var d Digest; d.Reset(seed); return &d) keeps no frame.
// go test -race instruments after the compiler has inlined such functions,
// so what they return by pointer stays on the caller's stack; racekit's
// Enter and deferred Leave made them too big to inline, and the value
// escaped to the heap: a test counting allocations (testing.AllocsPerRun)
// saw one more under racekit than under -race (cespare/xxhash, corpus
// session 74). Left without a frame, and without the allocation records
// of the variables and objects it makes (the runtime's allocation hook
// records them when they escape; on the stack no access to them is
// recorded), the
// function is as inlinable as written. Its site is marked inline
// (trace.Site.Inline) and analyze's stacks put its frame back between its
// caller's and its callee's by their static calls, so reports show the
// frames Go's do.
//
// A function literal called where it is written (func() T { ... }(), not
// deferred, not a goroutine's) is inlined by the compiler as a function
// is, and named after its caller's inlined frames: it is an inline wrapper
// on the same terms (funcLit), its call named by its name in the call
// table (callSite.lit), and a function calling it counts its calls as its
// own (fx's TestDeepStack names the frames of two nested ones).
//
// The shape is kept well inside what the compiler inlines: straight-line
// code (if and switch statements, no loop, label, goto, defer, go, select
// or channel operation; a function literal only if the function calls
// nothing, whatever the literal's own body holds), at most inlineMaxNodes syntax
// nodes, at most inlineMaxCalls calls besides builtins and conversions
// (one: a frame that holds two calls is an atomic region of its own for
// AtomFuzzer and PECAN, Buy's check then act; one that holds a single call
// holds the callee's events only), each of them static (no func value, no interface method, so that the
// frame can be put back) and either into traced code or into untraced code
// with plain-value arguments (quietCalls' rule: no callback into traced
// code under a frame no call names).
const (
	inlineMaxNodes = 40
	inlineMaxCalls = 1
)

// inlineShape reports whether a function's body has an inline wrapper's
// shape.
func (r *rewriter) inlineShape(body *ast.BlockStmt) bool {
	if body == nil || len(body.List) == 0 {
		return false
	}
	ok, nodes, calls, lits := true, 0, 0, 0
	var called map[*ast.FuncLit]bool // inline literals called here
	ast.Inspect(body, func(n ast.Node) bool {
		if !ok || n == nil {
			return false
		}
		if nodes++; nodes > inlineMaxNodes {
			ok = false
			return false
		}
		switch x := n.(type) {
		case *ast.FuncLit:
			// A closure it returns (an option's constructor: return
			// func(o *opts) { o.x = true }): the literal is a function of
			// its own, with its own frame and hooks; under -race the
			// compiler inlines the constructor and names the closure
			// after the function it is inlined into
			// (init.IncludeNetworksWithoutData.func2), which a subtest
			// named by %v of the option shows (oschwald/maxminddb-golang).
			// No call beside it: the compiler's budget. Its own body
			// is not this one's: Go's inliner charges a closure a fixed
			// cost and looks no further into it (cmd/compile's inl.go,
			// OCLOSURE), so a closure that calls, loops or defers, as
			// its hooks do, leaves its constructor inlinable (templ's
			// Raw and FromGoHTML, whose tests count no allocation:
			// held-out a-h/templ, corpus session 89). A literal called
			// where it is written, itself an inline wrapper, is part
			// of this body once inlined: its calls count as this one's.
			if !called[x] {
				lits++
				return false
			}
		case *ast.GoStmt, *ast.DeferStmt, *ast.SelectStmt, *ast.SendStmt,
			*ast.ForStmt, *ast.RangeStmt, *ast.LabeledStmt, *ast.BranchStmt:
			ok = false
		case *ast.UnaryExpr:
			ok = x.Op != token.ARROW
		case *ast.CallExpr:
			if r.isType(x.Fun) {
				return true
			}
			if lit, isLit := ast.Unparen(x.Fun).(*ast.FuncLit); isLit && r.inlineLits[lit] {
				mark(&called, lit)
				return true
			}
			if r.isBuiltin(x.Fun) {
				if id, isID := ast.Unparen(x.Fun).(*ast.Ident); isID && id.Name == "recover" {
					ok = false
				}
				return ok
			}
			fn := r.calledFunc(x)
			if fn == nil || fn.Pkg() == nil {
				ok = false
				return false
			}
			sig := fn.Origin().Signature()
			if recv := sig.Recv(); recv != nil && types.IsInterface(recv.Type()) {
				ok = false
				return false
			}
			if calls++; calls > inlineMaxCalls {
				ok = false
				return false
			}
			if fn.Pkg() != r.in.Pkg && !r.traced(fn.Pkg().Path()) {
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
	return ok && (lits == 0 || calls == 0)
}

// inlineEdits returns the indexes of the edits of a function of body body
// whose frame is edit enter (its Enter) when every later one, up to the end of the
// edits, records the allocation of a declared variable or parameter
// (allocVar's rt.Alloc) or wraps an allocation (isAllocWrap), the edits an
// inline wrapper drops, or belongs to a function literal in it, which
// keeps them. ok is false when any other
// edit was made.
func (r *rewriter) inlineEdits(body *ast.BlockStmt, enter int) (allocs []int, ok bool) {
	var lits [][2]int
	ast.Inspect(body, func(n ast.Node) bool {
		if f, isLit := n.(*ast.FuncLit); isLit {
			lo, hi := r.span(f)
			lits = append(lits, [2]int{lo, hi})
			return false
		}
		return true
	})
	inLit := func(e *edit) bool {
		for _, l := range lits {
			if e.pos > l[0] && e.pos < l[1] && (e.kind != replacement || e.end < l[1]) {
				return true
			}
		}
		return false
	}
	wraps := map[[2]int]bool{} // spans of allocation wraps opened
	for i := enter + 1; i < len(r.ed.edits); i++ {
		e := &r.ed.edits[i]
		switch {
		case inLit(e):
			continue
		case e.kind == replacement:
			return nil, false
		case e.kind == open && isAllocWrap(e.text):
			wraps[[2]int{e.lo, e.hi}] = true
		case e.kind == closing && wraps[[2]int{e.lo, e.hi}]:
		case !isAllocText(e.text):
			return nil, false
		}
		allocs = append(allocs, i)
	}
	return allocs, true
}

// isAllocWrap reports whether an edit opens an allocation's wrap (the wrap
// of new(T), &T{...}, a slice or map literal, make of a slice or map): the
// allocation records an inline wrapper drops with its variables', the
// runtime's allocation hook recording the object when it escapes. Their
// closing edits are the allocation site's arguments. A channel's (MakeChan)
// stays: its message counters know it by it.
func isAllocWrap(text string) bool {
	for _, fn := range [...]string{".New(", ".NewLit(", ".MakeSlice(", ".MakeMap("} {
		if strings.HasPrefix(text, rtAlias+fn) {
			return true
		}
	}
	return false
}

// isAllocText reports whether an edit's text is nothing but rt.Alloc
// calls of variables (allocVar's), separated by semicolons.
func isAllocText(text string) bool {
	any := false
	for part := range strings.SplitSeq(text, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.HasPrefix(part, rtAlias+".Alloc(&") || strings.Count(part, "(") != 1 {
			return false
		}
		any = true
	}
	return any
}

// dropFrame leaves an inline wrapper without its frame: its Enter edit and
// its allocation edits are emptied, and the site of its declaration (site,
// "base+k") is marked inline in the file's table.
func (r *rewriter) dropFrame(enter int, allocs []int, site string) {
	if e := &r.ed.edits[enter]; !strings.Contains(e.text, rtAlias+".Enter(") {
		return // not the edit it should be
	}
	r.ed.edits[enter].text = ""
	for _, i := range allocs {
		r.ed.edits[i].text = ""
	}
	if _, k, ok := strings.Cut(site, "+"); ok {
		if n, err := strconv.Atoi(k); err == nil && 3*n+2 < len(r.sites) {
			r.sites[3*n+2] |= inlineSite
		}
	}
}

// inlineSite marks the declaration of an inline wrapper in the file's site
// table (rt.RegisterFile's inlineSite).
const inlineSite = 1 << 30
