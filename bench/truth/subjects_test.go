package truth

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const subjectsRoot = "../subjects"

// Every subject's markers parse and pair up (Load rejects an id with one
// line that is not marked self), and every subject has what the harness
// and docs/subjects.md promise: an exported Run, a test driver, and, when
// it races, a guard that skips the racy tests under -race.
func TestSubjectsGroundTruth(t *testing.T) {
	subjects, err := LoadAll(subjectsRoot)
	if err != nil {
		t.Fatal(err)
	}
	if len(subjects) < 30 {
		t.Fatalf("%d subjects, want at least 30", len(subjects))
	}
	ids := 0
	for _, s := range subjects {
		ids += len(s.Races) + len(s.NoRaces)
		hasRun, hasTest, guarded := false, false, false
		fset := token.NewFileSet()
		for _, name := range s.Files {
			f, err := parser.ParseFile(fset, filepath.Join(s.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				if strings.HasSuffix(imp.Path.Value, `/bench/subjects/internal/racy"`) {
					guarded = true
				}
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv != nil {
					continue
				}
				if fn.Name.Name == "Run" && !strings.HasSuffix(name, "_test.go") {
					hasRun = true
				}
				if strings.HasPrefix(fn.Name.Name, "Test") && strings.HasSuffix(name, "_test.go") {
					hasTest = true
				}
			}
		}
		if !hasRun || !hasTest {
			t.Errorf("%s: exported Run %v, Test function %v; want both", s.Name, hasRun, hasTest)
		}
		if len(s.Entries(KindRace)) > 0 && !guarded {
			t.Errorf("%s has races but its tests do not use internal/racy to skip under -race", s.Name)
		}
		for _, e := range s.Races {
			if len(e.Lines) == 1 && len(e.Self) == 0 {
				t.Errorf("%s: id %s has one line", s.Name, e.ID)
			}
		}
	}
	if ids < 150 {
		t.Errorf("only %d ids in all subjects", ids)
	}
}

// Every subject package (and its tests) compiles: go vet type-checks them
// all. Skipped in -short mode (it runs the go command).
func TestSubjectsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet over bench/subjects")
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = subjectsRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet ./bench/subjects/...: %v\n%s", err, out)
	}
}
