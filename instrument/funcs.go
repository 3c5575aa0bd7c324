package instrument

// Functions: Enter/Leave around a body, parameters recorded allocated,
// function literals, and leaf functions' two copies (LiteRace sampling).

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

func (r *rewriter) funcName(d *ast.FuncDecl) string {
	name := d.Name.Name
	if d.Recv != nil && len(d.Recv.List) == 1 {
		t := d.Recv.List[0].Type
		star := false
		if s, ok := t.(*ast.StarExpr); ok {
			star, t = true, s.X
		}
		switch x := t.(type) {
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		}
		if id, ok := t.(*ast.Ident); ok {
			if star {
				return r.pkgName + ".(*" + id.Name + ")." + name
			}
			return r.pkgName + "." + id.Name + "." + name
		}
	}
	return r.pkgName + "." + name
}

func (r *rewriter) funcDecl(d *ast.FuncDecl) {
	if d.Body == nil || skipFunc(d) {
		return
	}
	r.norace = noraceFunc(d)
	defer func() { r.norace = false }()
	r.fn = r.funcName(d)
	var pre string
	switch {
	case d.Recv == nil && d.Name.Name == "main" && r.in.Pkg.Name() == "main" && !r.in.IsTest:
		pre = "defer " + rtAlias + ".MainExit(); "
	case d.Recv == nil && r.in.IsTest && d.Name.Name == "TestMain":
		pre = "defer " + rtAlias + ".TestMainExit(); "
	case d.Recv == nil && r.in.IsTest && isTestFunc(d):
		pre = "defer " + testAlias + ".Stop(" + testAlias + ".Start(" + r.testParam(d) + ")); "
		r.useTest = true
	case r.testPrologue(d.Type, false) != "": // a test file's function t.Run may be given (testframes.go)
		pre = r.testPrologue(d.Type, false)
		r.useTest = true
	default:
		if buf := r.ioMethodBuf(d); buf != "" {
			pre = rtAlias + ".CallerBuf(" + buf + ", " + r.site(d.Name.Pos()) + "); "
		}
	}
	atomic := atomicFunc(d)
	enter := len(r.ed.edits) // funcBody's first edit: Enter and Leave
	m := r.mark()
	site := r.funcBody(d.Recv, d.Type, d.Body, d.Name.Pos(), pre, atomic)
	var also string
	if r.isWriteMethod(d) {
		// A Write std may call holding a mutex of its own (callbacklock.go).
		also = rtAlias + ".WriteEnter(); defer " + rtAlias + ".WriteLeave(); "
	}
	driver := r.isDriverMethod(d)
	if driver {
		// A callback database/sql makes holding its locks (callbacklock.go).
		also += rtAlias + ".DriverEnter(" + site + "); defer " + rtAlias + ".DriverLeave(" + site + "); "
	}
	if also != "" {
		e := &r.ed.edits[enter]
		for _, l := range []string{".Leave(", ".LeaveRet("} {
			leave := "defer " + rtAlias + l + site + "); "
			e.text = strings.Replace(e.text, leave, leave+also, 1)
		}
	}
	if pre != "" || atomic || driver {
		return // the prologue stays: no quiet or leaf copy drops it
	}
	allocs, inline := r.inlineEdits(d.Body, enter)
	inline = inline && r.inlineShape(d.Body)
	if len(r.ed.edits) == enter+1 {
		if fn, _ := r.info.Defs[d.Name].(*types.Func); fn != nil {
			if callees, ok := r.quietCalls(d.Body); ok {
				r.quiet = append(r.quiet, quietFunc{fn: fn, enter: enter, callees: callees, inline: inline, site: site})
				return
			}
		}
	}
	if inline {
		r.dropFrame(enter, allocs, site) // inline.go
		return
	}
	if len(r.ed.edits) == enter+1 {
		return
	}
	r.leafCopy(d, enter, site, m)
}

// leafCopy gives a leaf function LiteRace's two copies (rt.Sampled): when
// its instrumentation is its Enter and access hooks only (no
// synchronization, goroutine, allocation or BarrierPair; loop regions are
// fine), and it calls nothing that could record (quietCalls; of the
// package's functions only quiet ones of its file, known once the file is
// done: copyLeaves), the body as written runs in the calls the sampler
// skips, and in every call when nothing is traced:
//
//	func f() { if !rt.Sampled(s) { body as written; return }; rec := rt.EnterSampled(s); ...; instrumented body }
//
// Nothing is recorded in such a call, so it needs no frame: the check
// saves Enter, Leave and the hooks' branches.
func (r *rewriter) leafCopy(d *ast.FuncDecl, enter int, site string, m loopMark) {
	if (len(r.sites)-m.nsites)/3 != 1+r.nrec-m.nrec || !r.rawCopyOK(d.Body, r.mark()) || r.assignsParams(d) {
		return // more than Enter's site and access hooks, or a label
	}
	if callees, ok := r.quietCalls(d.Body); ok {
		r.leaves = append(r.leaves, leafFunc{d: d, enter: enter, site: site, callees: callees})
	}
}

// assignsParams reports whether a := at the top of d's body assigns a
// parameter or result (s, ok := m[k] with s a result, ugorji/go/codec): in
// the copy, inside an if block, it would declare a new variable instead.
func (r *rewriter) assignsParams(d *ast.FuncDecl) bool {
	for _, st := range d.Body.List {
		a, ok := st.(*ast.AssignStmt)
		if !ok || a.Tok != token.DEFINE {
			continue
		}
		for _, l := range a.Lhs {
			id, ok := l.(*ast.Ident)
			if !ok || r.info.Defs[id] != nil {
				continue
			}
			if o := r.info.Uses[id]; o != nil && o.Pos() < d.Body.Lbrace {
				return true
			}
		}
	}
	return false
}

// A leafFunc is a candidate for leafCopy: it qualifies if every function
// of the file it calls is quiet (known once the file is done).
type leafFunc struct {
	d       *ast.FuncDecl
	enter   int // index of its Enter edit in r.ed.edits
	site    string
	callees []*types.Func
}

// copyLeaves gives the leaf candidates whose callees are all quiet their
// copy as written: the Enter edit gets the check and the copy before it.
func (r *rewriter) copyLeaves(quiet map[*types.Func]bool) {
next:
	for _, l := range r.leaves {
		for _, c := range l.callees {
			if !quiet[c] {
				continue next
			}
		}
		r.copyLeaf(l.d, l.enter, l.site)
	}
}

func (r *rewriter) copyLeaf(d *ast.FuncDecl, enter int, site string) {
	e := &r.ed.edits[enter]
	if !strings.Contains(e.text, rtAlias+".Enter(") {
		return // not the edit it should be (see dropQuietEnters)
	}
	lo, hi := r.span(d.Body)
	g := r.newGen(lo + 1)
	g.lit(" if !" + rtAlias + ".Sampled(" + site + ") {")
	g.piece(lo+1, string(r.ed.src[lo+1:hi-1]))
	if d.Type.Results.NumFields() == 0 {
		g.lit("; return }; ")
	} else {
		g.lit(" }; ") // the body ends in a terminating statement
	}
	e.text = g.end(lo+1) + strings.Replace(e.text, rtAlias+".Enter(", rtAlias+".EnterSampled(", 1)
}

// isTestFunc reports whether d is a test, benchmark, example or fuzz
// function of a _test.go file.
func isTestFunc(d *ast.FuncDecl) bool {
	n := d.Name.Name
	for _, p := range []string{"Test", "Benchmark", "Example", "Fuzz"} {
		if strings.HasPrefix(n, p) && (len(n) == len(p) || !isLower(n[len(p)])) {
			if p == "Example" {
				return d.Type.Params.NumFields() == 0
			}
			return d.Type.Params.NumFields() == 1
		}
	}
	return false
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// testParam is the argument of rttest.Start for test function d: its
// *testing.T, *testing.B or *testing.F parameter, or nil (an example, an
// unnamed parameter, or a function that only looks like a test).
func (r *rewriter) testParam(d *ast.FuncDecl) string {
	if d.Type.Params.NumFields() != 1 || len(d.Type.Params.List[0].Names) != 1 {
		return "nil"
	}
	name := d.Type.Params.List[0].Names[0].Name
	switch types.TypeString(r.info.TypeOf(d.Type.Params.List[0].Type), nil) {
	case "*testing.T", "*testing.B", "*testing.F":
		if name != "_" {
			return name
		}
	}
	return "nil"
}

// funcBody instruments a function body: FuncEnter/FuncExit around it
// (and inside them an atomic region, if atomic), then its statements.
func (r *rewriter) funcBody(recv *ast.FieldList, typ *ast.FuncType, body *ast.BlockStmt, declPos token.Pos, pre string, atomic bool) (site string) {
	s := r.site(declPos)
	lo, hi := r.span(body)
	region := ""
	if atomic {
		region = rtAlias + ".AtomicBegin(" + s + "); defer " + rtAlias + ".AtomicEnd(" + s + "); "
	}
	f := r.recFlag()
	enter := len(r.ed.edits)
	leave, retSite := ".Leave(", ""
	if defersCalls(body) {
		leave, retSite = ".LeaveRet(", s
	}
	r.ed.insertAt(lo+1, " "+pre+f+" := "+rtAlias+".Enter("+s+"); _ = "+f+"; defer "+rtAlias+leave+s+"); "+region, lo, hi)
	r.allocParams(lo+1, lo, hi, recv, typ.Params, typ.Results)
	var named []*ast.Ident
	if typ.Results != nil {
		for _, f := range typ.Results.List {
			named = append(named, f.Names...)
		}
	}
	r.results = append(r.results, named)
	r.retSites = append(r.retSites, retSite)
	inRangeFunc, pkgVarInit := r.inRangeFunc, r.pkgVarInit // a function literal's body is its own
	r.inRangeFunc, r.pkgVarInit = 0, false
	defer func() { r.inRangeFunc, r.pkgVarInit = inRangeFunc, pkgVarInit }()
	r.gUse = append(r.gUse, false)
	r.block(body.List)
	if retSite != "" && typ.Results.NumFields() == 0 && fallsOff(body) {
		r.ed.insertAt(hi-1, "; "+rtAlias+".Ret("+retSite+") ", lo, hi)
	}
	r.retSites = r.retSites[:len(r.retSites)-1]
	if r.gUse[len(r.gUse)-1] {
		// Hooks took the goroutine's state: Enter returns it too.
		g := r.gVar()
		e := &r.ed.edits[enter]
		e.text = strings.Replace(e.text, f+" := "+rtAlias+".Enter(", f+", "+g+" := "+rtAlias+".EnterG(", 1)
		e.text = strings.Replace(e.text, "_ = "+f+"; ", "_ = "+f+"; _ = "+g+"; ", 1)
	}
	r.gUse = r.gUse[:len(r.gUse)-1]
	r.results = r.results[:len(r.results)-1]
	return s
}

// allocParams records, at the top of a function body (pos, in the body
// spanning [lo, hi)), the creation of each escaping receiver, parameter
// and result the function declares: new variables at each call, as a
// declared one is at each execution (allocVars). A captured parameter
// lives in the heap, and another call's parameter, or any object, may
// have had its address before.
func (r *rewriter) allocParams(pos, lo, hi int, lists ...*ast.FieldList) {
	var b strings.Builder
	for _, l := range lists {
		if l == nil {
			continue
		}
		for _, fld := range l.List {
			for _, id := range fld.Names {
				if v, ok := r.info.Defs[id].(*types.Var); ok && r.shared[v] && id.Name != "_" {
					b.WriteString(r.allocVar("Alloc", id.Name, id.Pos()) + "; ")
				}
			}
		}
	}
	if b.Len() > 0 {
		r.ed.insertAt(pos, b.String(), lo, hi)
	}
}

func (r *rewriter) funcLit(f *ast.FuncLit) {
	outer := r.fn
	r.lits[outer]++
	// Named as the compiler names it: F.func1, and a literal inside it
	// F.func1.1 (cmd/compile's closureName), as Go's reports show it.
	sep := ".func"
	if r.litDepth > 0 {
		sep = "."
	}
	r.fn = outer + sep + strconv.Itoa(r.lits[outer])
	r.litDepth++
	if r.litNames == nil {
		r.litNames = map[*ast.FuncLit]string{}
	}
	r.litNames[f] = r.fn
	enter := len(r.ed.edits)
	nrec, nflag := r.nrec, r.nflag // the literal's hooks take its own flag, not its loops'
	// A go statement's Begin, a test function's Start (testframes.go).
	prologue := r.testPrologue(f.Type, true)
	pre := r.litPre[f] + prologue
	if prologue != "" {
		r.useTest = true
	}
	norace := r.norace // a literal is a function of its own: instrumented whole
	r.norace = false
	site := r.funcBody(nil, f.Type, f.Body, f.Pos(), pre, false)
	r.norace = norace
	r.nrec, r.nflag = nrec, nflag
	if len(r.ed.edits) == enter+1 && prologue == "" {
		// A quiet literal (quiet.go) loses its Enter now, before an
		// enclosing statement's rewrite renders it into a replacement;
		// the functions of the file it might call are not known yet.
		if callees, ok := r.quietCalls(f.Body); ok && len(callees) == 0 {
			r.ed.edits[enter].text = ""
			if p := r.litPre[f]; p != "" {
				r.ed.edits[enter].text = " " + p // its goroutine's Begin
			}
		}
	}
	if pre == "" && r.calledLits[f] && strings.Contains(r.ed.edits[enter].text, rtAlias+".Enter(") {
		// Called where it is written, it is inlined as a function is
		// (fx's TestDeepStack names the frames of two such literals,
		// which the compiler inlines and names after their caller).
		if allocs, ok := r.inlineEdits(f.Body, enter); ok && r.inlineShape(f.Body) {
			r.dropFrame(enter, allocs, site) // inline.go
			mark(&r.inlineLits, f)
		}
	}
	r.fn = outer
	r.litDepth--
}

// ---- statements ----

// defersCalls reports whether body has a defer statement of its own (not
// in a function literal's body).
func defersCalls(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.DeferStmt:
			found = true
		}
		return !found
	})
	return found
}

// fallsOff reports whether control may reach the end of body: its last
// statement is not a return, a panic, a goto or an endless for.
func fallsOff(body *ast.BlockStmt) bool {
	if len(body.List) == 0 {
		return true
	}
	switch x := body.List[len(body.List)-1].(type) {
	case *ast.ReturnStmt, *ast.BranchStmt:
		return false
	case *ast.ExprStmt:
		if c, ok := x.X.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "panic" {
				return false
			}
		}
	case *ast.ForStmt:
		return x.Cond != nil
	}
	return true
}

// ret puts rt.Ret before the return statement x of a function that defers
// calls (funcBody), when its results can be evaluated after the frame
// left the trace with nothing recorded: none (a bare return whose named
// results are recorded before it), constants, nil, unshared locals. Other
// returns keep the frame during the deferred calls, and so do those in the
// body of a range over a function: that body runs inside the iterator's
// call of yield, whose frame is above the function's until the iterator
// returns (Ret took the iterator's frame for the function's, and its
// Leave then popped a frame that was not there: minio-go's retry loop).
func (r *rewriter) ret(x *ast.ReturnStmt, inList bool) {
	if len(r.retSites) == 0 || !inList || r.inRangeFunc > 0 {
		return
	}
	site := r.retSites[len(r.retSites)-1]
	if site == "" {
		return
	}
	for _, e := range x.Results {
		if tv, ok := r.info.Types[e]; ok && (tv.Value != nil || tv.IsNil()) {
			continue
		}
		if r.localVar(e, false) != nil {
			continue
		}
		return
	}
	lo, hi := r.span(x)
	r.ed.insertAt(lo, rtAlias+".Ret("+site+"); ", lo, hi)
}
