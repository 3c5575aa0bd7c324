package instrument

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"
)

var (
	rtOnce  sync.Once
	rtPkgs  map[string]*types.Package
	rtErr   error
	stdImps = importer.Default()
)

// rtImporter resolves the runtime copy's import paths to racekit's own rt
// and rttest packages, and everything else to the standard library.
type rtImporter struct{}

func (rtImporter) Import(path string) (*types.Package, error) {
	rtOnce.Do(func() {
		cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedImports | packages.NeedDeps}
		// net/http in the same load: its context is rt's (freshstd.go).
		ps, err := packages.Load(cfg, "github.com/racekit/racekit/rt", "github.com/racekit/racekit/rt/rttest", "net/http")
		if err != nil {
			rtErr = err
			return
		}
		// One universe: the standard packages are the ones rt was
		// checked against.
		rtPkgs = map[string]*types.Package{}
		var walk func(p *types.Package)
		walk = func(p *types.Package) {
			if _, ok := rtPkgs[p.Path()]; ok {
				return
			}
			rtPkgs[p.Path()] = p
			for _, q := range p.Imports() {
				walk(q)
			}
		}
		for _, p := range ps {
			walk(p.Types)
			if rest, ok := strings.CutPrefix(p.PkgPath, "github.com/racekit/racekit"); ok {
				rtPkgs[RTModule+rest] = p.Types
			}
		}
	})
	if rtErr != nil {
		return nil, rtErr
	}
	if p, ok := rtPkgs[path]; ok {
		return p, nil
	}
	p, err := stdImps.Import(path)
	if err == nil {
		rtPkgs[path] = p
	}
	return p, err
}

// check parses and type-checks one file as package p (or p_test for a
// _test.go name).
func check(t *testing.T, name, src string) (*token.FileSet, *ast.File, *types.Info, *types.Package) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v\n%s", name, err, src)
	}
	info := &types.Info{
		Types:        map[ast.Expr]types.TypeAndValue{},
		Defs:         map[*ast.Ident]types.Object{},
		Uses:         map[*ast.Ident]types.Object{},
		Selections:   map[*ast.SelectorExpr]*types.Selection{},
		Instances:    map[*ast.Ident]types.Instance{},
		Implicits:    map[ast.Node]types.Object{},
		Scopes:       map[ast.Node]*types.Scope{},
		FileVersions: map[*ast.File]string{},
	}
	conf := types.Config{Importer: rtImporter{}, GoVersion: "go1.26"}
	cgo := strings.Contains(src, "import \"C\"")
	if cgo {
		// As checkCgo does: package C is a fake one, and the errors its
		// names cause are expected.
		conf.FakeImportC, conf.Error = true, func(error) {}
	}
	pkg, err := conf.Check("example.com/"+f.Name.Name, fset, []*ast.File{f}, info)
	if err != nil && !cgo {
		t.Fatalf("type-check %s: %v\n%s", name, err, src)
	}
	return fset, f, info, pkg
}

// rewrite instruments src (a whole file) and checks that the result
// type-checks.
func rewrite(t *testing.T, name, src string) string {
	t.Helper()
	fset, f, info, pkg := check(t, name, src)
	res, err := File(FileInput{Fset: fset, File: f, Src: []byte(src), Info: info, Pkg: pkg, Path: "/src/" + name, IsTest: len(name) > 8 && name[len(name)-8:] == "_test.go"})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Src)
	check(t, name, out)
	return out
}
