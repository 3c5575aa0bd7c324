package instrument

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/build"
	"go/token"
	"go/types"
	"maps"
	"path"
	"path/filepath"
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
	// InitOnly reports whether a package variable is written by its
	// declaration only (initonly.go): its reads are not recorded. Nil:
	// none is.
	InitOnly func(v *types.Var) bool
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
	for _, spec := range in.File.Imports {
		r.importsC = r.importsC || spec.Path.Value == `"C"`
	}
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
	importsC   bool // the file uses cgo: cgoOpaque expressions stay as written
	gotoLabels map[*types.Label]bool
	addrLits   map[*ast.CompositeLit]bool // operands of &: New records them
	pkgName    string
	base       string

	sites   []uint32 // (line, col, func) triples
	funcs   []string
	funcIdx map[string]int
	// callees: (site, frame, line) triples, a site whose events stand for
	// an untraced function's (calleeSite), frames its (func, file) pairs.
	callees  []uint32
	frames   []string
	frameIdx map[[2]string]int
	// calls: the file's calls in traced code (noteCall), made sites of
	// their functions when the file is done, so that a function's sites
	// while it is rewritten are its hooks' (leafCopy counts them).
	calls    []callSite
	fn       string         // enclosing function's name, for sites
	lits     map[string]int // function literals numbered per enclosing function
	litDepth int            // function literals the rewrite is inside
	ntmp     int
	useTest  bool
	results  [][]*ast.Ident // named results of the enclosing functions
	after    []string       // events to record after the current statement
	defines  []string       // names the current statement declares (x, err := ...), which after's events must not name
	initAft  []string       // after's events of the last if's or switch's init statement
	ifInit   ast.Stmt       // the init statement of the if or expression switch being instrumented, whose after events initAllocs records
	norace   bool           // in a //go:norace function's body: plain memory accesses are not recorded (noraceFunc)

	// retSites: for each enclosing function, its site when it defers
	// calls (its returns call rt.Ret: funcs.go), else "".
	retSites []string

	captured     map[*types.Var]bool        // locals function literals capture (stdcalls.go), lazily
	bareMemStats map[*ast.CallExpr]bool     // runtime.ReadMemStats calls exprStmt brackets (not hooked)
	deferSpread  map[*ast.CallExpr][]string // deferred calls of one argument of several results: the names deferStmt binds them to
	hookedSpread map[*ast.CallExpr]bool     // those of them call hooked
	stmtCalls    map[*ast.CallExpr]*bpPlan  // BarrierPairs bracketing a statement
	noBarrier    map[*ast.CallExpr]bool     // calls of go and defer statements
	discarded    map[*ast.CallExpr]bool     // calls of expression statements: their results unused
	calledFun    map[*ast.SelectorExpr]bool // selectors called where they are (x.M(...)), not method values
	doneRecvd    map[*ast.CallExpr]bool     // ctx.Done() calls that are a receive's operand (recv.go), lazily

	quiet  []quietFunc // functions that may lose their Enter (quiet.go)
	leaves []leafFunc  // functions that may get a copy as written (leafCopy)
	// inRangeFunc counts the bodies of ranges over functions being
	// rewritten in the current function (ret).
	inRangeFunc int
	// pkgVarInit: rewriting a package-level var's initializer, outside
	// any function literal. Its composite literals are not wrapped
	// (MakeSlice, MakeMap, NewLit): the compiler lays out a literal of
	// constants statically, and a call in it, at each level of nesting,
	// makes all of it code in the package's init; a table of test cases
	// of thousands of nested literals (rivo/uniseg's) took the compiler
	// past 9.8 GB and was killed. Static data is never memory a dead
	// object had, and the patched runtime reports what init allocates.
	pkgVarInit bool
	nrec       int // access hooks given recFlag so far in this function
	nflag      int // other hooks given recFlag (a send's read of its channel): loop regions count them too (syncFlag)
	// gUse: per enclosing function body, whether a hook took its
	// goroutine-state local (gArg), so that its Enter becomes EnterG.
	gUse []bool
	// litPre: a prologue a function literal begins with (the Begin and
	// GoEnd of a go statement's literal: testframes.go)
	litPre    map[*ast.FuncLit]string
	factories map[*types.Func]bool // returnsPrologue's, being looked at
	// Function literals called where they are written (func() {...}(),
	// not a defer statement's: calledLits), their names (their sites'
	// function: litNames), those left inline wrappers (inlineLits,
	// inline.go), and the calls of defer statements (deferCalls).
	calledLits, inlineLits map[*ast.FuncLit]bool
	litNames               map[*ast.FuncLit]string
	deferCalls             map[*ast.CallExpr]bool
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
	return r.base + "+" + strconv.Itoa(r.siteIn(p, r.fn, false))
}

// siteIn registers the position p in function fn, its accesses wide or
// not (trace.Site.Wide: rt.WideSite in its triple), and returns its index
// among the file's sites.
func (r *rewriter) siteIn(p token.Pos, fn string, wide bool) int {
	pos := r.fset.PositionFor(p, false)
	id := len(r.sites) / 3
	k := uint32(r.funcIndex(fn))
	if wide {
		k |= wideSite
	}
	r.sites = append(r.sites, uint32(pos.Line), uint32(pos.Column), k)
	return id
}

// wideSite marks a wide site's function index in the file's site table
// (rt.RegisterFile's wideSite).
const wideSite = 1 << 31

// funcIndex returns the index of the function name in the file's table of
// names, adding it if new.
func (r *rewriter) funcIndex(name string) int {
	k, ok := r.funcIdx[name]
	if !ok {
		k = len(r.funcs)
		r.funcs = append(r.funcs, name)
		r.funcIdx[name] = k
	}
	return k
}

// calleeSite is site for a hook that records what the untraced function
// fn does at its call at p: the site also names fn, which reports show as
// the innermost frame, above the call's (trace.Site.Callee).
func (r *rewriter) calleeSite(p token.Pos, fn *types.Func) string {
	s := r.site(p)
	pos := r.fset.PositionFor(fn.Pos(), false)
	file := pos.Filename
	if rest, ok := strings.CutPrefix(file, "$GOROOT/"); ok && build.Default.GOROOT != "" {
		// Export data names std files so; Go's reports name them
		// by the real path.
		file = filepath.Join(build.Default.GOROOT, rest)
	}
	key := [2]string{runtimeName(fn), file}
	if r.frameIdx == nil {
		r.frameIdx = map[[2]string]int{}
	}
	j, ok := r.frameIdx[key]
	if !ok {
		j = len(r.frames) / 2
		r.frames = append(r.frames, key[0], key[1])
		r.frameIdx[key] = j
	}
	r.callees = append(r.callees, uint32(len(r.sites)/3-1), uint32(j), uint32(max(pos.Line, 0)))
	return s
}

// asite is site for an access hook: the site, then the flag saying
// whether the enclosing frame's accesses are recorded (recFlag).
func (r *rewriter) asite(p token.Pos) string {
	return r.withRec(r.site(p))
}

// wideAsite is asite for an access of a wide value (trace.Site.Wide).
func (r *rewriter) wideAsite(p token.Pos) string {
	return r.withRec(r.base + "+" + strconv.Itoa(r.siteIn(p, r.fn, true)))
}

// withRec is an access hook's site, then the flag saying whether the
// enclosing frame's accesses are recorded (asite).
func (r *rewriter) withRec(site string) string {
	r.nrec++
	return site + ", " + r.recFlag()
}

// syncFlag is recFlag for a hook that is not an access hook but records
// an access under the flag (a send's or close's read of its channel): a
// loop of sends is a sampling region as a loop of reads is (loopRegion),
// though its body cannot run as written (rawCopyOK).
func (r *rewriter) syncFlag() string {
	r.nflag++
	return r.recFlag()
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
	calls := r.callTable()
	register := "RegisterFile"
	switch {
	case len(calls) > 0:
		register = "RegisterFileCalls"
	case len(r.callees) > 0:
		register = "RegisterFileCallees"
	}
	fmt.Fprintf(&b, "var %s = %s.%s(%s, ", r.base, rtAlias, register, strconv.Quote(r.in.Path))
	writeStrings(&b, r.funcs)
	b.WriteString(", ")
	writeUint32s(&b, r.sites)
	if len(r.callees) > 0 || len(calls) > 0 {
		b.WriteString(", ")
		writeUint32s(&b, r.callees)
		b.WriteString(", ")
		writeStrings(&b, r.frames)
	}
	if len(calls) > 0 {
		b.WriteString(", ")
		writeUint32s(&b, calls)
	}
	b.WriteString(")\n")
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
	"runtime":     "GC",   // hashicorp/go-msgpack's codec: runtime.SetFinalizer alone

	"testing/synctest": "Wait",
	"iter":             "Pull[int]", // generic: an instance is a value
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
				r.pkgVarInit = true
				for _, s := range d.Specs {
					r.valueSpec(s.(*ast.ValueSpec))
				}
				r.pkgVarInit = false
			}
		}
	}
	r.copyLeaves(r.dropQuietEnters())
}

// skipFunc reports whether a function's directives forbid instrumenting it:
// functions that must not call or grow the stack.
func skipFunc(d *ast.FuncDecl) bool {
	return hasDirective(d, "//go:nosplit", "//go:systemstack", "//go:nowritebarrier", "//go:nowritebarrierrec", "//go:yeswritebarrierrec", "//go:linkname")
}

// noraceFunc reports whether d is marked //go:norace. Go's compiler does
// not instrument such a function's loads and stores, but what the runtime
// and the standard library record for it still is: its channel operations,
// locks, go statements, maps, copy, append and conversions, and the
// function literals in it, which are functions of their own. So the
// rewriter instruments it with its plain accesses left out (r.norace);
// left whole it hid the synchronization of lesismal/nbio's event loops,
// all marked norace, and the copy whose race go test -race reports in its
// TestUDP (corpus session 55).
func noraceFunc(d *ast.FuncDecl) bool {
	return hasDirective(d, "//go:norace")
}

// hasDirective reports whether d's doc comment has one of the directives.
func hasDirective(d *ast.FuncDecl, directives ...string) bool {
	if d.Doc == nil {
		return false
	}
	for _, c := range d.Doc.List {
		if slices.Contains(directives, strings.Fields(c.Text + " ")[0]) {
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
		outer := r.defines
		r.defines = declaredNames(s)
		defer func() {
			r.defines = outer
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
		r.exprStmt(x, inList)
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
		r.deferStmt(x) // callexpr.go
	case *ast.ReturnStmt:
		r.returnStmt(x, inList)
	case *ast.DeclStmt:
		r.declStmt(x, inList)
	case *ast.IfStmt:
		r.initStmt(x.Init)
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
		r.switchStmt(x)
	case *ast.TypeSwitchStmt:
		r.typeSwitchStmt(x)
	case *ast.SelectStmt:
		r.selectStmt(x, label)
	case *ast.BranchStmt, *ast.EmptyStmt, *ast.BadStmt:
	}
}

// exprStmt instruments the expression statement x: a log.Fatal call first
// ends the trace, a receive statement is rewritten whole (recvStmt), and
// any other expression is read, its call's results discarded.
func (r *rewriter) exprStmt(x *ast.ExprStmt, inList bool) {
	if inList {
		r.tbStmt(x) // tblock.go
		if fn := r.calledFunc(x.X); fn != nil {
			if isLogFatal(funcKey(fn)) || isLogFatal(methodKey(fn)) {
				lo, hi := r.span(x)
				r.ed.insertAt(lo, rtAlias+".Finish(); ", lo, hi)
			}
		}
	}
	if u, ok := unparen(x.X).(*ast.UnaryExpr); ok && u.Op == token.ARROW && inList && r.recvStmt(x, u) {
		return
	}
	if c, ok := unparen(x.X).(*ast.CallExpr); ok {
		if r.discarded == nil {
			r.discarded = map[*ast.CallExpr]bool{}
		}
		r.discarded[c] = true
		if fn := r.calledFunc(c); inList && fn != nil && funcKey(fn) == "runtime.ReadMemStats" {
			// Called by the program's own frame, between rt's two
			// halves of rt.ReadMemStats (a crash inside prints the
			// stack: no frame of racekit's in it).
			mark(&r.bareMemStats, c)
			lo, hi := r.span(x)
			r.ed.wrap(lo, hi, rtAlias+".MemStatsBefore(); ", "; "+rtAlias+".MemStatsAfter()")
		}
	}
	bp := r.stmtBarrier(x, x.X, inList)
	r.rd(x.X)
	r.finishStmtBarrier(bp, x)
}

// returnStmt instruments the return statement x: its results are read,
// channels among them wrapped in rt.ChanOut, and a bare return reads the
// shared named results.
func (r *rewriter) returnStmt(x *ast.ReturnStmt, inList bool) {
	// A return inside a function literal of an enclosing statement's
	// call (sort.Slice's less) keeps that statement's pending events.
	outer := r.after
	r.after = nil
	defer func() { r.after = outer }()
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
	if len(r.after) > 0 {
		r.returnAfter(x, inList)
	}
	defer r.ret(x, inList)
	if len(x.Results) == 0 && inList && len(r.results) > 0 && !r.norace {
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
}

// returnAfter records the events due after a call in a return's result
// (r.after: the I/O read of `return r.Read(b)`, the usual body of a
// reader that wraps another, whose caller's acquire was lost) before the
// function returns: `return E` becomes
// `{ t1, ..., tn := E; events; return t1, ..., tn }`. Only a lone result,
// a call of n results or a typed value: among several results an untyped
// constant would change type in the :=, and those events stay unrecorded.
func (r *rewriter) returnAfter(x *ast.ReturnStmt, inList bool) {
	if !inList || len(x.Results) != 1 {
		return
	}
	e := x.Results[0]
	n := 1
	switch t := typeOf(r.info, e).(type) {
	case nil:
		return
	case *types.Tuple:
		n = t.Len()
	default:
		if isUntyped(t) {
			return
		}
	}
	temps := make([]string, n)
	for i := range temps {
		temps[i] = r.tmp()
	}
	lo, hi := r.span(e)
	expr := r.ed.render(lo, hi)
	slo, shi := r.span(x)
	list := strings.Join(temps, ", ")
	r.ed.collapse(slo, shi, "{ "+list+" := "+expr+"; "+strings.Join(r.after, "; ")+"; return "+list+" }")
}

// declStmt instruments a var declaration x: its specs' values (and the
// fresh results they assign), and, in a statement list, the creation of
// the escaping variables it declares.
func (r *rewriter) declStmt(x *ast.DeclStmt, inList bool) {
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
}

// initStmt instruments the init statement of an if or an expression
// switch, whose events after it (r.initAft) initAllocs records.
func (r *rewriter) initStmt(s ast.Stmt) {
	saved := r.ifInit
	r.ifInit = s
	r.stmt(s, false, nil)
	r.ifInit = saved
}

// switchStmt instruments an expression switch x: its init statement (whose
// allocations are recorded before the tag is evaluated), the tag, and
// each clause's expressions and body.
func (r *rewriter) switchStmt(x *ast.SwitchStmt) {
	r.initStmt(x.Init)
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
}

// typeSwitchStmt instruments a type switch x: its init statement, the
// operand of its type assertion, and each clause's body, in which the
// variable the clause declares is allocated.
func (r *rewriter) typeSwitchStmt(x *ast.TypeSwitchStmt) {
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
}

// writeStrings writes the literal of the []string ss.
func writeStrings(b *strings.Builder, ss []string) {
	b.WriteString("[]string{")
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(s))
	}
	b.WriteString("}")
}

// writeUint32s writes the literal of the []uint32 us.
func writeUint32s(b *strings.Builder, us []uint32) {
	b.WriteString("[]uint32{")
	for i, u := range us {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(strconv.FormatUint(uint64(u), 10))
	}
	b.WriteString("}")
}

// declaredNames are the names statement s declares: the new variables of
// a define (x, err := f(x)), a var or const declaration's names.
func declaredNames(s ast.Stmt) []string {
	var names []string
	switch x := s.(type) {
	case *ast.AssignStmt:
		if x.Tok == token.DEFINE {
			for _, l := range x.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					names = append(names, id.Name)
				}
			}
		}
	case *ast.DeclStmt:
		if g, ok := x.Decl.(*ast.GenDecl); ok {
			for _, sp := range g.Specs {
				if vs, ok := sp.(*ast.ValueSpec); ok {
					for _, id := range vs.Names {
						names = append(names, id.Name)
					}
				}
			}
		}
	}
	return names
}

// mark sets k in the set *m, made if nil.
func mark[K comparable](m *map[K]bool, k K) {
	if *m == nil {
		*m = map[K]bool{}
	}
	(*m)[k] = true
}
