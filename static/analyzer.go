package static

import (
	"flag"
	"fmt"
	"go/build"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/ssa"
)

// Analyzer is the RELAY race analyzer. It requires buildssa, exports a
// *Summary fact for each function and method of the package, reports one
// diagnostic per warning that survives the enabled filters, and returns a
// *Result with every warning and the counters.
var Analyzer = &analysis.Analyzer{
	Name:       "relay",
	Doc:        analyzerDoc,
	URL:        "https://github.com/racekit/racekit/tree/main/static",
	Run:        run,
	Requires:   []*analysis.Analyzer{buildssa.Analyzer},
	FactTypes:  []analysis.Fact{new(Summary)},
	ResultType: reflect.TypeFor[*Result](),
	Flags:      analyzerFlags(),
}

const analyzerDoc = `report potential data races found statically (RELAY)

The relay analyzer summarizes each function by the locks it acquires and
may release and the lvalues it accesses under which locks, relative to its
entry and in terms of its parameters and package variables; it composes
the summaries bottom-up over the call graph and across packages (as
facts), and reports pairs of accesses from goroutines that may run in
parallel, to may-aliased lvalues, at least one a write, with no common
lock. Warnings are potential races: see the filters flag.`

// Config holds the analyzer's options; Analyzer's flags set DefaultConfig.
type Config struct {
	// Filters lists the enabled warning filters (see FilterNames).
	Filters map[string]bool
	// CallGraph is "vta" or "cha": how dynamic calls are resolved.
	CallGraph string
	// MaxAccesses bounds a summary's guarded accesses.
	MaxAccesses int
}

// DefaultConfig is the configuration the analyzer runs with.
var DefaultConfig = &Config{
	Filters:     DefaultFilters(),
	CallGraph:   "vta",
	MaxAccesses: 256,
}

type filterFlag struct{ c *Config }

func (f filterFlag) String() string {
	if f.c == nil {
		return ""
	}
	var on []string
	for _, n := range FilterNames {
		if f.c.Filters[n] {
			on = append(on, n)
		}
	}
	return strings.Join(on, ",")
}

func (f filterFlag) Set(s string) error {
	m, err := ParseFilters(s)
	if err != nil {
		return err
	}
	f.c.Filters = m
	return nil
}

func analyzerFlags() flag.FlagSet {
	fs := flag.NewFlagSet("relay", flag.ContinueOnError)
	fs.Var(filterFlag{DefaultConfig}, "filters", "enabled warning filters, comma-separated: all, none, or names from "+strings.Join(FilterNames, ","))
	fs.StringVar(&DefaultConfig.CallGraph, "callgraph", DefaultConfig.CallGraph, "dynamic call resolution: vta or cha")
	fs.IntVar(&DefaultConfig.MaxAccesses, "maxaccesses", DefaultConfig.MaxAccesses, "bound on the guarded accesses of one summary")
	return *fs
}

// Result is the analyzer's result for one package.
type Result struct {
	Pkg         string
	Warnings    []Warning // all warnings, filtered ones included (Removed says by what)
	DoubleLocks []DoubleLock
	Stats       Stats
}

// Stats counts what the analysis did in one package (or, summed, in many).
type Stats struct {
	Packages, Files, Lines                    int
	Functions, Summaries, Facts               int
	SCCs, RecursiveSCCs, Iterations, Diverged int
	CallSites, DynamicCalls, Unresolved       int
	NoSummary                                 int // calls to functions with no body and no fact
	GoSites, UnresolvedGo, HTTPHandlers       int
	Threads, ThreadPairs                      int
	SummaryAccesses, Widened, Truncated       int
	Candidates                                int // warnings before filters
	Removed                                   map[string]int
	Reported                                  int // warnings after filters
}

// Add sums counters.
func (s *Stats) Add(t *Stats) {
	s.Packages += t.Packages
	s.Files += t.Files
	s.Lines += t.Lines
	s.Functions += t.Functions
	s.Summaries += t.Summaries
	s.Facts += t.Facts
	s.SCCs += t.SCCs
	s.RecursiveSCCs += t.RecursiveSCCs
	s.Iterations += t.Iterations
	s.Diverged += t.Diverged
	s.CallSites += t.CallSites
	s.DynamicCalls += t.DynamicCalls
	s.Unresolved += t.Unresolved
	s.NoSummary += t.NoSummary
	s.GoSites += t.GoSites
	s.UnresolvedGo += t.UnresolvedGo
	s.HTTPHandlers += t.HTTPHandlers
	s.Threads += t.Threads
	s.ThreadPairs += t.ThreadPairs
	s.SummaryAccesses += t.SummaryAccesses
	s.Widened += t.Widened
	s.Truncated += t.Truncated
	s.Candidates += t.Candidates
	s.Reported += t.Reported
	for k, v := range t.Removed {
		if s.Removed == nil {
			s.Removed = map[string]int{}
		}
		s.Removed[k] += v
	}
}

// pkgState is the analysis of one package.
type pkgState struct {
	pass    *analysis.Pass
	cfg     *Config
	prog    *ssa.Program
	pkg     *ssa.Package
	funcs   []*ssa.Function
	local   map[*ssa.Function]bool
	callees map[ssa.CallInstruction][]*ssa.Function
	pta     *pta
	sums    map[*ssa.Function]*Summary
	res     map[*ssa.Function]*funcResult
	facts   map[types.Object]*Summary
	byName  map[string]*ssa.Function
	globals map[string]*ssa.Global
	types   map[types.Type]string
	sites   map[token.Pos]string
	stats   *Stats

	callers   map[*ssa.Function][]callerSite
	addrTaken map[*ssa.Function]bool
	allocVals map[string]ssa.Value
	// threadFuncs are the functions whose accesses warning generation
	// needs one by one: spawners and possible thread entries.
	threadFuncs map[*ssa.Function]bool
	// spawners start goroutines (go statements, WaitGroup.Go): their
	// direct callers are kept as thread functions too.
	spawners map[*ssa.Function]bool
	files    map[string]*token.File
	// std: the package is in the standard library (its own accesses keep
	// their std sites; see Access.Via).
	std bool
}

func run(pass *analysis.Pass) (any, error) {
	return analyze(pass, DefaultConfig)
}

func analyze(pass *analysis.Pass, cfg *Config) (*Result, error) {
	ssaRes := pass.ResultOf[buildssa.Analyzer].(*buildssa.SSA)
	ps := &pkgState{
		pass:    pass,
		cfg:     cfg,
		prog:    ssaRes.Pkg.Prog,
		pkg:     ssaRes.Pkg,
		local:   map[*ssa.Function]bool{},
		callees: map[ssa.CallInstruction][]*ssa.Function{},
		sums:    map[*ssa.Function]*Summary{},
		res:     map[*ssa.Function]*funcResult{},
		facts:   map[types.Object]*Summary{},
		byName:  map[string]*ssa.Function{},
		globals: map[string]*ssa.Global{},
		types:   map[types.Type]string{},
		sites:   map[token.Pos]string{},
		stats:   &Stats{Packages: 1},
	}
	for _, f := range pass.Files {
		ps.stats.Files++
		if tf := pass.Fset.File(f.Pos()); tf != nil {
			ps.stats.Lines += tf.LineCount()
			ps.std = ps.std || inGoroot(tf.Name())
		}
	}
	for _, fn := range ssaRes.SrcFuncs {
		ps.addFunc(fn)
	}
	ps.collect()
	ps.resolve()
	ps.pta = newPTA()
	ps.pta.solve(ps.funcs, ps)
	for _, m := range ps.pkg.Members {
		if g, ok := m.(*ssa.Global); ok {
			ps.globals[globalName(g)] = g
		}
	}
	ps.findThreadFuncs()
	ps.bottomUp()
	ps.export()
	ws := ps.warnings()
	res := &Result{Pkg: pass.Pkg.Path(), Warnings: ws, DoubleLocks: ps.doubleLocks(), Stats: *ps.stats}
	for i := range res.DoubleLocks {
		d := &res.DoubleLocks[i]
		pass.Report(analysis.Diagnostic{Pos: d.pos, Category: DoubleLockRule, Message: d.Message()})
	}
	for i := range ws {
		w := &ws[i]
		if w.Removed != "" {
			continue
		}
		pass.Report(analysis.Diagnostic{
			Pos:      w.A.pos,
			Category: w.Rule(),
			Message:  w.Message(),
			Related:  []analysis.RelatedInformation{{Pos: w.B.pos, Message: w.B.Kind + " of " + w.Object + " here"}},
		})
	}
	return res, nil
}

// addFunc adds a function with a body to the package's work list.
func (ps *pkgState) addFunc(fn *ssa.Function) {
	if fn == nil || ps.local[fn] || len(fn.Blocks) == 0 {
		return
	}
	if fn.Pkg != nil && fn.Pkg != ps.pkg {
		return
	}
	ps.local[fn] = true
	ps.funcs = append(ps.funcs, fn)
	ps.byName[fn.String()] = fn
}

// collect closes the work list over closures, synthetic wrappers and
// instantiations that the package's functions reference.
func (ps *pkgState) collect() {
	for i := 0; i < len(ps.funcs); i++ {
		fn := ps.funcs[i]
		for _, anon := range fn.AnonFuncs {
			ps.addFunc(anon)
		}
		var ops []*ssa.Value
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				ops = instr.Operands(ops[:0])
				for _, op := range ops {
					if op == nil {
						continue
					}
					if f, ok := (*op).(*ssa.Function); ok {
						ps.addFunc(f)
					}
				}
				if c, ok := instr.(ssa.CallInstruction); ok {
					if f := c.Common().StaticCallee(); f != nil {
						ps.addFunc(f)
						if httpRegistration(f) && len(c.Common().Args) > 0 {
							ps.addHandlerMethod(c.Common().Args[len(c.Common().Args)-1])
						}
					}
				}
			}
		}
	}
}

func (ps *pkgState) addHandlerMethod(h ssa.Value) {
	mi, ok := h.(*ssa.MakeInterface)
	if !ok {
		return
	}
	ms := ps.prog.MethodSets.MethodSet(mi.X.Type())
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Obj().Name() == "ServeHTTP" {
			ps.addFunc(ps.prog.MethodValue(ms.At(i)))
		}
	}
}

// resolve computes the callees of dynamic calls with go/callgraph: VTA
// over the package's functions, seeded with CHA (or CHA alone).
func (ps *pkgState) resolve() {
	var cg *callgraph.Graph
	chaGraph := cha.CallGraph(ps.prog)
	if ps.cfg.CallGraph == "cha" {
		cg = chaGraph
	} else {
		set := make(map[*ssa.Function]bool, len(ps.funcs))
		for _, f := range ps.funcs {
			set[f] = true
		}
		cg = vta.CallGraph(set, chaGraph)
	}
	for _, fn := range ps.funcs {
		n := cg.Nodes[fn]
		if n == nil {
			continue
		}
		for _, e := range n.Out {
			if e.Site == nil || e.Site.Common().StaticCallee() != nil {
				continue
			}
			ps.callees[e.Site] = append(ps.callees[e.Site], e.Callee.Func)
		}
	}
	for site, fs := range ps.callees {
		sort.Slice(fs, func(i, j int) bool { return fs[i].String() < fs[j].String() })
		out := fs[:0]
		for i, f := range fs {
			if i == 0 || f != fs[i-1] {
				out = append(out, f)
			}
		}
		ps.callees[site] = out
		// Targets with bodies in this program are analyzed here.
		for _, f := range out {
			if f.Pkg == nil {
				ps.addFunc(f)
			}
		}
	}
	ps.collect()
}

// findThreadFuncs marks spawners and possible thread entries.
func (ps *pkgState) findThreadFuncs() {
	ps.threadFuncs = map[*ssa.Function]bool{}
	ps.spawners = map[*ssa.Function]bool{}
	mark := func(v ssa.Value) {
		for v != nil {
			switch x := v.(type) {
			case *ssa.ChangeType:
				v = x.X
				continue
			case *ssa.MakeInterface:
				if _, isFunc := x.X.Type().Underlying().(*types.Signature); !isFunc {
					ms := ps.prog.MethodSets.MethodSet(x.X.Type())
					for i := 0; i < ms.Len(); i++ {
						if ms.At(i).Obj().Name() == "ServeHTTP" {
							ps.threadFuncs[ps.prog.MethodValue(ms.At(i))] = true
						}
					}
					return
				}
				v = x.X
				continue
			case *ssa.Function:
				ps.threadFuncs[x] = true
			case *ssa.MakeClosure:
				if f, ok := x.Fn.(*ssa.Function); ok {
					ps.threadFuncs[f] = true
				}
			}
			return
		}
	}
	for _, fn := range ps.funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				switch in := instr.(type) {
				case *ssa.Go:
					ps.threadFuncs[fn] = true
					ps.spawners[fn] = true
					for _, t := range ps.targets(in) {
						ps.threadFuncs[t] = true
					}
				case *ssa.Call:
					c := in.Common()
					f := c.StaticCallee()
					if f == nil || len(c.Args) == 0 {
						continue
					}
					if httpRegistration(f) || syncModel(f) == opWGGo {
						ps.threadFuncs[fn] = true
						mark(c.Args[len(c.Args)-1])
					}
					if timerCallback(f) || parallelSubtest(f, c) {
						ps.threadFuncs[fn] = true
						mark(c.Args[len(c.Args)-1])
					}
					if syncModel(f) == opWGGo || timerCallback(f) {
						ps.spawners[fn] = true
					}
				}
			}
		}
	}
	// The callers of a spawner continue in parallel with what it started.
	ps.buildCallers()
	for sp := range ps.spawners {
		for _, c := range ps.callers[sp] {
			ps.threadFuncs[c.fn] = true
		}
	}
}

// targets are the possible callees of a call site.
func (ps *pkgState) targets(site ssa.CallInstruction) []*ssa.Function {
	if f := site.Common().StaticCallee(); f != nil {
		return []*ssa.Function{f}
	}
	return ps.callees[site]
}

// local reports whether fn is analyzed in this package (ptaCallee).
func (ps *pkgState) isLocal(fn *ssa.Function) bool { return ps.local[fn] }

// summaryOf returns fn's summary: computed here, imported as a fact, or
// nil if there is none (a function without body or fact).
func (ps *pkgState) summaryOf(fn *ssa.Function) *Summary {
	if s, ok := ps.sums[fn]; ok {
		return s
	}
	if ps.local[fn] {
		return nil // not analyzed yet: only during collection
	}
	if fn.Origin() != nil {
		if s, ok := ps.sums[fn.Origin()]; ok {
			return s
		}
		fn = fn.Origin()
	}
	obj := fn.Object()
	if obj == nil || obj.Pkg() == nil || obj.Pkg() == ps.pass.Pkg {
		return nil
	}
	if s, ok := ps.facts[obj]; ok {
		return s
	}
	var s *Summary
	f := new(Summary)
	if ps.pass.ImportObjectFact(obj, f) {
		s = f
	}
	ps.facts[obj] = s
	return s
}

// bottomUp analyzes the package's functions callees first, iterating each
// strongly connected component of the call graph to a fixpoint.
func (ps *pkgState) bottomUp() {
	sccs := ps.sccs()
	ps.stats.SCCs = len(sccs)
	for _, scc := range sccs {
		recursive := len(scc) > 1 || ps.selfCall(scc[0])
		if !recursive {
			s, r := ps.analyzeFunc(scc[0])
			ps.stats.Iterations++
			ps.sums[scc[0]] = ps.widen(s)
			ps.res[scc[0]] = r
			continue
		}
		ps.stats.RecursiveSCCs++
		ps.fixpoint(scc)
	}
	ps.stats.Functions = len(ps.funcs)
	ps.stats.Summaries = len(ps.sums)
}

// fixpoint iterates a recursive component's summaries to a fixpoint with
// a worklist: a function is re-analyzed only when a callee in the
// component changed. Members start from no accesses and the identity
// lockset (∅, ∅), an upper bound of ⊥ whose fixpoint is still sound, so
// code after a recursive call is never taken as unreachable on the way.
// Rounds are bounded (fewer for large components); a component that does
// not settle gets ⊤ locksets.
func (ps *pkgState) fixpoint(scc []*ssa.Function) {
	in := map[*ssa.Function]bool{}
	for _, f := range scc {
		in[f] = true
		ps.sums[f] = &Summary{Fn: f.String(), Params: paramNames(f)}
	}
	callers := map[*ssa.Function][]*ssa.Function{}
	for _, f := range scc {
		for _, t := range ps.localCallees(f) {
			if in[t] {
				callers[t] = append(callers[t], f)
			}
		}
	}
	maxRounds := 8
	if len(scc) > 16 {
		maxRounds = 4
	}
	dirty := map[*ssa.Function]bool{}
	for _, f := range scc {
		dirty[f] = true
	}
	for round := 0; round < maxRounds && len(dirty) > 0; round++ {
		for _, f := range scc {
			if !dirty[f] {
				continue
			}
			delete(dirty, f)
			s, r := ps.analyzeFunc(f)
			ps.stats.Iterations++
			s = ps.widen(ps.sums[f].Join(s))
			s.Fn, s.Params = f.String(), paramNames(f)
			ps.res[f] = r
			if !s.Equal(ps.sums[f]) {
				for _, c := range callers[f] {
					dirty[c] = true
				}
			}
			ps.sums[f] = s
		}
	}
	if len(dirty) > 0 {
		ps.stats.Diverged++
		for _, f := range scc {
			ps.sums[f].Lock = TopLockset()
			ps.sums[f].Return = ReturnVal{Kind: ResultTop}
		}
	}
}

func paramNames(f *ssa.Function) []string {
	var ns []string
	for _, p := range f.Params {
		ns = append(ns, p.Name())
	}
	return ns
}

func (ps *pkgState) widen(s *Summary) *Summary {
	acc, merged, dropped := s.Accesses.widen(ps.cfg.MaxAccesses)
	if merged {
		ps.stats.Widened++
	}
	if dropped {
		ps.stats.Truncated++
	}
	s.Accesses = acc
	return s
}

func (ps *pkgState) selfCall(fn *ssa.Function) bool {
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if c, ok := instr.(ssa.CallInstruction); ok {
				if _, isGo := instr.(*ssa.Go); isGo {
					continue
				}
				for _, t := range ps.targets(c) {
					if t == fn {
						return true
					}
				}
			}
		}
	}
	return false
}

// sccs returns the call graph's strongly connected components in reverse
// topological order (callees first), by Tarjan's algorithm. go statements
// are not edges: the spawner does not wait for the goroutine's summary.
func (ps *pkgState) sccs() [][]*ssa.Function {
	index := map[*ssa.Function]int{}
	low := map[*ssa.Function]int{}
	on := map[*ssa.Function]bool{}
	var stack []*ssa.Function
	var out [][]*ssa.Function
	next := 0
	succs := ps.localCallees
	// Iterative Tarjan: functions can nest deeply.
	type frame struct {
		fn    *ssa.Function
		succs []*ssa.Function
		i     int
	}
	for _, root := range ps.funcs {
		if _, ok := index[root]; ok {
			continue
		}
		frames := []frame{{fn: root, succs: succs(root)}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		on[root] = true
		for len(frames) > 0 {
			f := &frames[len(frames)-1]
			if f.i < len(f.succs) {
				w := f.succs[f.i]
				f.i++
				if _, ok := index[w]; !ok {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					on[w] = true
					frames = append(frames, frame{fn: w, succs: succs(w)})
				} else if on[w] && index[w] < low[f.fn] {
					low[f.fn] = index[w]
				}
				continue
			}
			v := f.fn
			frames = frames[:len(frames)-1]
			if len(frames) > 0 {
				p := frames[len(frames)-1].fn
				if low[v] < low[p] {
					low[p] = low[v]
				}
			}
			if low[v] == index[v] {
				var scc []*ssa.Function
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					on[w] = false
					scc = append(scc, w)
					if w == v {
						break
					}
				}
				out = append(out, scc)
			}
		}
	}
	return out
}

// localCallees are the functions of this package that fn may call (go
// statements excepted: the spawner does not wait for the goroutine).
func (ps *pkgState) localCallees(fn *ssa.Function) []*ssa.Function {
	var s []*ssa.Function
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			c, ok := instr.(ssa.CallInstruction)
			if !ok {
				continue
			}
			if _, isGo := instr.(*ssa.Go); isGo {
				continue
			}
			for _, t := range ps.targets(c) {
				if ps.local[t] {
					s = append(s, t)
				} else if t.Origin() != nil && ps.local[t.Origin()] {
					s = append(s, t.Origin())
				}
			}
		}
	}
	return s
}

// export publishes the summaries of the package's declared functions and
// methods as facts.
func (ps *pkgState) export() {
	for _, fn := range ps.funcs {
		if fn.Synthetic != "" || fn.Pkg != ps.pkg || fn.Parent() != nil {
			continue
		}
		obj, _ := fn.Object().(*types.Func)
		if obj == nil || obj.Pkg() != ps.pass.Pkg {
			continue
		}
		s := ps.sums[fn]
		if s == nil {
			continue
		}
		ps.stats.SummaryAccesses += s.Accesses.Len()
		if !exportable(obj) {
			continue
		}
		ps.pass.ExportObjectFact(obj, s)
		ps.stats.Facts++
	}
}

// exportable says which summaries other packages can use: those of
// exported functions and methods (unexported ones are reached only from
// within the package, where their effects are already in their callers'
// summaries).
func exportable(obj *types.Func) bool {
	return obj.Exported()
}

// ---- naming of sites and memory ----

// gorootSrc is the standard library's source directory, with a trailing
// separator.
var gorootSrc = filepath.Join(build.Default.GOROOT, "src") + string(filepath.Separator)

// inGoroot says whether a file name or "file:line:col" site is in the
// standard library's source.
func inGoroot(site string) bool {
	return build.Default.GOROOT != "" && strings.HasPrefix(site, gorootSrc)
}

// stdFrames are the frames an access inside the standard library is
// reported with once it is located at the user's call of callee: the
// operation's function and site, then the std function the user called,
// as the top of Go's race report's stack would show them.
func stdFrames(a Access, callee *ssa.Function) []string {
	fr := []string{a.Fn + " " + a.Site}
	if c := callee.String(); c != a.Fn {
		fr = append(fr, c)
	}
	return fr
}

func (ps *pkgState) site(pos token.Pos) string {
	if s, ok := ps.sites[pos]; ok {
		return s
	}
	p := ps.pass.Fset.Position(pos)
	s := "?"
	if p.IsValid() {
		s = fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Column)
	}
	ps.sites[pos] = s
	return s
}

func (ps *pkgState) typeString(t types.Type) string {
	if s, ok := ps.types[t]; ok {
		return s
	}
	s := types.TypeString(t, nil)
	ps.types[t] = s
	return s
}

// memOfAddr is the memory identity of *v for an address value of type t.
func (ps *pkgState) memOfAddr(t types.Type) string {
	switch u := t.Underlying().(type) {
	case *types.Pointer:
		return "*" + ps.typeString(u.Elem())
	case *types.Slice:
		return "*" + ps.typeString(u.Elem())
	case *types.Map:
		return ps.mapMem(t)
	case *types.Chan:
		return "chan"
	case *types.Signature:
		return "func"
	}
	return "?"
}

func (ps *pkgState) fieldMem(ptr types.Type, f *types.Var) string {
	p, _ := ptr.Underlying().(*types.Pointer)
	if p == nil {
		return "?." + f.Name()
	}
	return ps.typeString(p.Elem()) + "." + f.Name()
}

func (ps *pkgState) mapMem(t types.Type) string { return "map:" + ps.typeString(t.Underlying()) }

func (ps *pkgState) elemMem(elem types.Type) string { return "*" + ps.typeString(elem) }

func (ps *pkgState) elemMemOfSlice(t types.Type) string {
	if s, ok := t.Underlying().(*types.Slice); ok {
		return "*" + ps.typeString(s.Elem())
	}
	return ""
}

// ptaCallee for the points-to analysis.
func (ps *pkgState) freshResult(fn *ssa.Function) bool {
	s := ps.summaryOf(fn)
	return s != nil && s.Return.Kind == ResultFresh
}
