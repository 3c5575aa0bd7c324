package instrument

// Type-checking the packages to instrument without go list -export.
//
// go/packages, asked for types without NeedDeps, runs go list -export
// -deps: the go command compiles every package of the graph (without
// -race) for its export data, only for the type checker to check the
// targets again from source. On a cold build cache that is a whole build
// of the module's dependencies before racekit's own, instrumented one:
// prometheus/alertmanager (556 packages) spent 225 of its 230 seconds of
// "parsing and type-checking" in that go list (bench/results/corpus,
// session 82). Here go list runs without -export, every package outside
// the standard library is checked from source (function bodies only in
// the packages loaded for instrumenting), and the standard library's
// types come from its export data, which go caches once for all runs.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"os"
	"runtime"
	"sort"
	"sync"

	"golang.org/x/tools/go/gcexportdata"
	"golang.org/x/tools/go/packages"
)

// typeLoader type-checks package graphs from source, sharing what it
// checked between the loads of one run (the dependencies first, then the
// main module's packages with their tests, which import them).
type typeLoader struct {
	cfg   *Config
	fset  *token.FileSet
	sizes types.Sizes
	cpu   chan struct{} // limits parsing and checking to GOMAXPROCS at once

	mu      sync.Mutex
	checked map[string]*packages.Package // by ID: packages a load's roots checked with bodies
	std     map[string]*types.Package    // the standard library's packages read from export data, by path
	stdErr  map[string]error
	export  map[string]string // std package path → export data file
}

func newTypeLoader(cfg *Config) *typeLoader {
	goarch, err := goEnvVar(cfg.Dir, cfg.goEnv(), "GOARCH")
	if err != nil || goarch == "" {
		goarch = runtime.GOARCH
	}
	return &typeLoader{
		cfg:     cfg,
		fset:    token.NewFileSet(),
		sizes:   types.SizesFor("gc", goarch),
		cpu:     make(chan struct{}, runtime.GOMAXPROCS(0)),
		checked: map[string]*packages.Package{},
		std:     map[string]*types.Package{},
		stdErr:  map[string]error{},
		export:  map[string]string{},
	}
}

// load lists the graph of targets (with their tests if tests) and
// type-checks it: the roots with their function bodies and type
// information, as go/packages' NeedSyntax|NeedTypes|NeedTypesInfo gives
// them; the other packages outside std for their declarations only.
func (l *typeLoader) load(tests bool, targets []string) ([]*packages.Package, error) {
	lcfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
			packages.NeedImports | packages.NeedDeps | packages.NeedModule,
		Dir:        l.cfg.Dir,
		Env:        l.cfg.goEnv(),
		BuildFlags: l.cfg.BuildFlags,
		Tests:      tests,
		Overlay:    l.cfg.raceSrc,
	}
	roots, err := packages.Load(lcfg, targets...)
	if err != nil {
		return nil, fmt.Errorf("loading packages: %v", err)
	}
	isRoot := map[*packages.Package]bool{}
	for _, p := range roots {
		isRoot[p] = true
	}
	// The std packages the others import need export data; std's own
	// imports do not (an export file holds what its importers need).
	var all []*packages.Package
	var stdPaths []string
	packages.Visit(roots, func(p *packages.Package) bool {
		if !isStdPkg(p) {
			all = append(all, p)
			return true
		}
		if _, ok := l.export[p.PkgPath]; !ok && p.PkgPath != "unsafe" {
			stdPaths = append(stdPaths, p.PkgPath)
		}
		return false
	}, nil)
	if err := l.listExport(stdPaths); err != nil {
		return nil, err
	}
	done := map[*packages.Package]chan struct{}{}
	for _, p := range all {
		done[p] = make(chan struct{})
	}
	var wg sync.WaitGroup
	for _, p := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[p])
			// go/packages leaves out the import that closes a cycle
			// (TestTypeLoaderImportCycle): the waits end.
			for _, ip := range p.Imports {
				if c := done[ip]; c != nil {
					<-c
				}
			}
			l.check(p, isRoot[p])
		}()
	}
	wg.Wait()
	return roots, nil
}

// isStdPkg reports whether p is a standard-library package.
func isStdPkg(p *packages.Package) bool {
	return p.Module == nil && stdPath(p.PkgPath)
}

// listExport asks go list -export for the export data files of the std
// packages not listed yet (go builds them once; its cache keeps them).
func (l *typeLoader) listExport(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	sort.Strings(paths)
	pkgs, err := packages.Load(&packages.Config{
		Mode:       packages.NeedName | packages.NeedExportFile,
		Dir:        l.cfg.Dir,
		Env:        l.cfg.goEnv(),
		BuildFlags: l.cfg.BuildFlags,
	}, paths...)
	if err != nil {
		return fmt.Errorf("loading the standard library's export data: %v", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range pkgs {
		l.export[p.PkgPath] = p.ExportFile
	}
	return nil
}

// importStd returns the std package path, read from its export data into
// the view all std packages share (gcexportdata fills in the packages an
// export file refers to; later reads complete them).
func (l *typeLoader) importStd(path string) (*types.Package, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.std[path]; p != nil && p.Complete() {
		return p, nil
	}
	if err := l.stdErr[path]; err != nil {
		return nil, err
	}
	p, err := l.readExport(path)
	if err != nil {
		l.stdErr[path] = err
		return nil, err
	}
	return p, nil
}

func (l *typeLoader) readExport(path string) (*types.Package, error) {
	file := l.export[path]
	if file == "" {
		return nil, fmt.Errorf("no export data for %s", path)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := gcexportdata.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("reading export data for %s: %v", path, err)
	}
	p, err := gcexportdata.Read(r, l.fset, l.std, path)
	if err != nil {
		return nil, fmt.Errorf("reading export data for %s: %v", path, err)
	}
	return p, nil
}

// check parses and type-checks p (its imports are checked already), as
// go/packages' loadPackage does, and records the errors as it does: in
// p.Errors, and the type checker's also in p.TypeErrors.
func (l *typeLoader) check(p *packages.Package, root bool) {
	l.mu.Lock()
	prev := l.checked[p.ID]
	l.mu.Unlock()
	if prev != nil && !root {
		// The dependencies' load checked it: the main module's graph
		// imports it.
		p.Types, p.TypesInfo, p.Syntax, p.Fset, p.TypesSizes = prev.Types, prev.TypesInfo, prev.Syntax, prev.Fset, prev.TypesSizes
		p.Errors, p.TypeErrors, p.IllTyped = prev.Errors, prev.TypeErrors, prev.IllTyped
		return
	}
	appendError := func(err error) {
		switch err := err.(type) {
		case *os.PathError:
			p.Errors = append(p.Errors, packages.Error{Pos: err.Path + ":1", Msg: err.Err.Error(), Kind: packages.ParseError})
		case scanner.ErrorList:
			for _, e := range err {
				p.Errors = append(p.Errors, packages.Error{Pos: e.Pos.String(), Msg: e.Msg, Kind: packages.ParseError})
			}
		case types.Error:
			p.TypeErrors = append(p.TypeErrors, err)
			p.Errors = append(p.Errors, packages.Error{Pos: err.Fset.Position(err.Pos).String(), Msg: err.Msg, Kind: packages.TypeError})
		default:
			p.Errors = append(p.Errors, packages.Error{Pos: "-", Msg: err.Error(), Kind: packages.UnknownError})
		}
	}
	l.cpu <- struct{}{}
	defer func() { <-l.cpu }()
	p.Fset = l.fset
	for _, name := range p.CompiledGoFiles {
		src, ok := l.cfg.raceSrc[name]
		if !ok {
			var err error
			if src, err = os.ReadFile(name); err != nil {
				appendError(err)
				continue
			}
		}
		f, err := parser.ParseFile(l.fset, name, src, parser.AllErrors|parser.ParseComments)
		if f != nil {
			p.Syntax = append(p.Syntax, f)
		}
		if err != nil {
			appendError(err)
		}
	}
	p.Types = types.NewPackage(p.PkgPath, p.Name)
	p.TypesSizes = l.sizes
	if root {
		p.TypesInfo = newTypesInfo()
	}
	tc := &types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if path == "unsafe" {
				return types.Unsafe, nil
			}
			ip := p.Imports[path]
			switch {
			case ip == nil:
				return nil, fmt.Errorf("no metadata for %s", path)
			case isStdPkg(ip):
				return l.importStd(ip.PkgPath)
			case ip.Types != nil && ip.Types.Complete():
				return ip.Types, nil
			}
			return nil, fmt.Errorf("%s: not type-checked", path)
		}),
		IgnoreFuncBodies: !root,
		Error:            appendError,
		Sizes:            l.sizes,
	}
	if p.Module != nil && p.Module.GoVersion != "" {
		tc.GoVersion = "go" + p.Module.GoVersion
	}
	errsBefore := len(p.Errors)
	if err := types.NewChecker(tc, l.fset, p.Types, p.TypesInfo).Files(p.Syntax); err != nil && len(p.Errors) == errsBefore {
		appendError(err)
	}
	ill := len(p.Errors) > 0
	for _, ip := range p.Imports {
		ill = ill || ip.IllTyped
	}
	p.IllTyped = ill
	if root {
		l.mu.Lock()
		l.checked[p.ID] = p
		l.mu.Unlock()
	}
}

// newTypesInfo is a types.Info that records everything the rewriter asks
// of a package's files.
func newTypesInfo() *types.Info {
	return &types.Info{
		Types:        map[ast.Expr]types.TypeAndValue{},
		Defs:         map[*ast.Ident]types.Object{},
		Uses:         map[*ast.Ident]types.Object{},
		Implicits:    map[ast.Node]types.Object{},
		Instances:    map[*ast.Ident]types.Instance{},
		Scopes:       map[ast.Node]*types.Scope{},
		Selections:   map[*ast.SelectorExpr]*types.Selection{},
		FileVersions: map[*ast.File]string{},
	}
}
