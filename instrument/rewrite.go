package instrument

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"go/version"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Names the rewritten code uses. The prefix keeps them apart from user
// identifiers.
const (
	rtAlias   = "_rk"
	testAlias = "_rkt"
)

// RTModule is the module path of the runtime copy that instrumented code
// imports (see Prepare).
const RTModule = "racekit.dev/rt"

// FileInput is one type-checked file to instrument.
type FileInput struct {
	Fset    *token.FileSet
	File    *ast.File
	Src     []byte // the file's bytes, as parsed
	Info    *types.Info
	Pkg     *types.Package
	Path    string // the file name the compiler sees (absolute)
	IsTest  bool   // a _test.go file
	HasMain bool   // the package has a TestMain (for test files: handled by the caller)

	// Traced reports whether a package (by import path, without the
	// _test suffix) is instrumented: calls into other packages become
	// BarrierPairs (barrier.go). Nil: only the file's own package.
	Traced func(pkgPath string) bool
	// Excluded reports whether a package the user could trace was
	// excluded (--exclude): its calls keep their BarrierPairs alone, with
	// no rt.DepBefore/DepAfter order (a dependency's object, depReceiver).
	Excluded func(pkgPath string) bool
}

// FileResult is an instrumented file.
type FileResult struct {
	Src     []byte
	Sites   int  // sites registered
	Changed bool // false: nothing to record, Src is the input
}

// File instruments one file. It never fails on valid, type-checked input;
// an error means a construct it cannot handle, and the caller leaves the
// file as it is.
func File(in FileInput) (res FileResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("instrumenting %s: internal error: %v", in.Path, p)
		}
	}()
	r := &rewriter{
		in:      in,
		fset:    in.Fset,
		tf:      in.Fset.File(in.File.Pos()),
		info:    in.Info,
		ed:      &editor{src: in.Src},
		funcIdx: map[string]int{},
		lits:    map[string]int{},

		stmtCalls: map[*ast.CallExpr]*bpPlan{},
		noBarrier: map[*ast.CallExpr]bool{},
	}
	if r.tf == nil || r.tf.Size() != len(in.Src) {
		return FileResult{}, fmt.Errorf("%s: source does not match the parsed file", in.Path)
	}
	h := sha256.Sum256([]byte(in.Path))
	r.base = "_rkB" + hex.EncodeToString(h[:4])
	r.shared = sharedLocals(in.File, in.Info)
	r.gotoLabels = gotoTargets(in.File, in.Info)
	r.pkgName = in.Pkg.Path()
	if in.Pkg.Name() == "main" {
		r.pkgName = "main"
	}
	r.file()
	if len(r.sites) == 0 && len(r.ed.edits) == 0 {
		return FileResult{Src: in.Src}, nil
	}
	r.finish()
	return FileResult{Src: r.ed.output(), Sites: len(r.sites) / 3, Changed: true}, nil
}

type rewriter struct {
	// typeAliases: aliases the file declares for types that a local name
	// hides where they are written (typeName): type → alias.
	typeAliases map[string]string
	in          FileInput
	fset        *token.FileSet
	tf          *token.File
	info        *types.Info
	ed          *editor

	shared     map[*types.Var]bool
	gotoLabels map[*types.Label]bool
	addrLits   map[*ast.CompositeLit]bool // operands of &: New records them
	pkgName    string
	base       string

	sites   []uint32 // (line, col, func) triples
	funcs   []string
	funcIdx map[string]int
	fn      string         // enclosing function's name, for sites
	lits    map[string]int // function literals numbered per enclosing function
	ntmp    int
	useTest bool
	results [][]*ast.Ident // named results of the enclosing functions
	after   []string       // events to record after the current statement
	initAft []string       // after's events of the last if's or switch's init statement

	captured  map[*types.Var]bool        // locals function literals capture (stdcalls.go), lazily
	stmtCalls map[*ast.CallExpr]*bpPlan  // BarrierPairs bracketing a statement
	noBarrier map[*ast.CallExpr]bool     // calls of go and defer statements
	discarded map[*ast.CallExpr]bool     // calls of expression statements: their results unused
	calledFun map[*ast.SelectorExpr]bool // selectors called where they are (x.M(...)), not method values

	quiet  []quietFunc // functions that may lose their Enter (quiet.go)
	leaves []leafFunc  // functions that may get a copy as written (leafCopy)
	nrec   int         // access hooks given recFlag so far in this function
	// gUse: per enclosing function body, whether a hook took its
	// goroutine-state local (gArg), so that its Enter becomes EnterG.
	gUse []bool
	// litPre: a prologue a function literal begins with (the Begin and
	// GoEnd of a go statement's literal: testframes.go)
	litPre    map[*ast.FuncLit]string
	factories map[*types.Func]bool // returnsPrologue's, being looked at
}

func (r *rewriter) off(p token.Pos) int { return r.tf.Offset(p) }

func (r *rewriter) span(n ast.Node) (int, int) { return r.off(n.Pos()), r.off(n.End()) }

func (r *rewriter) text(n ast.Node) string {
	lo, hi := r.span(n)
	return r.ed.render(lo, hi)
}

// site registers the position p in the current function and returns the
// expression naming it.
func (r *rewriter) site(p token.Pos) string {
	pos := r.fset.PositionFor(p, false)
	k, ok := r.funcIdx[r.fn]
	if !ok {
		k = len(r.funcs)
		r.funcs = append(r.funcs, r.fn)
		r.funcIdx[r.fn] = k
	}
	id := len(r.sites) / 3
	r.sites = append(r.sites, uint32(pos.Line), uint32(pos.Column), uint32(k))
	return r.base + "+" + strconv.Itoa(id)
}

// asite is site for an access hook: the site, then the flag saying
// whether the enclosing frame's accesses are recorded (recFlag).
func (r *rewriter) asite(p token.Pos) string {
	r.nrec++
	return r.site(p) + ", " + r.recFlag()
}

// recFlag names the flag the access hooks take: in a function body the
// local holding rt.Enter's result (false when a sampler skips this
// invocation: LiteRace's dispatch check, the accesses then skipped at a
// branch each), elsewhere (package-level initializers) a constant true
// declared with the site table. Each literal declares its own, shadowing
// its enclosing function's.
func (r *rewriter) recFlag() string { return "_rkS" + strings.TrimPrefix(r.base, "_rkB") }

// gArg is the goroutine state a hook that takes one (rt's ...G hooks) is
// handed: in a function body the local its rt.EnterG returned, which
// funcBody then declares (the body runs on one goroutine, and each
// literal declares its own, shadowing its enclosing function's);
// elsewhere (package-level initializers) nil, which the hook looks up.
// The go statement's wrapper, which runs in the new goroutine, takes the
// hooks without the state (goStmt).
func (r *rewriter) gArg() string {
	if len(r.gUse) == 0 {
		return "nil"
	}
	r.gUse[len(r.gUse)-1] = true
	return r.gVar()
}

// gVar is the name of the local that holds the goroutine's state, as
// recFlag is that of the frame's decision.
func (r *rewriter) gVar() string { return "_rkG" + strings.TrimPrefix(r.base, "_rkB") }

func (r *rewriter) tmp() string {
	r.ntmp++
	return "_rk" + strconv.Itoa(r.ntmp)
}

// posOf maps an offset to the (adjusted) line and column the compiler
// reports, for /*line*/ directives.
func (r *rewriter) posOf(off int) (int, int) {
	p := r.fset.Position(r.tf.Pos(off))
	return p.Line, p.Column
}

func (r *rewriter) newGen(startOff int) *gen {
	name := r.fset.Position(r.tf.Pos(startOff)).Filename
	if name == r.tf.Name() {
		name = r.in.Path // the name the file's first //line gives it
	}
	return newGen(name, r.posOf, startOff)
}

// piece adds node n's rendered text to g.
func (r *rewriter) piece(g *gen, n ast.Node) {
	lo, hi := r.span(n)
	g.piece(lo, r.ed.render(lo, hi))
}

// finish adds the import and the site table.
func (r *rewriter) finish() {
	imp := "; import " + rtAlias + " " + strconv.Quote(RTModule+"/rt")
	if r.useTest {
		imp += "; import " + testAlias + " " + strconv.Quote(RTModule+"/rt/rttest")
	}
	nameEnd := r.off(r.in.File.Name.End())
	r.ed.insertAt(nameEnd, imp, nameEnd, nameEnd)
	// Every position is the user's file's: compiler messages, panics and
	// debug information name it, not the cached copy the build reads.
	r.ed.insertAt(0, "//line "+r.in.Path+":1:1\n", 0, 0)

	var b strings.Builder
	if len(r.ed.src) > 0 && r.ed.src[len(r.ed.src)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\nconst %s = true\n", r.recFlag())
	fmt.Fprintf(&b, "var %s = %s.RegisterFile(%s, []string{", r.base, rtAlias, strconv.Quote(r.in.Path))
	for i, f := range r.funcs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(f))
	}
	b.WriteString("}, []uint32{")
	for i, s := range r.sites {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(strconv.FormatUint(uint64(s), 10))
	}
	b.WriteString("})\n")
	for _, name := range slices.Sorted(maps.Keys(r.typeAliases)) {
		fmt.Fprintf(&b, "type %s = %s\n", r.typeAliases[name], name)
	}
	r.globalNames(&b)
	// Imports whose every use became a hook stay used.
	for _, im := range r.in.File.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		ref, ok := keepImport[p]
		if !ok {
			continue
		}
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		switch name {
		case "_":
			continue
		case ".":
			fmt.Fprintf(&b, "var _ = %s\n", ref)
		default:
			fmt.Fprintf(&b, "var _ = %s.%s\n", name, ref)
		}
	}
	end := len(r.ed.src)
	// As the file's own closing, after every other: a file that ends
	// without a newline ends in an expression whose wraps close there
	// too (modern-go/concurrent's log.go).
	r.ed.appendAt(end, b.String(), 0, end)
}

// keepImport names, for each package whose calls may all be replaced by
// hooks, a function that keeps its import used.
var keepImport = map[string]string{
	"sync":        "NewCond",
	"sync/atomic": "AddInt32",
	"os":          "Exit",
	"os/signal":   "Notify",
	"testing":     "Short",
	"log":         "Fatal",
	"time":        "Now",
	"reflect":     "Copy", // google.golang.org/protobuf/internal/impl: reflect.New alone

	"testing/synctest": "Wait",
}

// gotoTargets returns the labels some goto jumps to: statements they label
// are not wrapped in blocks (a goto may not jump into one).
func gotoTargets(f *ast.File, info *types.Info) map[*types.Label]bool {
	m := map[*types.Label]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if b, ok := n.(*ast.BranchStmt); ok && b.Tok == token.GOTO && b.Label != nil {
			if l, ok := info.Uses[b.Label].(*types.Label); ok {
				m[l] = true
			}
		}
		return true
	})
	return m
}

// ---- declarations and functions ----

func (r *rewriter) file() {
	for _, d := range r.in.File.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			r.funcDecl(d)
		case *ast.GenDecl:
			if d.Tok == token.VAR {
				r.fn = r.pkgName + ".init"
				for _, s := range d.Specs {
					r.valueSpec(s.(*ast.ValueSpec))
				}
			}
		}
	}
	r.copyLeaves(r.dropQuietEnters())
}

// skipFunc reports whether a function's directives forbid instrumenting it
// (//go:norace, as for the Go race detector, and functions that must not
// call or grow the stack).
func skipFunc(d *ast.FuncDecl) bool {
	if d.Doc == nil {
		return false
	}
	for _, c := range d.Doc.List {
		switch strings.Fields(c.Text + " ")[0] {
		case "//go:norace", "//go:nosplit", "//go:systemstack", "//go:nowritebarrier", "//go:nowritebarrierrec", "//go:yeswritebarrierrec", "//go:linkname":
			return true
		}
	}
	return false
}

// atomicFunc reports whether d is marked //racekit:atomic: its
// invocations are atomic regions (PECAN's synchronized methods), which
// racekit anomalies checks for atomicity and atomic-set violations.
func atomicFunc(d *ast.FuncDecl) bool {
	if d.Doc == nil {
		return false
	}
	for _, c := range d.Doc.List {
		if strings.TrimSpace(c.Text) == "//racekit:atomic" {
			return true
		}
	}
	return false
}

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
	r.fn = r.funcName(d)
	var pre string
	switch {
	case d.Recv == nil && d.Name.Name == "main" && r.in.Pkg.Name() == "main" && !r.in.IsTest:
		pre = "defer " + rtAlias + ".MainExit(); "
	case d.Recv == nil && r.in.IsTest && d.Name.Name == "TestMain":
		pre = "defer " + rtAlias + ".Finish(); "
	case d.Recv == nil && r.in.IsTest && isTestFunc(d):
		pre = "defer " + testAlias + ".Stop(" + testAlias + ".Start(" + r.testParam(d) + ")); "
		r.useTest = true
	case r.testPrologue(d.Type) != "": // a test file's function t.Run may be given (testframes.go)
		pre = r.testPrologue(d.Type)
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
	if pre != "" || atomic {
		return
	}
	if len(r.ed.edits) == enter+1 {
		if fn, _ := r.info.Defs[d.Name].(*types.Func); fn != nil {
			if callees, ok := r.quietCalls(d.Body); ok {
				r.quiet = append(r.quiet, quietFunc{fn: fn, enter: enter, callees: callees})
			}
		}
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
	r.ed.insertAt(lo+1, " "+pre+f+" := "+rtAlias+".Enter("+s+"); _ = "+f+"; defer "+rtAlias+".Leave("+s+"); "+region, lo, hi)
	r.allocParams(lo+1, lo, hi, recv, typ.Params, typ.Results)
	var named []*ast.Ident
	if typ.Results != nil {
		for _, f := range typ.Results.List {
			named = append(named, f.Names...)
		}
	}
	r.results = append(r.results, named)
	r.gUse = append(r.gUse, false)
	r.block(body.List)
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
					b.WriteString(rtAlias + ".Alloc(&" + id.Name + ", " + r.site(id.Pos()) + "); ")
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
	r.fn = outer + ".func" + strconv.Itoa(r.lits[outer])
	enter := len(r.ed.edits)
	nrec := r.nrec // the literal's hooks take its own flag, not its loops'
	// A go statement's Begin, a test function's Start (testframes.go).
	pre := r.litPre[f] + r.testPrologue(f.Type)
	if r.testPrologue(f.Type) != "" {
		r.useTest = true
	}
	r.funcBody(nil, f.Type, f.Body, f.Pos(), pre, false)
	r.nrec = nrec
	if len(r.ed.edits) == enter+1 && r.testPrologue(f.Type) == "" {
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
	r.fn = outer
}

// ---- statements ----

func (r *rewriter) block(list []ast.Stmt) {
	for _, s := range list {
		r.stmt(s, true, nil)
	}
}

// stmt instruments s. inList: s is an element of a statement list, so it
// may become several statements or a block. label: the labeled statement
// around s, if any.
func (r *rewriter) stmt(s ast.Stmt, inList bool, label *ast.LabeledStmt) {
	if !inList {
		r.initAft = r.initAft[:0] // set again below for the kinds that have any
	}
	switch s.(type) {
	case *ast.ExprStmt, *ast.AssignStmt, *ast.DeclStmt:
		r.after = r.after[:0]
		defer func() {
			// Events recorded after the statement (I/O reads of calls
			// with no or several results).
			if len(r.after) > 0 && inList {
				lo, hi := r.span(s)
				r.ed.appendAt(hi, "; "+strings.Join(r.after, "; "), lo, hi)
			}
			if !inList { // an init statement: its if or switch records them
				r.initAft = append(r.initAft[:0], r.after...)
			}
			r.after = r.after[:0]
		}()
	}
	switch x := s.(type) {
	case nil:
	case *ast.BlockStmt:
		r.block(x.List)
	case *ast.LabeledStmt:
		r.stmt(x.Stmt, inList, x)
	case *ast.ExprStmt:
		if inList {
			if fn := r.calledFunc(x.X); fn != nil {
				if isLogFatal(funcKey(fn)) || isLogFatal(methodKey(fn)) {
					lo, hi := r.span(x)
					r.ed.insertAt(lo, rtAlias+".Finish(); ", lo, hi)
				}
			}
		}
		if u, ok := unparen(x.X).(*ast.UnaryExpr); ok && u.Op == token.ARROW && inList && r.recvStmt(x, u) {
			break
		}
		if c, ok := unparen(x.X).(*ast.CallExpr); ok {
			if r.discarded == nil {
				r.discarded = map[*ast.CallExpr]bool{}
			}
			r.discarded[c] = true
		}
		bp := r.stmtBarrier(x, x.X, inList)
		r.rd(x.X)
		r.finishStmtBarrier(bp, x)
	case *ast.AssignStmt:
		if inList && r.recvAssign(x) {
			break
		}
		var bp *bpPlan
		if len(x.Rhs) == 1 {
			bp = r.stmtBarrier(x, x.Rhs[0], inList)
		}
		r.assign(x, inList)
		r.finishStmtBarrier(bp, x)
		r.freshAssign(x.Lhs, x.Rhs)
	case *ast.IncDecStmt:
		r.lv(x.X, "RW")
	case *ast.SendStmt:
		r.send(x, inList)
	case *ast.GoStmt:
		r.goStmt(x)
	case *ast.DeferStmt:
		r.noBarrier[x.Call] = true // the call runs later: not bracketed here
		r.rd(x.Call)
	case *ast.ReturnStmt:
		for _, e := range x.Results {
			wrap := false
			if tv, ok := r.info.Types[e]; ok && !tv.IsNil() && !isUntyped(tv.Type) {
				_, wrap = core(tv.Type).(*types.Chan)
			}
			// A channel handed back, maybe to untraced code that waits on
			// it (rt.ChanOut): the wrap goes around the result's own
			// instrumentation, added before it for a location (whose
			// access hook must stay inside, addressable), after it
			// otherwise (stdCall does the same).
			lo, hi := r.span(e)
			loc := isLocation(e)
			if wrap && loc {
				r.ed.wrap(lo, hi, rtAlias+".ChanOut(", ")")
			}
			r.rd(e)
			if wrap && !loc {
				r.ed.wrap(lo, hi, rtAlias+".ChanOut(", ")")
			}
		}
		if len(x.Results) == 0 && inList && len(r.results) > 0 {
			// A bare return reads the named results.
			var b strings.Builder
			for _, id := range r.results[len(r.results)-1] {
				if v, ok := r.info.Defs[id].(*types.Var); ok && r.shared[v] {
					kind := "R"
					if whole(v.Type()) {
						kind = "R1"
					}
					b.WriteString(rtAlias + "." + kind + "(&" + id.Name + ", " + r.asite(x.Pos()) + "); ")
				}
			}
			if b.Len() > 0 {
				lo, hi := r.span(x)
				r.ed.insertAt(lo, b.String(), lo, hi)
			}
		}
	case *ast.DeclStmt:
		if g, ok := x.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				r.valueSpec(vs)
				names := make([]ast.Expr, len(vs.Names))
				for i, n := range vs.Names {
					names[i] = n
				}
				r.freshAssign(names, vs.Values)
			}
			if inList {
				r.allocVars(x, g)
			}
		}
	case *ast.IfStmt:
		r.stmt(x.Init, false, nil)
		if pre := r.initAllocs(x.Init); pre != "" {
			lo, hi := r.span(x.Cond) // the outer wrap: before the condition's own
			r.ed.wrap(lo, hi, pre+" && (", ")")
		}
		r.rd(x.Cond)
		r.block(x.Body.List)
		r.stmt(x.Else, true, nil)
	case *ast.ForStmt:
		r.forStmt(x, label)
	case *ast.RangeStmt:
		r.rangeStmt(x, label)
	case *ast.SwitchStmt:
		r.stmt(x.Init, false, nil)
		if pre := r.initAllocs(x.Init); pre != "" {
			switch {
			case x.Tag == nil: // switch v := f(); { ... }: the tag true
				lo, _ := r.span(x.Body)
				r.ed.insertAt(lo, pre+" ", lo, lo)
			case !isUntyped(typeOf(r.info, x.Tag)):
				lo, hi := r.span(x.Tag)
				r.ed.wrap(lo, hi, rtAlias+".TagAfter("+pre+", ", ")")
			}
		}
		r.rd(x.Tag)
		for _, c := range x.Body.List {
			cc := c.(*ast.CaseClause)
			for _, e := range cc.List {
				r.rd(e)
			}
			r.block(cc.Body)
		}
	case *ast.TypeSwitchStmt:
		r.stmt(x.Init, false, nil)
		switch a := x.Assign.(type) {
		case *ast.AssignStmt:
			r.rd(a.Rhs[0].(*ast.TypeAssertExpr).X)
		case *ast.ExprStmt:
			r.rd(a.X.(*ast.TypeAssertExpr).X)
		}
		for _, c := range x.Body.List {
			cc := c.(*ast.CaseClause)
			if v, _ := r.info.Implicits[cc].(*types.Var); v != nil {
				r.allocAt(r.off(cc.Colon)+1, v, x.Assign.(*ast.AssignStmt).Lhs[0].Pos())
			}
			r.block(cc.Body)
		}
	case *ast.SelectStmt:
		r.selectStmt(x, label)
	case *ast.BranchStmt, *ast.EmptyStmt, *ast.BadStmt:
	}
}

// allocAt records, at offset pos (the start of a clause's or loop body's
// statements), the creation of v, declared at decl, if it escapes: the
// variable of a type switch's clause, of a select's receive, or of a loop
// iteration.
func (r *rewriter) allocAt(pos int, v *types.Var, decl token.Pos) {
	if !r.shared[v] || v.Name() == "_" {
		return
	}
	r.ed.insertAt(pos, " "+rtAlias+".Alloc(&"+v.Name()+", "+r.site(decl)+");", pos, pos)
}

// allocIterVars records, at the top of a loop's body, the creation of the
// escaping variables the loop declares (ids: a for loop's init or a
// range's key and value, declared by :=), when each iteration has its own
// (go1.22 and later). Before go1.22 they are one variable per loop, and
// get no allocation event: an earlier object at their address stays
// related to them.
func (r *rewriter) allocIterVars(body *ast.BlockStmt, ids ...ast.Expr) {
	if !r.perIterationVars() {
		return
	}
	lo, _ := r.span(body)
	for _, e := range ids {
		if id, ok := e.(*ast.Ident); ok {
			if v, _ := r.info.Defs[id].(*types.Var); v != nil {
				r.allocAt(lo+1, v, id.Pos())
			}
		}
	}
}

// initAllocs returns, for an if or switch statement's init statement, the
// expression that records the creation of the escaping variables it
// declares (rt.AllocTrue(&v, site) && ..., true), or "": placed before
// the condition or tag, it runs after the init, before anything else
// reaches them.
func (r *rewriter) initAllocs(init ast.Stmt) string {
	var parts []string
	if init != nil && len(r.initAft) > 0 {
		// The events recorded after a statement (an I/O read's acquire,
		// a fresh result's allocation), which no statement can follow
		// here: if n, err := conn.Read(b); err == nil { ... }.
		parts = append(parts, "func() bool { "+strings.Join(r.initAft, "; ")+"; return true }()")
	}
	r.initAft = r.initAft[:0]
	a, ok := init.(*ast.AssignStmt)
	if !ok || a.Tok != token.DEFINE {
		return strings.Join(parts, " && ")
	}
	for _, l := range a.Lhs {
		if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
			if v, _ := r.info.Defs[id].(*types.Var); v != nil && r.shared[v] {
				parts = append(parts, rtAlias+".AllocTrue(&"+id.Name+", "+r.site(id.Pos())+")")
			}
		}
	}
	return strings.Join(parts, " && ")
}

// perIterationVars reports whether the file's language version gives each
// loop iteration its own variables (go1.22); an unknown version counts as
// too old.
func (r *rewriter) perIterationVars() bool {
	v := r.info.FileVersions[r.in.File]
	return v != "" && version.Compare(v, "go1.22") >= 0
}

// hideVars makes the escaping variables among ids private (their accesses
// not recorded) until the caller restores the ones it returns.
func (r *rewriter) hideVars(ids []ast.Expr) []*types.Var {
	var hidden []*types.Var
	for _, e := range ids {
		if id, ok := e.(*ast.Ident); ok {
			if v, _ := r.info.Defs[id].(*types.Var); v != nil && r.shared[v] {
				r.shared[v] = false
				hidden = append(hidden, v)
			}
		}
	}
	return hidden
}

// allocVars records, after var declaration d (statement s), the creation
// of each escaping variable it declares: a new object each time s runs.
func (r *rewriter) allocVars(s ast.Stmt, d *ast.GenDecl) {
	var b strings.Builder
	for _, sp := range d.Specs {
		for _, id := range sp.(*ast.ValueSpec).Names {
			if v, ok := r.info.Defs[id].(*types.Var); ok && r.shared[v] && id.Name != "_" {
				b.WriteString("; " + rtAlias + ".Alloc(&" + id.Name + ", " + r.site(id.Pos()) + ")")
			}
		}
	}
	if b.Len() > 0 {
		lo, hi := r.span(s)
		r.ed.appendAt(hi, b.String(), lo, hi)
	}
}

func (r *rewriter) valueSpec(vs *ast.ValueSpec) {
	if len(vs.Names) == 2 && len(vs.Values) == 1 {
		if u, ok := unparen(vs.Values[0]).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
			r.recv(u, true)
			return
		}
	}
	for _, v := range vs.Values {
		r.rd(v)
	}
}

// recorded reports whether writing e is recorded.
func (r *rewriter) recorded(e ast.Expr) bool {
	if ix, ok := unparen(e).(*ast.IndexExpr); ok && isMap(typeOf(r.info, ix.X)) {
		return true
	}
	return r.sharedLoc(e)
}

func (r *rewriter) assign(x *ast.AssignStmt, inList bool) {
	commaOK := len(x.Lhs) == 2 && len(x.Rhs) == 1
	rhs := func() {
		if commaOK {
			if u, ok := unparen(x.Rhs[0]).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
				r.recv(u, true)
				return
			}
		}
		for _, e := range x.Rhs {
			r.rd(e)
		}
	}
	switch x.Tok {
	case token.DEFINE:
		rhs()
		if !inList {
			return
		}
		// Variables redeclared by := are assigned; escaping variables it
		// declares are new objects.
		for _, l := range x.Lhs {
			id, ok := l.(*ast.Ident)
			if !ok || id.Name == "_" {
				continue
			}
			lo, hi := r.span(x)
			if v, ok := r.info.Defs[id].(*types.Var); ok {
				if r.shared[v] {
					r.ed.appendAt(hi, "; "+rtAlias+".Alloc(&"+id.Name+", "+r.site(id.Pos())+")", lo, hi)
				}
				continue
			}
			if r.info.Defs[id] != nil || !r.sharedIdent(id) {
				continue
			}
			r.ed.appendAt(hi, "; "+rtAlias+".W(&"+id.Name+", "+r.asite(id.Pos())+")", lo, hi)
		}
		return
	case token.ASSIGN:
		kind := "W"
		hoist := inList
		anyRec := false
		for _, l := range x.Lhs {
			if r.recorded(l) {
				anyRec = true
			}
			if containsCall(r.info, l) {
				hoist = false
			}
		}
		anyCall := false
		for _, e := range x.Rhs {
			if containsCall(r.info, e) {
				anyCall = true
			}
			if tv, ok := r.info.Types[e]; ok && len(x.Rhs) == len(x.Lhs) && isUntyped(tv.Type) {
				hoist = false
			}
			if name, ctx := r.contextTyped(e); ctx && name == "" {
				hoist = false
			}
		}
		hoist = hoist && anyRec && anyCall
		for _, l := range x.Lhs {
			r.lv(l, kind)
		}
		rhs()
		if hoist {
			r.hoistAssign(x)
		}
	default: // op=
		r.lv(x.Lhs[0], "RW")
		r.rd(x.Rhs[0])
		if inList && r.recorded(x.Lhs[0]) && containsCall(r.info, x.Rhs[0]) && !containsCall(r.info, x.Lhs[0]) {
			if name, ctx := r.contextTyped(x.Rhs[0]); ctx && name == "" {
				return
			}
			if tv, ok := r.info.Types[x.Rhs[0]]; ok && !isUntyped(tv.Type) {
				r.hoistAssign(x)
			}
		}
	}
}

// hoistAssign rewrites l1, l2 op r1, r2 (already instrumented) as
//
//	{ t1, t2 := r1, r2; l1, l2 op t1, t2 }
//
// so that the writes are recorded after the right-hand side's calls and
// receives, where they happen. The left-hand side has no calls, so
// evaluating it after the right-hand side changes nothing.
func (r *rewriter) hoistAssign(x *ast.AssignStmt) {
	lo, hi := r.span(x)
	g := r.newGen(lo)
	// A constant stays where it is: in a temporary it would take its
	// default type (sn[0], sn[k] = f(), 0xff: 0xff is a byte, not an int).
	spread := len(x.Rhs) != len(x.Lhs) // l1, l2 = f()
	inline := func(e ast.Expr) bool { return !spread && r.inlineValue(e) }
	var tmps []string
	for _, e := range x.Rhs {
		if !inline(e) {
			tmps = append(tmps, r.tmp())
		}
	}
	if spread {
		for len(tmps) < len(x.Lhs) {
			tmps = append(tmps, r.tmp())
		}
	}
	g.lit("{ " + strings.Join(tmps, ", ") + " := ")
	k := 0
	for _, e := range x.Rhs {
		if inline(e) {
			continue
		}
		if k > 0 {
			g.lit(", ")
		}
		k++
		r.typedPiece(g, e)
	}
	g.lit("; ")
	for i, e := range x.Lhs {
		if i > 0 {
			g.lit(", ")
		}
		r.piece(g, e)
	}
	g.lit(" " + x.Tok.String() + " ")
	if spread {
		g.lit(strings.Join(tmps, ", "))
	} else {
		k = 0
		for i, e := range x.Rhs {
			if i > 0 {
				g.lit(", ")
			}
			if inline(e) {
				r.piece(g, e)
				continue
			}
			g.lit(tmps[k])
			k++
		}
	}
	g.lit(" }")
	r.ed.collapse(lo, hi, g.end(hi))
}

// send instruments ch <- v as
//
//	{ c, t := ch, v; g := rt.SendPreG(c, site, rec, G); c <- t; rt.SendPost(c, site, g) }
//
// (G: the function's goroutine state, gArg; SendPreG hands it on as g.)
func (r *rewriter) send(x *ast.SendStmt, inList bool) {
	r.rd(x.Chan)
	r.rd(x.Value)
	if !inList {
		return
	}
	lo, hi := r.span(x)
	s := r.site(x.Arrow)
	g := r.newGen(lo)
	c := r.tmp()
	g.lit("{ " + c + " := ")
	r.piece(g, x.Chan)
	val := ""
	tok := r.tmp()
	pre := "; " + tok + " := " + rtAlias + ".SendPreG(" + c + ", " + s + ", " + r.recFlag() + ", " + r.gArg() + "); " + c + " <- "
	if r.inlineValue(x.Value) {
		g.lit(pre)
		r.piece(g, x.Value)
	} else {
		val = r.tmp()
		g.lit("; " + val + " := ")
		r.piece(g, x.Value)
		g.lit(pre + val)
	}
	g.lit("; " + rtAlias + ".SendPost(" + c + ", " + s + ", " + tok + ") }")
	r.ed.collapse(lo, hi, g.end(hi))
}

// inlineValue reports whether e is better left in place than evaluated
// into a temporary: a constant or nil (no accesses), or an untyped value
// whose type comes from its context.
func (r *rewriter) inlineValue(e ast.Expr) bool {
	tv, ok := r.info.Types[e]
	if !ok {
		return true
	}
	return tv.Value != nil || tv.IsNil() || isUntyped(tv.Type)
}

func isUntyped(t types.Type) bool {
	b, ok := t.(*types.Basic)
	return ok && b.Info()&types.IsUntyped != 0
}

// goStmt rewrites go f(a, b) as
//
//	{ f1, a1, b1 := f, a, b; c := rt.Fork(site)
//	  go func() { rt.Begin(c); defer rt.End(c); f1(a1, b1); c.Ok() }() }
//
// evaluating the function value and the arguments before the fork, as the
// go statement does. Package-level functions, builtins, function literals
// and constant arguments stay in place.
func (r *rewriter) goStmt(x *ast.GoStmt) {
	call := x.Call
	lo, hi := r.span(x)
	site := r.site(x.Go)
	g := r.newGen(lo)
	var names []string
	var vals []ast.Node
	var valTexts []string // for hook arguments not from the source
	var callee string
	var args []string
	var dots string
	var c string // the child's variable, set early for a literal
	if call.Ellipsis.IsValid() {
		dots = "..."
	}

	if hk, recv, hargs, ok := r.hookCall(call); ok {
		// A hooked call: its receiver and arguments are evaluated now.
		callee = hookName(hk)
		if hk.sited {
			callee += "(" + site + ", true)" // rec: as below
		}
		if recv != "" {
			t := r.tmp()
			names = append(names, t)
			vals = append(vals, nil)
			valTexts = append(valTexts, recv)
			args = append(args, t)
		}
		for _, a := range hargs {
			if r.inlineValue(a) {
				args = append(args, r.text(a))
				continue
			}
			t := r.tmp()
			names = append(names, t)
			vals = append(vals, a)
			valTexts = append(valTexts, "")
			args = append(args, t)
		}
		if !hk.noSite && !hk.sited {
			args = append(args, site)
		}
		if hk.rec && !hk.sited {
			args = append(args, "true") // in the new goroutine, outside every frame
		}
		dots = ""
		if call.Ellipsis.IsValid() {
			args[len(args)-1] += "..."
		}
	} else {
		fun := unparen(call.Fun)
		if lit, ok := fun.(*ast.FuncLit); ok {
			// The goroutine runs the literal itself, which begins with
			// its Begin (testframes.go).
			c = r.tmp()
			if r.litPre == nil {
				r.litPre = map[*ast.FuncLit]string{}
			}
			r.litPre[lit] = rtAlias + ".Begin(" + c + "); defer " + rtAlias + ".GoEnd(" + c + "); "
		}
		r.rd(call.Fun)
		switch {
		case r.isBuiltin(fun) && identOf(fun).Name == "close":
			callee = rtAlias + ".Close"
		case r.isBuiltin(fun), r.isFuncName(fun):
			callee = r.text(call.Fun)
		case isFuncLit(fun):
			callee = r.text(call.Fun)
		default:
			t := r.tmp()
			names = append(names, t)
			vals = append(vals, call.Fun)
			valTexts = append(valTexts, "")
			callee = t
		}
		sig, _ := core(typeOf(r.info, call.Fun)).(*types.Signature)
		for i, a := range call.Args {
			r.rd(a)
			if r.inlineValue(a) && !r.untypedToParam(a, sig, i) {
				args = append(args, r.text(a))
				continue
			}
			t := r.tmp()
			names = append(names, t)
			vals = append(vals, a)
			valTexts = append(valTexts, "")
			args = append(args, t)
		}
	}

	g.lit("{ ")
	if len(names) > 0 {
		g.lit(strings.Join(names, ", ") + " := ")
		for i, v := range vals {
			if i > 0 {
				g.lit(", ")
			}
			if v == nil {
				g.lit(valTexts[i])
			} else {
				r.piece(g, v)
			}
		}
		g.lit("; ")
	}
	if c != "" {
		// A literal: go lit(args), the literal rendered with its lines.
		g.lit(c + " := " + rtAlias + ".Fork(" + site + "); go ")
		r.piece(g, call.Fun)
		g.lit("(" + strings.Join(args, ", ") + dots + ") }")
		r.ed.collapse(lo, hi, g.end(hi))
		return
	}
	c = r.tmp()
	g.lit(c + " := " + rtAlias + ".Fork(" + site + "); go func() { " + rtAlias + ".Begin(" + c + "); defer " + rtAlias + ".End(" + c + "); ")
	g.lit(callee)
	if callee == rtAlias+".Close" {
		args = append(args, site, "true")
	}
	g.lit("(" + strings.Join(args, ", ") + dots + "); " + c + ".Ok() }() }")
	r.ed.collapse(lo, hi, g.end(hi))
}

// untypedToParam reports whether an untyped, non-constant argument (a
// comparison, say) can go through a temporary: its default type is the
// parameter's type.
func (r *rewriter) untypedToParam(a ast.Expr, sig *types.Signature, i int) bool {
	tv, ok := r.info.Types[a]
	if !ok || tv.Value != nil || tv.IsNil() || !isUntyped(tv.Type) || sig == nil {
		return false
	}
	var pt types.Type
	n := sig.Params().Len()
	switch {
	case sig.Variadic() && i >= n-1:
		if s, ok := sig.Params().At(n - 1).Type().(*types.Slice); ok {
			pt = s.Elem()
		}
	case i < n:
		pt = sig.Params().At(i).Type()
	}
	return pt != nil && types.Identical(pt, types.Default(tv.Type))
}

func isFuncLit(e ast.Expr) bool {
	_, ok := e.(*ast.FuncLit)
	return ok
}

// rangeStmt instruments a range loop. Over a map, the map is read; over a
// channel, each iteration is a receive; over a slice (or pointer to array)
// with a value variable, each iteration reads its element.
func (r *rewriter) rangeStmt(x *ast.RangeStmt, label *ast.LabeledStmt) {
	t := core(typeOf(r.info, x.X))
	canWrap := label == nil || !r.gotoLabels[r.labelObj(label)]
	switch {
	case isChan(t):
		r.rd(x.X)
		m := r.mark()
		defer r.rangeIterVars(x, label)()
		r.block(x.Body.List)
		if !canWrap {
			return
		}
		loop := ""
		if r.nrec > m.nrec {
			// Before rangeChan renders the body into its replacement.
			loop = r.tmp()
			r.loopBody(x.Body, loop, r.rawCopyOK(x.Body, m))
		}
		r.rangeChan(x, label)
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
	case (isSlice(t) || isPtrToArray(t)) && x.Value != nil && !isBlank(x.Value) && x.Tok == token.DEFINE && canWrap:
		r.rd(x.X)
		m := r.mark()
		defer r.rangeIterVars(x, label)()
		r.block(x.Body.List)
		loop := r.tmp()
		r.rangeElems(x, label, loop, r.rawCopyOK(x.Body, m)) // each iteration reads its element
		r.loopWrap(x, label, loop)
		return
	}
	r.rd(x.X)
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
	r.block(x.Body.List)
	r.loopRegion(x, x.Body, label, m)
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
				b.WriteString(rtAlias + ".Alloc(&" + id.Name + ", " + r.site(id.Pos()) + "); ")
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
	if mp.nrec == mc.nrec || label != nil && r.gotoLabels[r.labelObj(label)] {
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
type loopMark struct{ nrec, nsites int }

func (r *rewriter) mark() loopMark { return loopMark{r.nrec, len(r.sites)} }

// loopRegion makes loop statement s (labelled by label, if any), whose
// body the rewriter has just instrumented from mark m, a sampling region
// of its own (rt/loop.go), if its body has an access hook of this
// function: a block around the statement makes the loop's state from the
// enclosing flag, and each iteration takes its decision at the top of the
// body (loopBody). A loop whose label a goto names cannot be put in a
// block, and keeps the enclosing decision.
func (r *rewriter) loopRegion(s ast.Stmt, body *ast.BlockStmt, label *ast.LabeledStmt, m loopMark) {
	if r.nrec == m.nrec || label != nil && r.gotoLabels[r.labelObj(label)] {
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
// g; continue runs the post statement, as it ran the condition.)
func (r *rewriter) rangeChan(x *ast.RangeStmt, label *ast.LabeledStmt) {
	lo, hi := r.outerSpan(x, label)
	s := r.site(x.For)
	g := r.newGen(lo)
	c, ok, tok := r.tmp(), r.tmp(), r.tmp()
	g.lit("{ " + c + " := ")
	r.piece(g, x.X)
	pre := rtAlias + ".RecvRangeG(" + c + ", " + s + ", " + r.gArg() + ")"
	g.lit("; " + r.labelText(label) + "for " + tok + " := " + pre + "; ; " + tok + " = " + pre + " { ")
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
	g.lit(" } }") // the for statement, the block
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

// selectStmt rewrites a select with channel cases: the channels and sent
// values are evaluated into temporaries (in source order, as select does),
// every case's pre-operation is recorded, and each case records its
// post-operation first when chosen.
func (r *rewriter) selectStmt(x *ast.SelectStmt, label *ast.LabeledStmt) {
	type cas struct {
		cc      *ast.CommClause
		ch, val string
		recv    *ast.UnaryExpr
		send    *ast.SendStmt
		site    string
	}
	var cases []cas
	for _, c := range x.Body.List {
		cc := c.(*ast.CommClause)
		k := cas{cc: cc}
		switch s := cc.Comm.(type) {
		case *ast.SendStmt:
			k.send = s
			r.rd(s.Chan)
			r.rd(s.Value)
			k.site = r.site(s.Arrow)
		case *ast.ExprStmt:
			k.recv = unparen(s.X).(*ast.UnaryExpr)
		case *ast.AssignStmt:
			k.recv = unparen(s.Rhs[0]).(*ast.UnaryExpr)
			if s.Tok == token.ASSIGN {
				for _, l := range s.Lhs {
					r.lv(l, "W")
				}
			} else {
				for _, l := range s.Lhs {
					if v, _ := r.info.Defs[l.(*ast.Ident)].(*types.Var); v != nil {
						r.allocAt(r.off(cc.Colon)+1, v, l.Pos())
					}
				}
			}
		}
		if k.recv != nil {
			r.rd(k.recv.X)
			k.site = r.site(k.recv.OpPos)
		}
		r.block(cc.Body)
		cases = append(cases, k)
	}
	if label != nil && r.gotoLabels[r.labelObj(label)] {
		return
	}
	nch := 0
	for _, k := range cases {
		if k.cc.Comm != nil {
			nch++
		}
	}
	if nch == 0 {
		return
	}
	lo, hi := r.outerSpan(x, label)
	g := r.newGen(lo)
	g.lit("{ ")
	for i := range cases {
		k := &cases[i]
		switch {
		case k.send != nil:
			k.ch = r.tmp()
			g.lit(k.ch + " := ")
			r.piece(g, k.send.Chan)
			g.lit("; ")
			if !r.inlineValue(k.send.Value) {
				k.val = r.tmp()
				g.lit(k.val + " := ")
				r.piece(g, k.send.Value)
				g.lit("; ")
			}
		case k.recv != nil:
			k.ch = r.tmp()
			g.lit(k.ch + " := ")
			r.piece(g, k.recv.X)
			g.lit("; ")
		}
	}
	for _, k := range cases {
		switch {
		case k.send != nil:
			g.lit(rtAlias + ".SelectSendPre(" + k.ch + ", " + k.site + ", " + r.recFlag() + "); ")
		case k.recv != nil:
			g.lit(rtAlias + ".RecvPre(" + k.ch + ", " + k.site + "); ")
		}
	}
	// Under rt's controlled scheduler, SelectWait decides which case
	// proceeds (or parks the goroutine): the others' channels become nil.
	def := "false"
	if nch < len(cases) {
		def = "true"
	}
	pick := r.tmp()
	g.lit(pick + " := " + rtAlias + ".SelectWait(" + def + "); ")
	ci := 0
	for _, k := range cases {
		if k.ch != "" {
			g.lit(k.ch + " = " + rtAlias + ".SelectCase(" + k.ch + ", " + strconv.Itoa(ci) + ", " + pick + "); ")
			ci++
		}
	}
	g.lit(r.labelText(label))
	slo, _ := r.span(x)
	blo, _ := r.span(x.Body)
	g.piece(slo, r.ed.render(slo, blo+1)) // "select {"
	_, shi := r.span(x)
	for ci, k := range cases {
		clo, _ := r.span(k.cc)
		// The clause runs to the next one, so that comments between
		// clauses are kept.
		chi := shi - 1
		if ci+1 < len(cases) {
			chi, _ = r.span(cases[ci+1].cc)
		}
		colon := r.off(k.cc.Colon)
		switch {
		case k.cc.Comm == nil:
			g.piece(clo, r.ed.render(clo, colon+1))
		case k.send != nil:
			g.piece(clo, "case ")
			if k.val != "" {
				g.lit(k.ch + " <- " + k.val)
			} else {
				g.lit(k.ch + " <- ")
				r.piece(g, k.send.Value)
			}
			g.lit(": " + rtAlias + ".SelectSendPost(" + k.ch + ", " + k.site + ");")
		default:
			g.piece(clo, "case ")
			post := rtAlias + ".RecvPost(" + k.ch + ", " + k.site + ", nil);"
			if r.timerChan(k.recv.X) {
				post += " " + rtAlias + ".TimerFired(" + k.site + ");"
			}
			if r.ctxDone(k.recv.X) {
				post += " " + rtAlias + ".CtxDone(" + k.site + ");"
			}
			switch s := k.cc.Comm.(type) {
			case *ast.ExprStmt:
				g.lit("<-" + k.ch + ": " + post)
			case *ast.AssignStmt:
				if s.Tok == token.DEFINE {
					for i, l := range s.Lhs {
						if i > 0 {
							g.lit(", ")
						}
						r.piece(g, l)
					}
					g.lit(" := <-" + k.ch + ": " + post)
				} else {
					tmps := make([]string, len(s.Lhs))
					for i := range tmps {
						tmps[i] = r.tmp()
					}
					g.lit(strings.Join(tmps, ", ") + " := <-" + k.ch + ": " + post + " ")
					for i, l := range s.Lhs {
						if i > 0 {
							g.lit(", ")
						}
						r.piece(g, l)
					}
					g.lit(" = " + strings.Join(tmps, ", ") + ";")
				}
			}
		}
		if colon+1 < chi {
			g.piece(colon+1, r.ed.render(colon+1, chi))
		}
	}
	g.piece(shi-1, "}")
	g.lit(" }")
	r.ed.collapse(lo, hi, g.end(hi))
}

// ---- expressions ----

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

func (r *rewriter) isType(e ast.Expr) bool {
	tv, ok := r.info.Types[e]
	return ok && tv.IsType()
}

// sharedIdent reports whether id names a variable whose accesses are
// recorded: a package-level variable or a shared local.
func (r *rewriter) sharedIdent(id *ast.Ident) bool {
	if id.Name == "_" {
		return false
	}
	v, ok := r.info.Uses[id].(*types.Var)
	if !ok {
		return false
	}
	if v.IsField() {
		return false
	}
	return isPackageVar(v) || r.shared[v]
}

// pkgVarSel reports whether x is pkg.V for a package-level variable V of an
// imported package.
func (r *rewriter) pkgVarSel(x *ast.SelectorExpr) bool {
	if _, ok := r.info.Selections[x]; ok {
		return false
	}
	v, ok := r.info.Uses[x.Sel].(*types.Var)
	return ok && isPackageVar(v)
}

// sharedLoc reports whether the location e may be reached by another
// goroutine: it is (part of) a package variable or a shared local, or it
// is reached through a pointer or a slice.
func (r *rewriter) sharedLoc(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return r.sharedLoc(x.X)
	case *ast.Ident:
		return r.sharedIdent(x)
	case *ast.SelectorExpr:
		if r.pkgVarSel(x) {
			return true
		}
		sel := r.info.Selections[x]
		if sel == nil || sel.Kind() != types.FieldVal {
			return false
		}
		if sel.Indirect() || isPointer(typeOf(r.info, x.X)) {
			return true
		}
		return r.sharedLoc(x.X)
	case *ast.IndexExpr:
		if r.isInstance(x) {
			return false
		}
		t := typeOf(r.info, x.X)
		switch {
		case isSlice(t), isPtrToArray(t):
			return true
		case isArray(t):
			return r.sharedLoc(x.X)
		}
		return false
	case *ast.StarExpr:
		return !r.isType(x)
	}
	return false
}

func (r *rewriter) isInstance(x *ast.IndexExpr) bool {
	if _, ok := r.info.Instances[identOf(x.X)]; ok {
		return true
	}
	_, isSig := core(typeOf(r.info, x.X)).(*types.Signature)
	return isSig || r.isType(x)
}

func identOf(e ast.Expr) *ast.Ident {
	switch x := unparen(e).(type) {
	case *ast.Ident:
		return x
	case *ast.SelectorExpr:
		return x.Sel
	}
	return nil
}

// access wraps the location e: kind R reads it, W writes it, RW does both.
// A value that is only ever accessed whole (anything but a struct, an array
// or a type parameter) is recorded as one event (the hooks R1, W1, RW1).
func (r *rewriter) access(e ast.Expr, kind string) {
	lo, hi := r.span(e)
	if whole(typeOf(r.info, e)) {
		kind += "1"
	}
	r.ed.wrap(lo, hi, "(*"+rtAlias+"."+kind+"(&", ", "+r.asite(e.Pos())+"))")
}

// whole reports whether values of type t are read and written only as a
// whole by Go code: not a struct or array (whose parts are locations of
// their own), nor a type parameter (which may be one).
func whole(t types.Type) bool {
	if t == nil {
		return false
	}
	if _, ok := types.Unalias(t).(*types.TypeParam); ok {
		return false
	}
	switch t.Underlying().(type) {
	case *types.Struct, *types.Array:
		return false
	}
	return true
}

// loc instruments the parts of location e that are evaluated as values
// (pointers dereferenced, slices indexed, indices), not e itself.
func (r *rewriter) loc(e ast.Expr) {
	switch x := e.(type) {
	case *ast.ParenExpr:
		r.loc(x.X)
	case *ast.Ident:
	case *ast.SelectorExpr:
		if r.pkgVarSel(x) {
			return
		}
		sel := r.info.Selections[x]
		if sel != nil && sel.Kind() == types.FieldVal {
			if isPointer(typeOf(r.info, x.X)) {
				r.rd(x.X)
			} else {
				r.loc(x.X)
			}
			return
		}
		r.rd(x.X)
	case *ast.IndexExpr:
		switch t := typeOf(r.info, x.X); {
		case isMap(t):
			r.rd(x) // an element of a map value: the map is read
			return
		case isArray(t):
			r.loc(x.X)
		default:
			r.rd(x.X)
		}
		r.rd(x.Index)
	case *ast.StarExpr:
		r.rd(x.X)
	default:
		r.rd(e)
	}
}

// lv instruments e as the target of an assignment (kind W) or of x op= v
// and x++ (kind RW).
func (r *rewriter) lv(e ast.Expr, kind string) {
	if isBlank(e) {
		return
	}
	if ix, ok := unparen(e).(*ast.IndexExpr); ok && isMap(typeOf(r.info, ix.X)) {
		// The map hook goes around the map expression's own read, so it
		// is added first (the outer of two wraps of one node).
		lo, hi := r.span(ix.X)
		r.ed.wrap(lo, hi, rtAlias+".M"+kind+"(", ", "+r.asite(ix.X.Pos())+")")
		r.rd(ix.X)
		r.rd(ix.Index)
		return
	}
	r.loc(e)
	if r.sharedLoc(e) {
		r.access(e, kind)
	}
}

// rd instruments e evaluated for its value.
func (r *rewriter) rd(e ast.Expr) {
	if e == nil || r.isType(e) {
		return
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		r.rd(x.X)
	case *ast.Ident:
		if r.sharedIdent(x) {
			r.access(x, "R")
		}
	case *ast.SelectorExpr:
		if r.pkgVarSel(x) {
			r.access(x, "R")
			return
		}
		sel := r.info.Selections[x]
		if sel == nil {
			return // a qualified function, constant or type
		}
		switch sel.Kind() {
		case types.FieldVal:
			r.loc(x)
			if r.sharedLoc(x) {
				r.access(x, "R")
			}
		case types.MethodVal:
			if r.bindHooked(x, sel) {
				return
			}
			r.receiver(x.X, sel)
		}
	case *ast.IndexExpr:
		if r.isInstance(x) {
			r.rd(x.X)
			return
		}
		t := typeOf(r.info, x.X)
		if isMap(t) {
			lo, hi := r.span(x.X)
			r.ed.wrap(lo, hi, rtAlias+".MR(", ", "+r.asite(x.X.Pos())+")")
			r.rd(x.X)
			r.rd(x.Index)
			return
		}
		r.loc(x)
		if r.sharedLoc(x) {
			r.access(x, "R")
		}
	case *ast.IndexListExpr:
	case *ast.StarExpr:
		r.rd(x.X)
		r.access(x, "R")
	case *ast.SliceExpr:
		if isArray(typeOf(r.info, x.X)) {
			r.loc(x.X)
		} else {
			r.rd(x.X)
		}
		r.rd(x.Low)
		r.rd(x.High)
		r.rd(x.Max)
	case *ast.CallExpr:
		r.call(x)
	case *ast.UnaryExpr:
		switch x.Op {
		case token.AND:
			if lit, ok := unparen(x.X).(*ast.CompositeLit); ok {
				// &T{...} allocates: a new object, maybe at an address
				// a dead one had.
				lo, hi := r.span(x)
				r.ed.wrapInner(lo, hi, rtAlias+".New(", ", "+r.site(x.Pos())+")")
				if r.addrLits == nil {
					r.addrLits = map[*ast.CompositeLit]bool{}
				}
				r.addrLits[lit] = true
			}
			r.loc(x.X)
		case token.ARROW:
			r.recv(x, false)
		default:
			r.rd(x.X)
		}
	case *ast.BinaryExpr:
		r.rd(x.X)
		r.rd(x.Y)
	case *ast.KeyValueExpr:
		r.rd(x.Key)
		r.rd(x.Value)
	case *ast.CompositeLit:
		// []T{...} and map[K]V{...} allocate as make does. A literal
		// with its type elided, inside another ({"a": {x, y}} of a
		// map[string][]T), gets its type written, when the file can
		// name it, so that a call can wrap it (go-sockaddr's KnownRFCs
		// map of slices, made at each call), and {...} standing for
		// &T{...} is written so.
		if !r.addrLits[x] {
			fn := ""
			t := typeOf(r.info, x)
			switch {
			case isSlice(t) && len(x.Elts) > 0:
				fn = "MakeSlice"
			case isMap(t):
				fn = "MakeMap"
			}
			name, named := "", x.Type != nil
			if p, isPtr := types.Unalias(t).(*types.Pointer); isPtr && !named {
				// {...} for &T{...} ([]*T{{...}}): a new T, as &T{...}.
				if name, named = r.typeName(p.Elem(), x.Pos()); named {
					fn, name = "New", "&"+name
				}
			} else if fn != "" && !named {
				name, named = r.typeName(t, x.Pos())
			}
			if fn != "" && named {
				lo, hi := r.span(x)
				r.ed.wrapInner(lo, hi, rtAlias+"."+fn+"("+name, ", "+r.site(x.Pos())+")")
			}
		}
		_, isStruct := core(typeOf(r.info, x)).(*types.Struct)
		for _, el := range x.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok && isStruct {
				r.rd(kv.Value)
				continue
			}
			r.rd(el)
		}
	case *ast.FuncLit:
		r.funcLit(x)
	case *ast.TypeAssertExpr:
		r.rd(x.X)
	}
}

// bindHooked rewrites a method value of a hooked sync method without
// parameters or results (wg.Done handed on as a func(), a dependency's
// NotifyStartedFunc: miekg/dns's server calls it) as its hook bound to the
// receiver, rt.Bind(&wg, rt.WaitGroupDone, site), evaluated where the
// method value is, as Go binds the receiver. It reports whether it did.
func (r *rewriter) bindHooked(x *ast.SelectorExpr, sel *types.Selection) bool {
	fn, ok := sel.Obj().(*types.Func)
	if !ok || r.calledFun[x] {
		return false
	}
	h, ok := methodHooks[methodKey(fn)]
	sig, _ := fn.Type().(*types.Signature)
	if !ok || h.name == "" || h.test || h.value || sig == nil || sig.Params().Len() != 0 || sig.Results().Len() != 0 {
		return false
	}
	if _, isIface := core(typeOf(r.info, x.X)).(*types.Interface); isIface {
		return false
	}
	recv := r.receiverArg(x.X, sel, false)
	bind := "Bind0"
	if h.rec {
		bind = "Bind"
	}
	lo, hi := r.span(x)
	g := r.newGen(lo)
	g.lit(rtAlias + "." + bind + "(" + recv + ", " + hookName(h) + ", " + r.site(x.Sel.Pos()) + ")")
	r.ed.collapse(lo, hi, g.end(hi))
	return true
}

// receiver instruments the receiver x of a method value or call.
func (r *rewriter) receiver(x ast.Expr, sel *types.Selection) {
	xt := typeOf(r.info, x)
	if _, isIface := core(xt).(*types.Interface); isIface {
		r.rd(x)
		return
	}
	if len(sel.Index()) > 1 && r.embeddedRead(x, sel) {
		return
	}
	if recvIsPointer(sel) || len(sel.Index()) > 1 {
		// The method gets x's address (or a pointer x holds): x itself is
		// not read here.
		if isPointer(xt) {
			r.rd(x)
		} else {
			r.loc(x)
		}
		return
	}
	if isPointer(xt) {
		// A value method through a pointer copies *x.
		lo, hi := r.span(x)
		r.ed.wrap(lo, hi, rtAlias+".R(", ", "+r.asite(x.Pos())+")")
		r.rd(x)
		return
	}
	r.rd(x)
}

// embeddedRead handles a method promoted through a field x embeds: through
// an embedded pointer *T the call reads the pointer, and a value method of
// an embedded T copies it, so x is rewritten as (*rt.R1(&x.T)) (or R) when
// the field's location is shared. It reports whether it did.
func (r *rewriter) embeddedRead(x ast.Expr, sel *types.Selection) bool {
	st := typeOf(r.info, x)
	if p, ok := core(st).(*types.Pointer); ok {
		st = p.Elem()
	}
	s, ok := core(st).(*types.Struct)
	if !ok {
		return false
	}
	f := s.Field(sel.Index()[0])
	if !f.Embedded() || !r.canSelect(f) {
		return false
	}
	// Through an embedded pointer the call reads the pointer; through an
	// embedded value, a value method (found directly in it) copies it.
	kind := "R1"
	if !isPointer(f.Type()) {
		if recvIsPointer(sel) || len(sel.Index()) != 2 {
			return false
		}
		kind = "R"
		if whole(f.Type()) {
			kind = "R1"
		}
	}
	xIsPtr := isPointer(typeOf(r.info, x))
	if !xIsPtr && !r.sharedLoc(x) {
		return false
	}
	if xIsPtr {
		r.rd(x)
	} else {
		r.loc(x)
	}
	lo, hi := r.span(x)
	g := r.newGen(lo)
	// A value method through an embedded pointer also copies the value it
	// points to: rt.R(p) reads *p and returns p.
	deref := isPointer(f.Type()) && len(sel.Index()) == 2 && !recvIsPointer(sel)
	if deref {
		g.lit(rtAlias + ".R(")
	}
	g.lit("(*" + rtAlias + "." + kind + "(&")
	g.piece(lo, r.ed.render(lo, hi))
	g.lit("." + f.Name() + ", " + r.asite(x.Pos()) + "))")
	if deref {
		g.lit(", " + r.asite(x.Pos()) + ")")
	}
	r.ed.collapse(lo, hi, g.end(hi))
	return true
}

// canSelect reports whether this file may name field f: exported, or of
// the file's own package (a method promoted through an unexported
// embedded field of another package is called by its promoted name only;
// naming the field fails to compile: "cannot refer to unexported field").
func (r *rewriter) canSelect(f *types.Var) bool {
	return f.Exported() || r.in.Pkg == nil || f.Pkg() == r.in.Pkg
}

// isCancelFunc reports whether t is context.CancelFunc or CancelCauseFunc.
func isCancelFunc(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" &&
		(n.Obj().Name() == "CancelFunc" || n.Obj().Name() == "CancelCauseFunc")
}

// timerChan reports whether ch is a channel of time.Time (a timer's or a
// ticker's): receiving from it acquires rt's timer object.
func (r *rewriter) timerChan(ch ast.Expr) bool {
	c, ok := core(typeOf(r.info, ch)).(*types.Chan)
	if !ok {
		return false
	}
	n, ok := types.Unalias(c.Elem()).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" && n.Obj().Name() == "Time"
}

func (r *rewriter) isBuiltin(e ast.Expr) bool {
	id := identOf(e)
	if id == nil {
		return false
	}
	_, ok := r.info.Uses[id].(*types.Builtin)
	return ok
}

// isFuncName reports whether e names a function (not a variable): a
// package-level function, possibly qualified or instantiated, or a method
// expression T.M.
func (r *rewriter) isFuncName(e ast.Expr) bool {
	switch x := unparen(e).(type) {
	case *ast.Ident:
		_, ok := r.info.Uses[x].(*types.Func)
		return ok
	case *ast.SelectorExpr:
		if sel := r.info.Selections[x]; sel != nil {
			return sel.Kind() == types.MethodExpr
		}
		_, ok := r.info.Uses[x.Sel].(*types.Func)
		return ok
	case *ast.IndexExpr:
		return r.isFuncName(x.X)
	case *ast.IndexListExpr:
		return r.isFuncName(x.X)
	}
	return false
}

// calledFunc returns the function or method a call expression calls
// statically, or nil.
func (r *rewriter) calledFunc(e ast.Expr) *types.Func {
	c, ok := unparen(e).(*ast.CallExpr)
	if !ok {
		return nil
	}
	fun := unparen(c.Fun)
	switch x := fun.(type) {
	case *ast.IndexExpr:
		fun = x.X
	case *ast.IndexListExpr:
		fun = x.X
	}
	switch x := unparen(fun).(type) {
	case *ast.Ident:
		f, _ := r.info.Uses[x].(*types.Func)
		return f
	case *ast.SelectorExpr:
		if sel := r.info.Selections[x]; sel != nil {
			if sel.Kind() == types.MethodVal {
				f, _ := sel.Obj().(*types.Func)
				return f
			}
			return nil
		}
		f, _ := r.info.Uses[x.Sel].(*types.Func)
		return f
	}
	return nil
}

func hookName(h hook) string {
	if h.test {
		return testAlias + "." + h.name
	}
	return rtAlias + "." + h.name
}

// testHooks reports whether the calls of package testing that rttest
// models are hooked in this file: a test file, or another file that
// imports testing. testify's suite runs a suite's tests with t.Run from
// suite.go: without Run's edges, each test's code after the suite raced
// with the suite's tests (corpus session 30, 23 false races in
// TestRunSuite). Such a file's functions have no prologue (testPrologue),
// so rttest's wrapping variants run them, one frame more.
func (r *rewriter) testHooks() bool {
	if r.in.IsTest {
		return true
	}
	for _, im := range r.in.File.Imports {
		if im.Path.Value == `"testing"` {
			return true
		}
	}
	return false
}

func (r *rewriter) isHooked(call *ast.CallExpr) bool {
	fn := r.calledFunc(call)
	if fn == nil {
		return false
	}
	if h, ok := methodHooks[methodKey(fn)]; ok && h.name != "" {
		return true
	}
	h, ok := funcHooks[funcKey(fn)]
	return ok && h.name != "" && methodKey(fn) == ""
}

// hookCall instruments a call that has a hook: it returns the hook, the
// receiver argument's text ("" for a function) and the call's arguments,
// all instrumented. ok is false for other calls (nothing done).
func (r *rewriter) hookCall(call *ast.CallExpr) (h hook, recv string, args []ast.Expr, ok bool) {
	fn := r.calledFunc(call)
	if fn == nil {
		return hook{}, "", nil, false
	}
	if mk := methodKey(fn); mk != "" {
		h, ok = methodHooks[mk]
		if !ok || h.name == "" {
			return hook{}, "", nil, false
		}
		if h.test && !r.testHooks() {
			return hook{}, "", nil, false
		}
		sx := unparen(call.Fun)
		if ix, isIx := sx.(*ast.IndexExpr); isIx {
			sx = ix.X
		}
		se, isSel := unparen(sx).(*ast.SelectorExpr)
		if !isSel {
			return hook{}, "", nil, false
		}
		sel := r.info.Selections[se]
		if sel == nil || sel.Kind() != types.MethodVal {
			return hook{}, "", nil, false
		}
		recv = r.receiverArg(se.X, sel, h.test || h.value)
	} else {
		h, ok = funcHooks[funcKey(fn)]
		if !ok || h.name == "" || h.test && !r.testHooks() {
			return hook{}, "", nil, false
		}
	}
	if h.test {
		r.useTest = true
		h = r.testHook(h, call.Args) // testframes.go
	}
	for _, a := range call.Args {
		r.rd(a)
	}
	return h, recv, call.Args, true
}

// receiverArg instruments x, the receiver of a hooked method, and returns
// the text of the hook's receiver argument: a pointer to the sync object
// the method is declared on (following embedded fields), or x itself for
// interface methods and hooks that take the value (package testing's,
// reflect.Value's).
func (r *rewriter) receiverArg(x ast.Expr, sel *types.Selection, asIs bool) string {
	xt := typeOf(r.info, x)
	if _, isIface := core(xt).(*types.Interface); isIface || asIs {
		r.rd(x)
		return r.text(x)
	}
	if isPointer(xt) {
		r.rd(x)
	} else {
		r.loc(x)
	}
	text := r.text(x)
	t := xt
	path := sel.Index()
	for _, i := range path[:len(path)-1] {
		st := t
		if p, ok := core(st).(*types.Pointer); ok {
			st = p.Elem()
		}
		s, ok := core(st).(*types.Struct)
		if !ok {
			break
		}
		f := s.Field(i)
		text = "(" + text + ")." + f.Name()
		t = f.Type()
	}
	if _, isIface := core(t).(*types.Interface); isIface {
		return text
	}
	if isPointer(t) {
		return text
	}
	return "&(" + text + ")"
}

// call instruments a call expression.
func (r *rewriter) call(x *ast.CallExpr) {
	// A conversion. string(b) of a byte or rune slice reads its elements;
	// []byte(s) allocates.
	if r.isType(x.Fun) {
		if len(x.Args) == 1 && isString(typeOf(r.info, x)) && isSlice(typeOf(r.info, x.Args[0])) {
			// Added before the argument's own read: the outer wrap.
			lo, hi := r.span(x.Args[0])
			r.ed.wrap(lo, hi, rtAlias+".Elems(", ", "+r.asite(x.Pos())+")")
		}
		if len(x.Args) == 1 && isSlice(typeOf(r.info, x)) && isString(typeOf(r.info, x.Args[0])) {
			// []byte(s) makes a new array (rt.Alloc's reason).
			lo, hi := r.span(x)
			r.ed.wrapInner(lo, hi, rtAlias+".MakeSlice(", ", "+r.site(x.Pos())+")")
		}
		for _, a := range x.Args {
			r.rd(a)
		}
		return
	}
	if r.isBuiltin(x.Fun) {
		r.builtin(x)
		return
	}
	if id := identOf(x.Fun); id != nil {
		if o, ok := r.info.Uses[id].(*types.Func); ok && o.Pkg() != nil && o.Pkg().Path() == "unsafe" {
			for _, a := range x.Args {
				r.rd(a)
			}
			return
		}
	}
	if h, recv, args, ok := r.hookCall(x); ok {
		lo, hi := r.span(x)
		g := r.newGen(lo)
		if h.name == "MRun" {
			// m.Run() called where it was: rttest.MRunDone(m.Run(), site).
			g.lit(testAlias + ".MRunDone(" + recv + ".Run(), " + r.site(x.Pos()) + ")")
			r.ed.collapse(lo, hi, g.end(hi))
			return
		}
		name := hookName(h)
		if h.g {
			name += "G"
		}
		g.lit(name + "(")
		if h.sited {
			g.lit(r.site(x.Pos()) + ", " + r.recFlag() + ")(")
		}
		first := true
		if recv != "" {
			g.lit(recv)
			first = false
		}
		for _, a := range args {
			if !first {
				g.lit(", ")
			}
			first = false
			r.piece(g, a)
		}
		if x.Ellipsis.IsValid() {
			g.lit("...")
		}
		if !h.noSite && !h.sited {
			if !first {
				g.lit(", ")
			}
			g.lit(r.site(x.Pos()))
		}
		if h.rec && !h.sited {
			g.lit(", " + r.recFlag())
		}
		if h.g {
			g.lit(", " + r.gArg())
		}
		g.lit(")")
		r.ed.collapse(lo, hi, g.end(hi))
		return
	}
	if isCancelFunc(typeOf(r.info, x.Fun)) {
		lo, hi := r.span(x.Fun)
		r.ed.wrap(lo, hi, rtAlias+".CtxCancel(", ", "+r.site(x.Pos())+")")
	}
	fn := r.calledFunc(x)
	if fn != nil && fn.Name() == "Err" && fn.Pkg() != nil && fn.Pkg().Path() == "context" {
		defer func() {
			lo, hi := r.span(x)
			r.ed.wrap(lo, hi, rtAlias+".CtxDoneV(", ", "+r.site(x.Pos())+")")
		}()
	}
	var pre string // an event recorded before the call
	if fn != nil && (timerCalls[methodKey(fn)] || methodKey(fn) == "" && timerCalls[funcKey(fn)]) {
		// (funcKey names a method too: time.Time.After is not time.After.)
		pre = "Timer"
	}
	write, read := ioKind(fn)
	if r.untracedDep(fn) {
		write, read = depIOKind(fn)
	}
	if write {
		pre = "IO"
	}
	if pre != "" {
		// Recorded while the first argument (or the receiver) is
		// evaluated, that is, before the call: rt.Before(x, site) is x.
		// An untyped first argument would take the hook's type, so
		// then the function value goes through it: rt.Before(f, site)(x).
		first := x.Fun
		if len(x.Args) > 0 && !r.inlineValue(x.Args[0]) && !r.isType(x.Args[0]) && !isTupleExpr(r.info, x.Args[0]) {
			first = x.Args[0] // not f(g()) with g's several results
		}
		lo, hi := r.span(first)
		r.ed.wrap(lo, hi, rtAlias+"."+pre+"Before(", ", "+r.site(x.Pos())+")")
	}
	dep := r.depReceiver(x, fn)
	if dep != nil {
		lo, hi := r.span(dep)
		r.ed.wrap(lo, hi, rtAlias+".DepBefore(", ", "+r.site(x.Pos())+")")
	}
	std := r.stdCall(x) // accesses inside the standard library (stdcalls.go)
	r.variadicSlice(x, fn)
	if se, ok := unparen(x.Fun).(*ast.SelectorExpr); ok {
		if r.calledFun == nil {
			r.calledFun = map[*ast.SelectorExpr]bool{}
		}
		r.calledFun[se] = true // a call, not a method value: bindHooked leaves it
	}
	r.rd(x.Fun)
	for _, a := range x.Args {
		r.rd(a)
	}
	if std != nil {
		std()
	}
	r.freshCall(x, fn)
	r.decodeCall(x, fn)
	r.heldPtrCall(x, fn)
	if read || r.callbackCall(x, fn) {
		r.afterCall(x, "IORead", "") // rt.IORead
	}
	if dep != nil {
		lo, hi := r.span(dep) // a plain expression: evaluated again after
		r.afterCall(x, "DepAfter", string(r.ed.src[lo:hi])+", ")
	}
	r.barrierCall(x)
}

// isTupleExpr reports whether e is a call with several results.
func isTupleExpr(info *types.Info, e ast.Expr) bool {
	_, ok := typeOf(info, e).(*types.Tuple)
	return ok
}

// afterCall records rt.<hook>(prefix site) after the call x returns:
// around it, rt.<hook>V(x, prefix site), when its one result is used;
// after its statement otherwise (several results, none used: a
// statement's own wraps end where the call does). Not for a deferred or
// go statement's call, which runs later: IOReadV(tx.Rollback(), s) would
// run it now (defer tx.Rollback() rolled back at once).
func (r *rewriter) afterCall(x *ast.CallExpr, hook, prefix string) {
	if r.noBarrier[x] {
		return
	}
	args := prefix + r.site(x.Pos())
	t := typeOf(r.info, x)
	if tuple, ok := t.(*types.Tuple); ok && tuple.Len() != 1 || r.discarded[x] || t == nil {
		r.after = append(r.after, rtAlias+"."+hook+"("+args+")")
		return
	}
	lo, hi := r.span(x)
	r.ed.wrap(lo, hi, rtAlias+"."+hook+"V(", ", "+args+")")
}

// variadicSlice records the slice a call of traced variadic function fn
// makes of its arguments (f(a, b) passes []T{a, b}), written out so that
// rt.MakeSlice records its array's allocation, as for a literal: the
// callee's accesses of its parameter's elements are recorded, and the
// array may have had a dead object's address. Only where the element type
// can be named in the file (not a type parameter or another package's
// unexported type). A function value (fn nil: a closure, as go.uber.org/fx's
// tests' validateApp(t, opts...)) may be traced code too.
func (r *rewriter) variadicSlice(x *ast.CallExpr, fn *types.Func) {
	if x.Ellipsis.IsValid() || fn != nil && (fn.Pkg() == nil || !r.traced(fn.Pkg().Path())) {
		return
	}
	sig, ok := core(typeOf(r.info, x.Fun)).(*types.Signature)
	if !ok || !sig.Variadic() {
		return
	}
	n := sig.Params().Len()
	if len(x.Args) < n {
		return // no variadic argument: the parameter is nil
	}
	if _, tuple := typeOf(r.info, x.Args[0]).(*types.Tuple); tuple {
		return // f(g()), g's results spread
	}
	elem := sig.Params().At(n - 1).Type().(*types.Slice).Elem()
	name, ok := r.typeName(elem, x.Pos())
	if !ok {
		return
	}
	lo, _ := r.span(x.Args[n-1])
	_, hi := r.span(x.Args[len(x.Args)-1])
	r.ed.wrapOuter(lo, hi, rtAlias+".MakeSlice([]"+name+"{", "}, "+r.site(x.Args[n-1].Pos())+")...") // the call's ')' follows
}

// builtin instruments calls of the predeclared functions.
func (r *rewriter) builtin(x *ast.CallExpr) {
	name := identOf(x.Fun).Name
	switch name {
	case "Sizeof", "Alignof", "Offsetof":
		return // not evaluated
	case "len", "cap":
		if len(x.Args) == 1 {
			t := typeOf(r.info, x.Args[0])
			if isArray(t) {
				r.loc(x.Args[0])
				return
			}
			if isMap(t) {
				// len of a map reads it (as for the Go race detector).
				lo, hi := r.span(x.Args[0])
				r.ed.wrap(lo, hi, rtAlias+".MR(", ", "+r.asite(x.Pos())+")")
			}
		}
	case "append":
		r.appendCall(x)
		return
	case "new":
		lo, hi := r.span(x)
		r.ed.wrapInner(lo, hi, rtAlias+".New(", ", "+r.site(x.Pos())+")")
	case "make":
		if len(x.Args) >= 1 {
			fn := ""
			switch t := typeOf(r.info, x); {
			case isMap(t):
				fn = "MakeMap"
			case isSlice(t):
				fn = "MakeSlice"
			case isChan(t):
				fn = "MakeChan"
			}
			if fn != "" {
				lo, hi := r.span(x)
				r.ed.wrap(lo, hi, rtAlias+"."+fn+"(", ", "+r.site(x.Pos())+")")
			}
		}
	case "copy":
		if len(x.Args) == 2 {
			for _, a := range x.Args {
				r.rd(a)
			}
			fn := "Copy"
			if isString(typeOf(r.info, x.Args[1])) {
				fn = "CopyString"
			}
			r.replaceCall(x, fn, x.Args, r.asite(x.Pos()))
			return
		}
	case "delete", "clear":
		if len(x.Args) >= 1 && isMap(typeOf(r.info, x.Args[0])) {
			lo, hi := r.span(x.Args[0])
			r.ed.wrap(lo, hi, rtAlias+".MW(", ", "+r.asite(x.Pos())+")")
		}
		for _, a := range x.Args {
			r.rd(a)
		}
		return
	case "close":
		if len(x.Args) == 1 {
			r.rd(x.Args[0])
			r.replaceCall(x, "Close", x.Args, r.site(x.Pos())+", "+r.recFlag())
			return
		}
	}
	for _, a := range x.Args {
		r.rd(a)
	}
}

// replaceCall replaces the call x by rt.fn(args..., site).
func (r *rewriter) replaceCall(x *ast.CallExpr, fn string, args []ast.Expr, site string) {
	lo, hi := r.span(x)
	g := r.newGen(lo)
	g.lit(rtAlias + "." + fn + "(")
	for _, a := range args {
		r.piece(g, a)
		g.lit(", ")
	}
	g.lit(site + ")")
	r.ed.collapse(lo, hi, g.end(hi))
}

// appendCall instruments append: the elements it stores are written, the
// elements of a spread slice read.
func (r *rewriter) appendCall(x *ast.CallExpr) {
	for _, a := range x.Args {
		r.rd(a)
	}
	if len(x.Args) < 2 {
		return
	}
	if x.Ellipsis.IsValid() {
		fn := "AppendSlice"
		if isString(typeOf(r.info, x.Args[1])) {
			fn = "AppendString"
		}
		r.replaceCall(x, fn, x.Args, r.asite(x.Pos()))
		return
	}
	// Elements of the slice's own element type go through rt.Append,
	// which also sees the slice appended to; others (an element converted
	// to an interface, say, which the hook's type inference would not
	// accept) through rt.AppendN around the append.
	if st, ok := core(typeOf(r.info, x.Args[0])).(*types.Slice); ok {
		same := true
		for _, a := range x.Args[1:] {
			tv, ok := r.info.Types[a]
			if !ok || !(tv.Value != nil || tv.IsNil() || types.Identical(tv.Type, st.Elem())) {
				same = false
			}
		}
		// Elements of another type are converted to the element type
		// where the file can name it (interface{} from
		// append(args, string(q)): AppendN cannot tell whether append
		// grew the slice, and a new array's allocation went unrecorded,
		// go-workflows' false race, corpus session 26).
		conv := ""
		if !same {
			if name, ok := r.typeName(st.Elem(), x.Pos()); ok {
				conv, same = "("+name+")", true
			}
		}
		if same {
			lo, hi := r.span(x)
			g := r.newGen(lo)
			g.lit(rtAlias + ".Append(")
			r.piece(g, x.Args[0])
			g.lit(", " + r.asite(x.Pos()))
			for _, a := range x.Args[1:] {
				g.lit(", " + conv)
				if conv != "" {
					g.lit("(")
				}
				r.piece(g, a)
				if conv != "" {
					g.lit(")")
				}
			}
			g.lit(")")
			r.ed.collapse(lo, hi, g.end(hi))
			return
		}
	}
	lo, hi := r.span(x)
	r.ed.wrap(lo, hi, rtAlias+".AppendN(", ", "+strconv.Itoa(len(x.Args)-1)+", "+r.asite(x.Pos())+")")
}

// containsCall reports whether evaluating e may call a function or
// receive from a channel (function literals are not entered).
func containsCall(info *types.Info, e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found {
			return false
		}
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if tv, ok := info.Types[x.Fun]; ok && tv.IsType() {
				return true
			}
			if id := identOf(x.Fun); id != nil {
				if b, ok := info.Uses[id].(*types.Builtin); ok {
					switch b.Name() {
					case "len", "cap", "min", "max", "complex", "real", "imag", "new", "make", "append", "Sizeof", "Alignof", "Offsetof":
						return true
					}
				}
			}
			found = true
		case *ast.UnaryExpr:
			if x.Op == token.ARROW {
				found = true
			}
		}
		return !found
	})
	return found
}
