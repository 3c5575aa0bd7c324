package e2e

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestNoRaceHeapChurn: testdata/src/heapchurn is race-free, but its
// workers' private slices, grown by append, reuse the memory of each
// other's dead ones. Before append's new arrays were recorded as
// allocations every run reported three false races there; three runs
// must report none.
func TestNoRaceHeapChurn(t *testing.T) {
	noRaceRuns(t, "./heapchurn", 3)
}

// TestNoRaceDeclChurn: testdata/src/declchurn is race-free, but its
// workers' captured parameters, per-iteration loop variables and channels
// reuse the memory of each other's dead ones. Before their creation was
// recorded (parameters and loop variables at the top of their function or
// iteration, channels at make) every run reported false races there (3
// to 6 distinct); three runs must report none.
func TestNoRaceDeclChurn(t *testing.T) {
	noRaceRuns(t, "./declchurn", 3)
}

// TestNoRaceStdChurn: testdata/src/stdchurn is race-free, but its
// workers' requests, split strings and query maps, allocated by the
// standard library, reuse the memory of each other's dead ones. Before the
// allocations of fresh std results were recorded (instrument/freshcalls.go)
// every run reported three false races there; three runs must report none.
func TestNoRaceStdChurn(t *testing.T) {
	noRaceRuns(t, "./stdchurn", 3)
}

// TestNoRaceUntracedChurn: testdata/src/untracedchurn is race-free, but
// its workers write into arrays and maps that encoding/json, strconv, fmt
// and encoding/hex allocate where rt has no hook, at the addresses of each
// other's dead ones. With the runtime's allocation hook off
// (RACEKIT_ALLOC_HOOK=0) two runs reported 5 and 2 false races; with it,
// three runs must report none.
func TestNoRaceUntracedChurn(t *testing.T) {
	noRaceRuns(t, "./untracedchurn", 3)
}

// TestNoRaceGCChurn: testdata/src/gcchurn is race-free, but its workers'
// arrays, allocated in untraced std code, reuse the memory of each other's
// dead ones while a goroutine runs the GC back to back, and each worker
// computes without an event between the allocation and its write. When
// rt dropped such an allocation once a GC cycle's marking had ended before
// it was written, about half the runs reported a false race
// (bench/results/memreuse.md). Five runs must report none.
func TestNoRaceGCChurn(t *testing.T) {
	noRaceRuns(t, "./gcchurn", 5)
}

// TestRaceGCReusedAddress: testdata/src/gcreuse races on an object the GC
// put at the address of a dead one that its reader read earlier in the same
// dedup epoch, with only atomic loads (acquires) between. go run -race
// reports the read and the write after it; racekit dropped the second read
// as a repeat of the first (3 of 3 runs reported nothing) until the patched
// runtime moved dedup's generation at the first allocation after each GC
// cycle (rt/dedup.go). Three runs must report -race's pair.
func TestRaceGCReusedAddress(t *testing.T) {
	cmd := exec.Command("go", "run", "-race", "./gcreuse")
	cmd.Dir = "testdata/src"
	raceOut, _ := cmd.CombinedOutput()
	if strings.Contains(string(raceOut), "no reuse") {
		t.Skip("the allocator did not give the dead object's address back")
	}
	want := uniq(racePairsIn(raceOut, "gcreuse"))
	if len(want) != 1 {
		t.Fatalf("go run -race: pairs %q, want one\n%s", want, raceOut)
	}
	for i := 0; i < 3; i++ {
		code, out := runRacekit(t, "run", "./gcreuse")
		if strings.Contains(out, "no reuse") {
			t.Skip("the allocator did not give the dead object's address back")
		}
		if got := uniq(racePairsIn([]byte(out), "gcreuse")); code == 0 || !slices.Equal(got, want) {
			t.Fatalf("run %d: exit %d, pairs %q, want -race's %q\n%s", i+1, code, got, want, out)
		}
	}
}

// noRaceRuns runs racekit run on dir n times, or RACEKIT_CHURN_RUNS times
// where that is set (issue 28 asks for 100: bench/results/memreuse.md):
// each must exit 0 with no race.
func noRaceRuns(t *testing.T, dir string, n int) {
	t.Helper()
	if s := os.Getenv("RACEKIT_CHURN_RUNS"); s != "" {
		k, err := strconv.Atoi(s)
		if err != nil || k < 1 {
			t.Fatalf("RACEKIT_CHURN_RUNS=%q: want a positive number", s)
		}
		n = k
	}
	for i := 0; i < n; i++ {
		code, out := runRacekit(t, "run", dir)
		if code != 0 || strings.Contains(out, "DATA RACE") {
			t.Fatalf("run %d: exit %d, want 0 and no race\n%s", i+1, code, out)
		}
	}
}
