package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestChanMessages runs testdata/src/chanmsg's tests one by one under go
// test -race and instrumented, and compares the racing line pairs: the
// channel programs whose races only the Go memory model's per-message
// edges expose (two producers, a semaphore of capacity 2, a message
// received before a close), and those the edges order (a semaphore of
// capacity 1 by the k+C rule, close then receive, range, select,
// unbuffered receive before the send completes).
func TestChanMessages(t *testing.T) {
	src, _ := filepath.Abs("testdata/src")
	_, prep := buildAll(t)
	pkgDir := filepath.Join(src, "chanmsg")
	tests := stdTests(t, pkgDir)

	rkBin, raceBin := buildBoth(t, src, "chanmsg", prep)
	var table strings.Builder
	for _, tc := range tests {
		run := "-test.run=^" + tc.name + "$"
		cmd := exec.Command(raceBin, run, "-test.count=1")
		cmd.Dir = pkgDir
		raceOut, _ := cmd.CombinedOutput()
		racePairs := uniq(racePairsIn(raceOut, "chanmsg"))

		tr := filepath.Join(t.TempDir(), "trace.rkt")
		cmd = exec.Command(rkBin, run, "-test.count=1")
		cmd.Dir = pkgDir
		cmd.Env = append(os.Environ(), "RACEKIT_TRACE="+tr)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s (instrumented): %v\n%s", tc.name, err, out)
			continue
		}
		res, err := analyze(tr)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		rk := res.hbPairs
		fmt.Fprintf(&table, "%-36s -race %d  racekit %d\n", tc.name, len(racePairs), len(rk))
		want := strings.Join(tc.want, "\n")
		if strings.HasPrefix(tc.name, "TestNoRace") {
			if len(racePairs) > 0 || bytes.Contains(raceOut, []byte("DATA RACE")) {
				t.Errorf("%s: go test -race reports a race:\n%s", tc.name, raceOut)
			}
			if len(rk) > 0 {
				t.Errorf("%s: racekit reports %q", tc.name, rk)
			}
			continue
		}
		if strings.Join(racePairs, "\n") != want {
			t.Errorf("%s: go test -race: racing line pairs %q, want %q\n%s", tc.name, racePairs, tc.want, raceOut)
		}
		if strings.Join(rk, "\n") != want {
			t.Errorf("%s: racekit: racing line pairs %q, want %q", tc.name, rk, tc.want)
		}
	}
	t.Logf("per test (distinct racing line pairs):\n%s", table.String())
}
