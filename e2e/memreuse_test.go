package e2e

import (
	"strings"
	"testing"
)

// TestNoRaceHeapChurn: testdata/src/heapchurn is race-free, but its
// workers' private slices, grown by append, reuse the memory of each
// other's dead ones. Before append's new arrays were recorded as
// allocations every run reported three false races there; three runs
// must report none.
func TestNoRaceHeapChurn(t *testing.T) {
	for i := 0; i < 3; i++ {
		code, out := runRacekit(t, "run", "./heapchurn")
		if code != 0 || strings.Contains(out, "DATA RACE") {
			t.Fatalf("run %d: exit %d, want 0 and no race\n%s", i+1, code, out)
		}
	}
}

// TestNoRaceDeclChurn: testdata/src/declchurn is race-free, but its
// workers' captured parameters, per-iteration loop variables and channels
// reuse the memory of each other's dead ones. Before their creation was
// recorded (parameters and loop variables at the top of their function or
// iteration, channels at make) every run reported false races there (3
// to 6 distinct); three runs must report none.
func TestNoRaceDeclChurn(t *testing.T) {
	for i := 0; i < 3; i++ {
		code, out := runRacekit(t, "run", "./declchurn")
		if code != 0 || strings.Contains(out, "DATA RACE") {
			t.Fatalf("run %d: exit %d, want 0 and no race\n%s", i+1, code, out)
		}
	}
}
