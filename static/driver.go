package static

import (
	"fmt"
	"go/ast"
	"go/types"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
)

// Options configures Run.
type Options struct {
	Config *Config // nil: DefaultConfig
	Tests  bool    // also analyze the packages' test files
	Dir    string  // directory to resolve patterns in ("" = current)
}

// Report is the outcome of Run.
type Report struct {
	Warnings []Warning // warnings of the named packages, filtered ones included
	// DoubleLocks of the named packages (doublelock.go), each once.
	DoubleLocks []DoubleLock
	Stats       Stats    // summed over every package analyzed, dependencies included
	Errors      []string // package loading and type errors
	Elapsed     time.Duration
}

// Kept returns the warnings no enabled filter removed.
func (r *Report) Kept() []Warning {
	var out []Warning
	for _, w := range r.Warnings {
		if w.Removed == "" {
			out = append(out, w)
		}
	}
	return out
}

// Run loads the packages matching patterns with go/packages and analyzes
// them and their dependencies bottom-up: a package runs once all its
// imports are done (in parallel, GOMAXPROCS at a time), with its
// dependencies' summaries as facts, as go vet does. Each package's SSA and
// syntax are dropped as soon as it is done, so memory holds the type
// information and the summaries, not every package's IR. Load errors are
// returned in Report.Errors; no analysis runs if there are any.
func Run(patterns []string, opts Options) (*Report, error) {
	start := time.Now()
	cfg := opts.Config
	if cfg == nil {
		cfg = DefaultConfig
	}
	lcfg := &packages.Config{Mode: packages.LoadAllSyntax, Tests: opts.Tests, Dir: opts.Dir}
	pkgs, err := packages.Load(lcfg, patterns...)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	var all []*packages.Package
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		all = append(all, p)
		for _, e := range p.Errors {
			rep.Errors = append(rep.Errors, e.Error())
		}
	})
	if len(rep.Errors) > 0 {
		rep.Elapsed = time.Since(start)
		return rep, nil
	}
	roots := map[*packages.Package]bool{}
	for _, p := range pkgs {
		roots[p] = true
	}

	// Dependency-counting scheduler over the import graph.
	pending := map[*packages.Package]int{}
	dependents := map[*packages.Package][]*packages.Package{}
	for _, p := range all {
		pending[p] = len(p.Imports)
		for _, imp := range p.Imports {
			dependents[imp] = append(dependents[imp], p)
		}
	}
	facts := &factStore{m: map[types.Object]*Summary{}}
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		results []*Result
		firstEr error
	)
	ready := make(chan *packages.Package, len(all))
	for _, p := range all {
		if pending[p] == 0 {
			ready <- p
		}
	}
	remaining := len(all)
	if remaining == 0 {
		close(ready)
	}
	workers := runtime.GOMAXPROCS(0)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range ready {
				t0 := time.Now()
				res, err := analyzePackage(p, cfg, facts)
				if traceRun {
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					n := 0
					if res != nil {
						n = res.Stats.Functions
					}
					fmt.Fprintf(os.Stderr, "relay: %s: %d functions in %v, heap %d MiB\n", p.PkgPath, n, time.Since(t0).Round(time.Millisecond), ms.HeapAlloc>>20)
				}
				mu.Lock()
				if err != nil && firstEr == nil {
					firstEr = fmt.Errorf("%s: %v", p.PkgPath, err)
				}
				if res != nil {
					rep.Stats.Add(&res.Stats)
					if roots[p] {
						results = append(results, res)
					}
				}
				for _, d := range dependents[p] {
					pending[d]--
					if pending[d] == 0 {
						ready <- d
					}
				}
				remaining--
				if remaining == 0 {
					close(ready)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstEr != nil {
		return nil, firstEr
	}
	// With Tests a package appears in several variants: keep each site
	// pair once, preferring a variant's warning no filter removed.
	var ws []Warning
	for _, res := range results {
		ws = append(ws, res.Warnings...)
	}
	rep.Warnings = Dedup(ws, cfg.Filters)
	seen := map[string]bool{}
	for _, res := range results {
		for _, d := range res.DoubleLocks {
			if k := d.At + "|" + d.Lock2 + "|" + d.Lock; !seen[k] {
				seen[k] = true
				rep.DoubleLocks = append(rep.DoubleLocks, d)
			}
		}
	}
	sort.SliceStable(rep.DoubleLocks, func(i, j int) bool { return compareSites(rep.DoubleLocks[i].At, rep.DoubleLocks[j].At) < 0 })
	sort.SliceStable(rep.Warnings, func(i, j int) bool {
		a, b := &rep.Warnings[i], &rep.Warnings[j]
		if c := compareSites(a.A.Site, b.A.Site); c != 0 {
			return c < 0
		}
		return compareSites(a.B.Site, b.B.Site) < 0
	})
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// compareSites orders "file:line:col" by file, then numerically.
func compareSites(a, b string) int {
	fa, ra := splitSite(a)
	fb, rb := splitSite(b)
	if fa != fb {
		return strings.Compare(fa, fb)
	}
	la, ca := lineCol(ra)
	lb, cb := lineCol(rb)
	if la != lb {
		return la - lb
	}
	return ca - cb
}

func lineCol(rest string) (int, int) {
	parts := strings.Split(strings.TrimPrefix(rest, ":"), ":")
	if len(parts) != 2 {
		return 0, 0
	}
	l, _ := strconv.Atoi(parts[0])
	c, _ := strconv.Atoi(parts[1])
	return l, c
}

// traceRun logs each package's analysis time (RACEKIT_RELAY_TRACE=1).
var traceRun = os.Getenv("RACEKIT_RELAY_TRACE") != ""

// factStore holds the exported summaries of every analyzed package: one
// type-checked universe, so objects are shared keys.
type factStore struct {
	mu sync.Mutex
	m  map[types.Object]*Summary
}

// analyzePackage builds p's SSA (as buildssa does) and runs the analysis
// with a hand-made Pass, then drops p's syntax and type annotations.
func analyzePackage(p *packages.Package, cfg *Config, facts *factStore) (*Result, error) {
	defer func() {
		p.Syntax = nil
		p.TypesInfo = nil
	}()
	if p.Types == nil || p.TypesInfo == nil || len(p.Syntax) == 0 {
		return nil, nil
	}
	prog := ssa.NewProgram(p.Fset, 0)
	for _, imp := range p.Types.Imports() {
		prog.CreatePackage(imp, nil, nil, true)
	}
	spkg := prog.CreatePackage(p.Types, p.Syntax, p.TypesInfo, false)
	spkg.Build()
	var funcs []*ssa.Function
	var addAnons func(f *ssa.Function)
	addAnons = func(f *ssa.Function) {
		funcs = append(funcs, f)
		for _, anon := range f.AnonFuncs {
			addAnons(anon)
		}
	}
	for _, file := range p.Syntax {
		for _, decl := range file.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok {
				if obj, ok := p.TypesInfo.Defs[fd.Name].(*types.Func); ok {
					if f := prog.FuncValue(obj); f != nil {
						addAnons(f)
					}
				}
			}
		}
	}
	pass := &analysis.Pass{
		Analyzer:   Analyzer,
		Fset:       p.Fset,
		Files:      p.Syntax,
		Pkg:        p.Types,
		TypesInfo:  p.TypesInfo,
		TypesSizes: p.TypesSizes,
		ResultOf:   map[*analysis.Analyzer]any{buildssa.Analyzer: &buildssa.SSA{Pkg: spkg, SrcFuncs: funcs}},
		Report:     func(analysis.Diagnostic) {},
		ImportObjectFact: func(obj types.Object, fact analysis.Fact) bool {
			facts.mu.Lock()
			s := facts.m[obj]
			facts.mu.Unlock()
			if s == nil {
				return false
			}
			*fact.(*Summary) = *s
			return true
		},
		ExportObjectFact: func(obj types.Object, fact analysis.Fact) {
			facts.mu.Lock()
			facts.m[obj] = fact.(*Summary)
			facts.mu.Unlock()
		},
		ImportPackageFact: func(*types.Package, analysis.Fact) bool { return false },
		ExportPackageFact: func(analysis.Fact) {},
		AllObjectFacts:    func() []analysis.ObjectFact { return nil },
		AllPackageFacts:   func() []analysis.PackageFact { return nil },
		ReadFile:          os.ReadFile,
	}
	return analyze(pass, cfg)
}
