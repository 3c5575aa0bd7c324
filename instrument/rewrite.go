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
			r.tbStmt(x) // tblock.go
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
	r.ed.insertAt(pos, " "+r.allocVar("Alloc", v.Name(), decl)+";", pos, pos)
}

// allocVar is the hook call (fn: Alloc or AllocTrue) that records the
// creation of escaping variable name, declared at decl, and the write of
// its initial value (rt.Alloc).
func (r *rewriter) allocVar(fn, name string, decl token.Pos) string {
	return rtAlias + "." + fn + "(&" + name + ", " + r.allocSite(decl) + ")"
}

// allocSite is the site and sampling flag of an allocation hook that also
// records a write (rt.Alloc, rt.NewLit). Unlike asite it does not count
// as an access hook: a function with allocations gets no unrecorded copy
// (leafCopy), since its allocations must be recorded in every call.
func (r *rewriter) allocSite(p token.Pos) string {
	return r.site(p) + ", " + r.recFlag()
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
				parts = append(parts, r.allocVar("AllocTrue", id.Name, id.Pos()))
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
				b.WriteString("; " + r.allocVar("Alloc", id.Name, id.Pos()))
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
					r.ed.appendAt(hi, "; "+r.allocVar("Alloc", id.Name, id.Pos()), lo, hi)
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
// their own), nor a type parameter (which may be one). A struct of one
// field and an array of one element are their element, as Go's compiler
// takes them (and so its race instrumentation): a copy of a
// sync/atomic.Value (struct{ v any }) is one access at its first word,
// which Store's atomic write of the second does not race with under go
// test -race, while a struct holding a Value and more is its words.
func whole(t types.Type) bool {
	if t == nil {
		return false
	}
	if _, ok := types.Unalias(t).(*types.TypeParam); ok {
		return false
	}
	switch u := t.Underlying().(type) {
	case *types.Struct:
		return u.NumFields() == 1 && whole(u.Field(0).Type())
	case *types.Array:
		return u.Len() == 1 && whole(u.Elem())
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
				// a dead one had, and writes its fields.
				lo, hi := r.span(x)
				r.ed.wrapInner(lo, hi, rtAlias+".NewLit(", ", "+r.allocSite(x.Pos())+")")
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
					fn, name = "NewLit", "&"+name
				}
			} else if fn != "" && !named {
				name, named = r.typeName(t, x.Pos())
			}
			if fn != "" && named {
				lo, hi := r.span(x)
				var site string
				if fn == "NewLit" {
					site = r.allocSite(x.Pos())
				} else {
					site = r.site(x.Pos())
				}
				r.ed.wrapInner(lo, hi, rtAlias+"."+fn+"("+name, ", "+site+")")
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
