package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racekit/racekit/instrument"
)

// TestOwnPackages is behaviour preservation on real code: racekit's own
// small packages, instrumented, pass their tests exactly as they do
// uninstrumented, and their traces show no race.
func TestOwnPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("instruments and tests racekit's own packages")
	}
	root, _ := filepath.Abs("..")
	pkgs := []string{"./detect/vc", "./finding", "./report"}
	prep, err := instrument.Prepare(instrument.Config{Dir: root, Patterns: pkgs, Tests: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(prep.Instrumented) < len(pkgs) {
		t.Fatalf("instrumented %v, want at least %v", prep.Instrumented, pkgs)
	}
	dir := t.TempDir()
	args := append([]string{"test", "-count=1"}, prep.BuildArgs()...)
	cmd := exec.Command("go", append(args, pkgs...)...)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), prep.Env...), "RACEKIT_TRACE_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("instrumented tests failed: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "ok  \t"); n != len(pkgs) {
		t.Errorf("%d packages passed, want %d\n%s", n, len(pkgs), out)
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "*.rkt"))
	if len(traces) != len(pkgs) {
		t.Fatalf("got traces %v", traces)
	}
	for _, tr := range traces {
		res, err := analyze(tr)
		if err != nil {
			t.Fatal(err)
		}
		if res.events == 0 || len(res.hbPairs) > 0 || len(res.warnings) > 0 {
			t.Errorf("%s: %d events, races %q, warnings %v", filepath.Base(tr), res.events, res.hbPairs, res.warnings)
		}
	}
}
