package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTestVet: go test vets a package before it runs its tests, on the
// package's own files; testdata/src/vetfail fails that check (its
// example names an identifier the package lacks), and racekit test fails
// it the same way: the vet message, the package's "[build failed]" line,
// exit status 1; with -json the same build-output events and the
// package's FailedBuild; -vet=off and -vet=atomic let it pass under both.
func TestTestVet(t *testing.T) {
	const msg = "vetfail/example_test.go:12:1: ExampleRetryContext refers to unknown identifier: RetryContext\n"
	const failed = "FAIL\tracekit.test/e2e/vetfail [build failed]\n"
	goCode, goOut := goTestRace(t, "./vetfail")
	rkCode, rkOut := runRacekit(t, "test", "./vetfail")
	for _, side := range []struct {
		name string
		code int
		out  string
	}{{"go test -race", goCode, goOut}, {"racekit test", rkCode, rkOut}} {
		if side.code != 1 || !strings.Contains(side.out, msg) || !strings.Contains(side.out, failed) {
			t.Errorf("%s: exit status %d, want 1 with %q and %q:\n%s", side.name, side.code, msg, failed, side.out)
		}
	}

	for _, vet := range []string{"-vet=off", "-vet=atomic"} {
		goCode, goOut := goTestRace(t, vet, "./vetfail")
		rkCode, rkOut := runRacekit(t, "test", vet, "./vetfail")
		if goCode != 0 || rkCode != 0 {
			t.Errorf("%s: go test -race exit status %d, racekit test %d, want 0 and 0\n%s\n%s", vet, goCode, rkCode, goOut, rkOut)
		}
	}

	events := func(out string) []string {
		var evs []string
		for _, line := range strings.Split(out, "\n") {
			if !strings.HasPrefix(line, "{") {
				continue
			}
			var e struct{ ImportPath, Package, Action, Output, FailedBuild string }
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			evs = append(evs, strings.Join([]string{e.ImportPath, e.Package, e.Action, e.Output, e.FailedBuild}, "|"))
		}
		return evs
	}
	goCode, goOut = goTestRace(t, "-json", "./vetfail")
	rkCode, rkOut = runRacekit(t, "test", "-json", "./vetfail")
	if g, r := strings.Join(events(goOut), "\n"), strings.Join(events(rkOut), "\n"); g != r || goCode != rkCode {
		t.Errorf("-json: racekit test's events (exit status %d)\n%s\ndiffer from go test -race's (exit status %d)\n%s", rkCode, r, goCode, g)
	}
}
