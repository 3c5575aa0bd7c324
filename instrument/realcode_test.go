package instrument

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// Every file of real packages (racekit's own: detectors, trace codecs,
// the static analysis, the command, their tests; and the golang.org/x
// packages racekit uses) instruments to code that type-checks against the
// real runtime, package by package. The goldens cover each construct
// once; this covers the combinations real code has: a hook emitted on a
// path no golden takes fails here as it would fail go build.
func TestRewriteRealPackagesTypeCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("loads and type-checks racekit's packages and its dependencies")
	}
	own := typeCheckInstrumented(t, true, "github.com/racekit/racekit/trace/...", "github.com/racekit/racekit/detect/...",
		"github.com/racekit/racekit/filter/...", "github.com/racekit/racekit/sched", "github.com/racekit/racekit/static/...",
		"github.com/racekit/racekit/cmd/racekit")
	deps := typeCheckInstrumented(t, false, "golang.org/x/tools/go/ssa", "golang.org/x/tools/go/packages",
		"golang.org/x/tools/go/analysis/...", "golang.org/x/tools/go/cfg", "golang.org/x/tools/go/ast/...",
		"golang.org/x/tools/go/types/...", "golang.org/x/tools/internal/gcimporter", "golang.org/x/sync/errgroup",
		"golang.org/x/mod/semver")
	if own < 100 || deps < 100 {
		t.Errorf("instrumented %d files of racekit and %d of its dependencies, want hundreds", own, deps)
	}
	t.Logf("type-checked instrumented: %d files of racekit's, %d of its dependencies", own, deps)
}

// typeCheckInstrumented loads the packages (with their tests if tests),
// instruments each file and type-checks each package's instrumented files
// together, and returns how many files it instrumented.
func typeCheckInstrumented(t *testing.T, tests bool, patterns ...string) int {
	t.Helper()
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedSyntax |
			packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports | packages.NeedDeps,
		Tests: tests,
	}
	// rt in the same load: one universe of standard packages for the
	// packages and the runtime their instrumented code calls.
	pkgs, err := packages.Load(cfg, append(patterns, "github.com/racekit/racekit/rt", "github.com/racekit/racekit/rt/rttest")...)
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("packages do not load")
	}
	rts := map[string]*types.Package{}
	for _, p := range pkgs {
		if p.ID == p.PkgPath && (p.PkgPath == "github.com/racekit/racekit/rt" || p.PkgPath == "github.com/racekit/racekit/rt/rttest") {
			rts[RTModule+strings.TrimPrefix(p.PkgPath, "github.com/racekit/racekit")] = p.Types
		}
	}
	if len(rts) != 2 {
		t.Fatalf("runtime packages %v", rts)
	}
	files := 0
	for _, p := range pkgs {
		if strings.HasSuffix(p.ID, ".test") || len(p.Syntax) == 0 || strings.HasPrefix(p.PkgPath, "github.com/racekit/racekit/rt") {
			continue // the generated test main; the runtime itself
		}
		fset := token.NewFileSet()
		var out []*ast.File
		for i, f := range p.Syntax {
			path := p.CompiledGoFiles[i]
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			res, err := File(FileInput{Fset: p.Fset, File: f, Src: src, Info: p.TypesInfo, Pkg: p.Types, Path: path, IsTest: strings.HasSuffix(path, "_test.go")})
			if err != nil {
				t.Errorf("%s: %v", path, err)
				continue
			}
			nf, err := parser.ParseFile(fset, path, res.Src, parser.SkipObjectResolution)
			if err != nil {
				t.Errorf("%s: instrumented file does not parse: %v", path, err)
				continue
			}
			out = append(out, nf)
			files++
		}
		conf := types.Config{Importer: pkgImporter{p, rts}, GoVersion: "go1.26", Error: func(err error) {
			t.Errorf("%s: instrumented: %v", p.ID, err)
		}}
		conf.Check(p.PkgPath, fset, out, nil)
	}
	return files
}

// pkgImporter resolves a package's imports to what it was checked
// against, and the runtime copy's paths to racekit's rt and rttest.
type pkgImporter struct {
	p   *packages.Package
	rts map[string]*types.Package
}

func (i pkgImporter) Import(path string) (*types.Package, error) {
	if q, ok := i.p.Imports[path]; ok {
		return q.Types, nil
	}
	if q, ok := i.rts[path]; ok {
		return q, nil
	}
	return nil, fmt.Errorf("%s: import %q not loaded", i.p.ID, path)
}
