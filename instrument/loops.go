package instrument

// For and range statements: loop regions for sampling (a second copy of
// the body for iterations that record nothing), per-iteration variables,
// ranges over channels and the elements a range reads.

import (
	"go/ast"
	"go/token"
	"go/types"
	"go/version"
	"strings"
)

// rangeStmt instruments a range loop. Over a map, the map is read; over a
// channel, each iteration is a receive; over a slice (or pointer to array)
// with a value variable, each iteration reads its element.
func (r *rewriter) rangeStmt(x *ast.RangeStmt, label *ast.LabeledStmt) {
	if r.rangeLoop(x) { // fillloop.go
		return
	}
	t := core(typeOf(r.info, x.X))
	canWrap := label == nil || !r.gotoLabels[r.labelObj(label)]
	switch {
	case isChan(t):
		r.rd(x.X)
		m := r.mark()
		defer r.rangeIterVars(x, label)()
		r.block(x.Body.List)
		if !canWrap {
			r.rangeChan(x, label, true)
			return
		}
		loop := ""
		if r.flagged(m) {
			// Before rangeChan renders the body into its replacement.
			loop = r.tmp()
			r.loopBody(x.Body, loop, r.rawCopyOK(x.Body, m))
		}
		r.rangeChan(x, label, false)
		if loop != "" {
			r.loopWrap(x, label, loop)
		}
		return
	case isMap(t):
		// A range that names a key or value sees the entries in an order:
		// under control, rt's MRange makes it the seed's (rt/maprange.go).
		// It needs range-over-func, so the file's language version decides.
		hook := ".MR("
		if (x.Key != nil && !isBlank(x.Key) || x.Value != nil && !isBlank(x.Value)) && r.rangeFunc() {
			hook = ".MRange("
		}
		lo, hi := r.span(x.X)
		r.ed.wrap(lo, hi, rtAlias+hook, ", "+r.asite(x.X.Pos())+")")
		r.rd(x.X)
		m := r.mark()
		defer r.rangeIterVars(x, label)()
		r.block(x.Body.List)
		r.loopRegion(x, x.Body, label, m)
		return
	case (isSlice(t) || isPtrToArray(t)) && x.Value != nil && !isBlank(x.Value) && x.Tok == token.DEFINE && canWrap && !r.norace:
		r.rd(x.X)
		m := r.mark()
		defer r.rangeIterVars(x, label)()
		r.block(x.Body.List)
		loop := r.tmp()
		r.rangeElems(x, label, loop, r.rawCopyOK(x.Body, m)) // each iteration reads its element
		r.loopWrap(x, label, loop)
		return
	}
	if !r.rangeUnevaluated(x) {
		r.rd(x.X)
	}
	if x.Tok == token.ASSIGN {
		// Each iteration assigns the iteration variables (before the
		// body, so in the enclosing region).
		if x.Key != nil {
			r.lv(x.Key, "W")
		}
		if x.Value != nil {
			r.lv(x.Value, "W")
		}
	}
	m := r.mark()
	defer r.rangeIterVars(x, label)()
	if _, ok := t.(*types.Signature); ok {
		// The body runs inside the iterator's yield: a return there
		// leaves the iterator's frame first (no rt.Ret: see ret).
		r.inRangeFunc++
		defer func() { r.inRangeFunc-- }()
	}
	r.block(x.Body.List)
	r.loopRegion(x, x.Body, label, m)
}

// rangeUnevaluated reports whether Go does not evaluate x's range
// expression: an array or a pointer to one, with no call or receive in it
// (len of it is a constant), and no value variable (the spec's
// For statements with range clause). for i := range p.segs reads nothing,
// not p nor the array (coocood/freecache's metrics loop over its
// segments, beside a Clear that writes them under their locks).
func (r *rewriter) rangeUnevaluated(x *ast.RangeStmt) bool {
	t := typeOf(r.info, x.X)
	return (isArray(t) || isPtrToArray(t)) && x.Value == nil && !containsCall(r.info, x.X)
}

// rangeIterVars is allocIterVars for the variables range x (labelled by
// label, if any) declares; the caller calls what it returns once x is
// rendered. Before go1.22 they are one pair per execution of the loop,
// created before its first iteration: the first iteration records them,
// behind a flag that a block around the loop declares (put around the
// statement last, after the rewrites that render it anew). The range's own
// assignments of them are not recorded, so nothing of theirs comes before.
// A range over a channel is rewritten into a loop that declares its
// variable in each iteration (rangeChan), whatever the version.
func (r *rewriter) rangeIterVars(x *ast.RangeStmt, label *ast.LabeledStmt) func() {
	none := func() {}
	if x.Tok != token.DEFINE {
		return none
	}
	if r.perIterationVars() {
		r.allocIterVars(x.Body, x.Key, x.Value)
		return none
	}
	if label != nil && r.gotoLabels[r.labelObj(label)] {
		return none // left as it is, with no block around it
	}
	var b strings.Builder
	for _, e := range []ast.Expr{x.Key, x.Value} {
		if id, ok := e.(*ast.Ident); ok {
			if v, _ := r.info.Defs[id].(*types.Var); v != nil && r.shared[v] && id.Name != "_" {
				b.WriteString(r.allocVar("Alloc", id.Name, id.Pos()) + "; ")
			}
		}
	}
	if b.Len() == 0 {
		return none
	}
	lo, _ := r.span(x.Body)
	if isChan(core(typeOf(r.info, x.X))) {
		r.ed.insertAt(lo+1, " "+b.String(), lo+1, lo+1)
		return none
	}
	first := r.tmp()
	r.ed.insertAt(lo+1, " if !"+first+" { "+first+" = true; "+b.String()+"};", lo+1, lo+1)
	return func() {
		olo, ohi := r.outerSpan(x, label)
		r.ed.wrap(olo, ohi, "{ var "+first+" bool; ", " }")
	}
}

// forStmt instruments a for loop. A condition that makes an access hook
// is the iteration's, not the enclosing region's (the loop region would
// otherwise record it at each check):
//
//	for init; cond; post { body }
//
// becomes, in a loop region,
//
//	{ L := rt.LoopOf(F); for init; ; post { if F := L.Iter(); F { if !(cond) { break }; body } else { if !(cond as written) { break }; body as written } } }
//
// which checks the condition where it did (continue runs post, then the
// next iteration's check), or without the copy as written when the body
// may not have one (loopBody).
func (r *rewriter) forStmt(x *ast.ForStmt, label *ast.LabeledStmt) {
	if r.fillLoop(x) { // fillloop.go
		return
	}
	// An iteration's own variables (go1.22) are created before its post
	// statement and condition run, but no other goroutine can reach them
	// before its body: those accesses are not recorded (they could not
	// race), and the body's first statement records the variables'
	// creation (allocIterVars), before any access that is.
	var iterVars []ast.Expr
	if a, ok := x.Init.(*ast.AssignStmt); ok && a.Tok == token.DEFINE && r.perIterationVars() {
		iterVars = a.Lhs
	}
	hidden := r.hideVars(iterVars)
	r.stmt(x.Init, false, nil)
	mc := r.mark()
	r.rd(x.Cond)
	mp := r.mark()
	r.stmt(x.Post, false, nil)
	m := r.mark()
	for _, v := range hidden {
		r.shared[v] = true
	}
	r.allocIterVars(x.Body, iterVars...)
	r.block(x.Body.List)
	if !mp.flaggedSince(mc) || label != nil && r.gotoLabels[r.labelObj(label)] {
		r.loopRegion(x, x.Body, label, m)
		return
	}
	raw := r.rawCopyOK(x.Body, m) && (mp.nsites-mc.nsites)/3 == mp.nrec-mc.nrec
	loop := r.tmp()
	lo, hi := r.outerSpan(x, label)
	g := r.newGen(lo)
	g.lit("{ " + loop + " := " + rtAlias + ".LoopOf(" + r.recFlag() + "); " + r.labelText(label) + "for ")
	if x.Init != nil {
		r.piece(g, x.Init)
	}
	g.lit("; ; ")
	if x.Post != nil {
		r.piece(g, x.Post)
	}
	g.lit(" ")
	r.iteration(g, x.Body, loop, raw, "", x.Cond)
	g.lit(" }") // the block of LoopOf
	r.ed.collapse(lo, hi, g.end(hi))
}

// iteration writes into g a loop region's body, from its opening brace to
// its closing one: the iteration's decision, then with raw the two copies
//
//	{ if F := L.Iter(); F { pre; if !(cond) { break }; body } else { if !(cond as written) { break }; body as written } }
//
// and without raw the instrumented body alone, its hooks' flag shadowed
//
//	{ F := L.Iter(); _ = F; pre; if !(cond) { break }; body }
//
// pre (the range element's read) goes in the instrumented copy only; cond
// (a for loop's condition, moved into the iteration) may be nil.
func (r *rewriter) iteration(g *gen, body *ast.BlockStmt, loop string, raw bool, pre string, cond ast.Expr) {
	f := r.recFlag()
	blo, bhi := r.span(body)
	check := func(instrumented bool) {
		if cond == nil {
			return
		}
		clo, chi := r.span(cond)
		text := string(r.ed.src[clo:chi])
		if instrumented {
			text = r.ed.render(clo, chi)
		}
		g.lit("if !(")
		g.piece(clo, text)
		g.lit(") { break }; ")
	}
	if !raw {
		g.lit("{ " + f + " := " + loop + ".Iter(); _ = " + f + "; " + pre)
		check(true)
		g.piece(blo+1, r.ed.render(blo+1, bhi))
		return
	}
	g.lit("{ if " + f + " := " + loop + ".Iter(); " + f + " {")
	if pre != "" || cond != nil {
		g.lit(" " + pre)
	}
	check(true)
	g.piece(blo+1, r.ed.render(blo+1, bhi-1))
	g.lit("} else {")
	if cond != nil {
		g.lit(" ")
	}
	check(false)
	g.piece(blo+1, string(r.ed.src[blo+1:bhi-1]))
	g.lit("} }")
}

// A loopMark is where the rewriter stood before a loop's body: the
// access hooks and the sites registered so far.
type loopMark struct{ nrec, nsites, nflag int }

func (r *rewriter) mark() loopMark { return loopMark{r.nrec, len(r.sites), r.nflag} }

// flaggedSince reports whether hooks given the recording flag were written
// between mark m and mark n.
func (n loopMark) flaggedSince(m loopMark) bool { return n.nrec > m.nrec || n.nflag > m.nflag }

// flagged reports whether hooks given the recording flag were written since m.
func (r *rewriter) flagged(m loopMark) bool { return r.mark().flaggedSince(m) }

// loopRegion makes loop statement s (labelled by label, if any), whose
// body the rewriter has just instrumented from mark m, a sampling region
// of its own (rt/loop.go), if its body has an access hook of this
// function: a block around the statement makes the loop's state from the
// enclosing flag, and each iteration takes its decision at the top of the
// body (loopBody). A loop whose label a goto names cannot be put in a
// block, and keeps the enclosing decision.
func (r *rewriter) loopRegion(s ast.Stmt, body *ast.BlockStmt, label *ast.LabeledStmt, m loopMark) {
	if !r.flagged(m) || label != nil && r.gotoLabels[r.labelObj(label)] {
		return
	}
	loop := r.tmp()
	r.loopBody(body, loop, r.rawCopyOK(body, m))
	r.loopWrap(s, label, loop)
}

// rawCopyOK reports whether body, instrumented from mark m, may also run
// as written: every site its instrumentation registered is an access
// hook's (no synchronization, goroutine, allocation, BarrierPair or
// function literal, which an iteration must record even when its accesses
// are not), and it declares no label (a copy would declare it twice) and
// no append: append's hook is an access hook, but it also records the new
// array a growing append allocates, which must be recorded in unsampled
// code too (rt.grown), or a later access to reused memory would meet a
// dead slice's accesses.
func (r *rewriter) rawCopyOK(body *ast.BlockStmt, m loopMark) bool {
	if len(r.sites)/3-m.nsites/3 != r.nrec-m.nrec {
		return false
	}
	ok := true
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.LabeledStmt:
			ok = false
		case *ast.CallExpr:
			if id, isID := ast.Unparen(n.Fun).(*ast.Ident); isID {
				if b, isB := r.info.Uses[id].(*types.Builtin); isB && b.Name() == "append" {
					ok = false
				}
			}
		}
		return ok
	})
	return ok
}

// loopBody gives the iteration its decision at the top of body. With raw,
// LiteRace's two copies at the granularity of an iteration: the body
// becomes
//
//	{ if F := L.Iter(); F { instrumented body } else { body as written } }
//
// so an iteration whose accesses are not recorded (unsampled, or nothing
// traced: LoopOf) runs the user's code at full speed; without raw, the
// hooks' flag is shadowed by the decision and the hooks skip their
// accesses at a branch each.
func (r *rewriter) loopBody(body *ast.BlockStmt, loop string, raw bool) {
	lo, hi := r.span(body)
	if !raw {
		f := r.recFlag()
		r.ed.insertAt(lo+1, " "+f+" := "+loop+".Iter(); _ = "+f+"; ", lo, hi)
		return
	}
	g := r.newGen(lo)
	r.iteration(g, body, loop, true, "", nil)
	r.ed.collapse(lo, hi, g.end(hi))
}

// loopWrap puts the block making the loop's state around the statement.
func (r *rewriter) loopWrap(s ast.Stmt, label *ast.LabeledStmt, loop string) {
	lo, hi := r.outerSpan(s, label)
	r.ed.wrap(lo, hi, "{ "+loop+" := "+rtAlias+".LoopOf("+r.recFlag()+"); ", " }")
}

// rangeFunc reports whether the file's language version has
// range-over-func (go1.23); an unknown version counts as too old.
func (r *rewriter) rangeFunc() bool {
	v := r.info.FileVersions[r.in.File]
	return v != "" && version.Compare(v, "go1.23") >= 0
}

func (r *rewriter) labelObj(l *ast.LabeledStmt) *types.Label {
	o, _ := r.info.Defs[l.Label].(*types.Label)
	return o
}

func isBlank(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "_"
}

// outerSpan is the span of a statement with its label.
func (r *rewriter) outerSpan(s ast.Stmt, label *ast.LabeledStmt) (int, int) {
	if label != nil {
		return r.span(label)
	}
	return r.span(s)
}

func (r *rewriter) labelText(label *ast.LabeledStmt) string {
	if label == nil {
		return ""
	}
	return label.Label.Name + ": "
}

// rangeChan rewrites for v := range ch { body } as
//
//	{ c := ch; L: for g := rt.RecvRangeG(c, G); ; g = rt.RecvRangeG(c, G) { v, ok := <-c; rt.RecvPostOK(c, g, ok); if !ok { break }; { body } } }
//
// (G: the function's goroutine state, gArg, which RecvRangeG hands on as
// g; continue runs the post statement, as it ran the condition.) A loop
// whose label a goto names (blockless) cannot be inside a block (a goto
// may not jump into one), so it holds the channel in its init:
//
//	L: for c := ch; ; { g := rt.RecvRangeG(c, G); v, ok := <-c; rt.RecvPostOK(c, g, ok); if !ok { break }; { body } }
func (r *rewriter) rangeChan(x *ast.RangeStmt, label *ast.LabeledStmt, blockless bool) {
	lo, hi := r.outerSpan(x, label)
	s := r.site(x.For)
	g := r.newGen(lo)
	c, ok, tok := r.tmp(), r.tmp(), r.tmp()
	pre := rtAlias + ".RecvRangeG(" + c + ", " + s + ", " + r.gArg() + ")"
	if blockless {
		g.lit(r.labelText(label) + "for " + c + " := ")
		r.piece(g, x.X)
		g.lit("; ; { " + tok + " := " + pre + "; ")
	} else {
		g.lit("{ " + c + " := ")
		r.piece(g, x.X)
		g.lit("; " + r.labelText(label) + "for " + tok + " := " + pre + "; ; " + tok + " = " + pre + " { ")
	}
	var assign string
	switch {
	case x.Key == nil || isBlank(x.Key):
		g.lit("_, " + ok + " := <-" + c + "; ")
	case x.Tok == token.DEFINE:
		g.lit(x.Key.(*ast.Ident).Name + ", " + ok + " := <-" + c + "; ")
	default:
		v := r.tmp()
		g.lit(v + ", " + ok + " := <-" + c + "; ")
		r.lv(x.Key, "W")
		assign = r.text(x.Key) + " = " + v + "; "
	}
	fired := ""
	if r.timerChan(x.X) {
		fired = rtAlias + ".TimerFired(" + s + "); "
	}
	g.lit(rtAlias + ".RecvPostOK(" + c + ", " + s + ", " + tok + ", " + ok + "); " + fired + "if !" + ok + " { break }; " + assign)
	r.piece(g, x.Body)
	if blockless {
		g.lit(" }") // the for statement
	} else {
		g.lit(" } }") // the for statement, the block
	}
	r.ed.collapse(lo, hi, g.end(hi))
}

// rangeElems rewrites for k, v := range s { body } as
//
//	{ t := s; L: for k, v := range t { rt.R(&t[k]); body } }
func (r *rewriter) rangeElems(x *ast.RangeStmt, label *ast.LabeledStmt, loop string, raw bool) {
	lo, hi := r.outerSpan(x, label)
	s := r.asite(x.Value.Pos())
	g := r.newGen(lo)
	t := r.tmp()
	key := ""
	if x.Key == nil || isBlank(x.Key) {
		key = r.tmp()
	} else {
		key = x.Key.(*ast.Ident).Name
	}
	g.lit("{ " + t + " := ")
	r.piece(g, x.X)
	g.lit("; " + r.labelText(label) + "for " + key + ", ")
	r.piece(g, x.Value)
	g.lit(" := range " + t + " ")
	r.iteration(g, x.Body, loop, raw, rtAlias+".R(&"+t+"["+key+"], "+s+"); ", nil)
	g.lit(" }")
	r.ed.collapse(lo, hi, g.end(hi))
}
