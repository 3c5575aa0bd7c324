package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestQuietRuntime runs testdata/src/quiet's tests one by one under go test
// -race and instrumented (issue 33): once a program's goroutines are done,
// racekit's runtime has no goroutine of its own alive, so
// runtime.NumGoroutine counts what it counts under -race (TestGoroutinesBack
// prints both counts, which must be -race's) and runtime.Stack(all) holds no
// frame of racekit.dev/rt (TestStackNoRuntime); and what the program
// records after such a quiet spell still reaches the trace
// (TestRaceAfterQuiet: its marked race, under both).
func TestQuietRuntime(t *testing.T) {
	src, _ := filepath.Abs("testdata/src")
	_, prep := buildAll(t)
	pkgDir := filepath.Join(src, "quiet")
	tests := stdTests(t, pkgDir)
	if len(tests) != 4 {
		t.Fatalf("%d tests in quiet, want 4", len(tests))
	}
	rkBin, raceBin := buildBoth(t, src, "quiet", prep)
	counts := regexp.MustCompile(`goroutines: start \d+, end \d+`)
	for _, tc := range tests {
		run := "-test.run=^" + tc.name + "$"
		cmd := exec.Command(raceBin, run, "-test.count=1")
		cmd.Dir = pkgDir
		raceOut, raceErr := cmd.CombinedOutput()
		racePairs := uniq(racePairsIn(raceOut, "quiet"))

		tr := filepath.Join(t.TempDir(), "trace.rkt")
		cmd = exec.Command(rkBin, run, "-test.count=1")
		cmd.Dir = pkgDir
		cmd.Env = append(os.Environ(), "RACEKIT_TRACE="+tr)
		rkOut, rkErr := cmd.CombinedOutput()
		res, err := analyze(tr)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(res.warnings) > 0 {
			t.Errorf("%s: trace warnings: %v", tc.name, res.warnings)
		}
		want := strings.Join(tc.want, "\n")
		if got := strings.Join(racePairs, "\n"); got != want {
			t.Errorf("%s: go test -race: racing line pairs %q, want %q\n%s", tc.name, racePairs, tc.want, raceOut)
		}
		if got := strings.Join(res.hbPairs, "\n"); got != want {
			t.Errorf("%s: racekit: racing line pairs %q, want %q\n%s", tc.name, res.hbPairs, tc.want, rkOut)
		}
		if len(tc.want) > 0 {
			continue // a race fails the -race run
		}
		if raceErr != nil {
			t.Errorf("%s: go test -race: %v\n%s", tc.name, raceErr, raceOut)
		}
		if rkErr != nil {
			t.Errorf("%s (instrumented): %v\n%s", tc.name, rkErr, rkOut)
		}
		if rc, kc := counts.Find(raceOut), counts.Find(rkOut); string(rc) != string(kc) {
			t.Errorf("%s: -race printed %q, racekit %q\n%s", tc.name, rc, kc, rkOut)
		}
	}
}
