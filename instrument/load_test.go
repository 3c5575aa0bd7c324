package instrument

import (
	"fmt"
	"go/ast"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/go/packages"
)

// TestTypeLoaderMatchesGoPackages: the type loader (load.go), which
// checks every package outside std from source and reads only std's
// export data, gives the roots the types go/packages gives them with go
// list -export. Loaded as loadPackages loads them: dependencies without
// their tests first, then the main module's packages with theirs, which
// import the dependencies the first load checked.
func TestTypeLoaderMatchesGoPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("loads and type-checks racekit's packages and some of its dependencies twice")
	}
	deps := []string{"golang.org/x/tools/go/ast/inspector", "golang.org/x/sync/errgroup", "golang.org/x/mod/semver", "golang.org/x/tools/go/cfg"}
	mains := []string{"github.com/racekit/racekit/trace", "github.com/racekit/racekit/trace/...", "github.com/racekit/racekit/static", "github.com/racekit/racekit/detect/hb"}
	l := newTypeLoader(&Config{})
	gotDeps, err := l.load(false, deps)
	if err != nil {
		t.Fatal(err)
	}
	gotMains, err := l.load(true, mains)
	if err != nil {
		t.Fatal(err)
	}
	got := append(gotDeps, gotMains...)
	want := goPackagesLoad(t, false, deps)
	want = append(want, goPackagesLoad(t, true, mains)...)

	byID := map[string]*packages.Package{}
	for _, p := range want {
		byID[p.ID] = p
	}
	if len(got) != len(want) {
		t.Errorf("%d roots, go/packages %d", len(got), len(want))
	}
	withTests := 0
	for _, p := range got {
		w := byID[p.ID]
		if w == nil {
			t.Errorf("%s: not a root of go/packages' load", p.ID)
			continue
		}
		if strings.Contains(p.ID, ".test]") {
			withTests++
		}
		if len(p.Errors) > 0 || len(w.Errors) > 0 {
			t.Errorf("%s: errors %v, go/packages' %v", p.ID, p.Errors, w.Errors)
			continue
		}
		g, wd := typesDigest(p), typesDigest(w)
		if len(g) == 0 {
			t.Errorf("%s: no type information", p.ID)
		}
		if strings.Join(g, "\n") != strings.Join(wd, "\n") {
			t.Errorf("%s: the type information differs from go/packages':\n%s", p.ID, firstDiff(g, wd))
		}
	}
	if withTests == 0 {
		t.Error("no test variant among the roots")
	}
}

func goPackagesLoad(t *testing.T, tests bool, patterns []string) []*packages.Package {
	t.Helper()
	pkgs, err := packages.Load(&packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedSyntax |
			packages.NeedTypes | packages.NeedTypesInfo | packages.NeedModule,
		Tests: tests,
	}, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// typesDigest is every expression's and every identifier's type and
// object in p, by position, sorted.
func typesDigest(p *packages.Package) []string {
	var out []string
	pos := func(n ast.Node) string { return p.Fset.Position(n.Pos()).String() }
	for e, tv := range p.TypesInfo.Types {
		v := ""
		if tv.Value != nil {
			v = " = " + tv.Value.ExactString()
		}
		out = append(out, fmt.Sprintf("type %s-%d %s%s", pos(e), p.Fset.Position(e.End()).Offset, tv.Type, v))
	}
	for id, obj := range p.TypesInfo.Defs {
		if obj != nil {
			out = append(out, fmt.Sprintf("def %s %s", pos(id), obj))
		}
	}
	for id, obj := range p.TypesInfo.Uses {
		out = append(out, fmt.Sprintf("use %s %s", pos(id), obj))
	}
	for sel, s := range p.TypesInfo.Selections {
		out = append(out, fmt.Sprintf("sel %s %s", pos(sel), s))
	}
	for id, inst := range p.TypesInfo.Instances {
		out = append(out, fmt.Sprintf("inst %s %s", pos(id), inst.Type))
	}
	for n, obj := range p.TypesInfo.Implicits {
		out = append(out, fmt.Sprintf("implicit %s %s", pos(n), obj))
	}
	for f, v := range p.TypesInfo.FileVersions {
		out = append(out, fmt.Sprintf("version %s %s", p.Fset.Position(f.Pos()).Filename, v))
	}
	out = append(out, fmt.Sprintf("scope %s", strings.Join(p.Types.Scope().Names(), " ")))
	sort.Strings(out)
	return out
}

func firstDiff(a, b []string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return fmt.Sprintf("  loader:      %s\n  go/packages: %s", a[i], b[i])
		}
	}
	return fmt.Sprintf("  %d entries, go/packages %d", len(a), len(b))
}

// TestTypeLoaderErrors: a package that does not type-check has its
// errors, as go/packages gives them (TypeErrors and a TypeError in
// Errors); a package importing it is ill-typed.
func TestTypeLoaderErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.22\n",
		"a/a.go":      "package a\n\nfunc F() int { return \"s\" }\n",
		"b/b.go":      "package b\n\nimport \"example.com/m/a\"\n\nvar X = a.F()\n",
		"c/c.go":      "package c\n\nimport \"strings\"\n\nvar Y = strings.ToUpper(\"c\")\n",
		"c/c_test.go": "package c\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) { _ = Y }\n",
	})
	l := newTypeLoader(&Config{Dir: dir})
	pkgs, err := l.load(true, []string{"./..."})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]*packages.Package{}
	for _, p := range pkgs {
		seen[p.ID] = p
	}
	a, b, c := seen["example.com/m/a"], seen["example.com/m/b"], seen["example.com/m/c [example.com/m/c.test]"]
	if a == nil || b == nil || c == nil {
		t.Fatalf("roots %v", keys(seen))
	}
	if len(a.TypeErrors) != 1 || len(a.Errors) != 1 || a.Errors[0].Kind != packages.TypeError || !a.IllTyped {
		t.Errorf("a: TypeErrors %v, Errors %v, IllTyped %v: want the one type error", a.TypeErrors, a.Errors, a.IllTyped)
	}
	if len(b.Errors) != 0 || !b.IllTyped {
		t.Errorf("b: Errors %v, IllTyped %v: want none of its own, ill-typed through a", b.Errors, b.IllTyped)
	}
	if len(c.Errors) != 0 || c.IllTyped || c.TypesInfo == nil || c.Types.Scope().Lookup("TestC") == nil {
		t.Errorf("c's test variant: Errors %v, IllTyped %v: want it checked with its test", c.Errors, c.IllTyped)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// writeFiles writes files (name → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTypeLoaderImportCycle: packages that import each other (go list's
// "import cycle not allowed") are reported, and their checks, each waiting
// for its imports', end: go/packages leaves the import closing the cycle
// out of the graph.
func TestTypeLoaderImportCycle(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a/a.go": "package a\n\nimport \"example.com/m/b\"\n\nvar A = b.B\n",
		"b/b.go": "package b\n\nimport \"example.com/m/a\"\n\nvar B = 1\n\nvar _ = a.A\n",
	})
	type result struct {
		pkgs []*packages.Package
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		pkgs, err := newTypeLoader(&Config{Dir: dir}).load(false, []string{"./..."})
		ch <- result{pkgs, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		errs := 0
		for _, p := range r.pkgs {
			errs += len(p.Errors)
			if !p.IllTyped {
				t.Errorf("%s: not ill-typed", p.ID)
			}
		}
		if errs == 0 {
			t.Error("no error for the cycle")
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the loader waits forever on an import cycle")
	}
}
