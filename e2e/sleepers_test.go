package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racekit/racekit/sched"
)

// TestFuzzSleepers: issue 33's report, a test whose hundred goroutines
// each sleep a millisecond, ran into its 60s timeout under racekit fuzz.
// Under control (testdata/src/sleepers, after a test that departed) each
// sleep is a point and its timer's firing a step of the schedule: the
// clock jumps to the next deadline when everyone sleeps, nobody leaves
// control, and every run ends with nothing to report, as the plain run.
func TestFuzzSleepers(t *testing.T) {
	var racy []string
	data, err := os.ReadFile("testdata/src/sleepers/sleepers_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasSuffix(line, "// RACY") {
			racy = append(racy, fmt.Sprintf("sleepers/sleepers_test.go:%d", i+1))
		}
	}
	if len(racy) != 2 {
		t.Fatalf("%d statements marked RACY, want 2", len(racy))
	}
	const runs = 3
	keep := t.TempDir()
	ps := fuzz(t, "./sleepers", []string{racy[0] + "~" + racy[1]}, runs, keep)
	if len(ps) != 1 || !ps[0].Real || ps[0].Escapes != 0 || len(ps[0].Outcomes) != 1 || ps[0].Outcomes[0].Outcome != "none" {
		t.Fatalf("result %+v: want the race created, no escape, every run without failure", ps)
	}
	for seed := 1; seed <= runs; seed++ {
		path := filepath.Join(keep, fmt.Sprintf("1-%d.sched", seed))
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := sched.ReadSchedule(f, path)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		sleeps, timers := 0, 0
		for _, st := range s.Steps {
			if st.Kind == sched.KindSleep {
				sleeps++
			}
			if st.G == sched.TimerG {
				timers++
			}
		}
		if sleeps != 200 || timers != 200 {
			t.Errorf("seed %d: %d sleep points and %d timer steps, want 200 each (two tests of 100 sleepers)", seed, sleeps, timers)
		}
	}
}
