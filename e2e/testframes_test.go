package e2e

import (
	"strings"
	"testing"
)

// TestTestCheckpoints: testdata/src/racyexample has examples, so racekit
// adds no TestMain to its tests and the trace is checkpointed at the end
// of each test and example, the last example's included: the race of a
// test and the race of the example that runs last are both reported, and
// the trace reads as finished (no warning).
func TestTestCheckpoints(t *testing.T) {
	code, out := runRacekit(t, "test", "./racyexample")
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	for _, want := range []string{"--- FAIL: TestRacy (racekit: 1 data race)\n", "--- FAIL: ExampleSum (racekit: 1 data race)\n", "(racekit: 2 data race(s))"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "warning") {
		t.Errorf("a warning:\n%s", out)
	}
	for _, m := range marked(t, "racyexample") { // racyexample/racyexample.go:15
		if !strings.Contains(out, m[len("racyexample/"):]+":") {
			t.Errorf("no report at %s:\n%s", m, out)
		}
	}
}
