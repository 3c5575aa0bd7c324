package mergesort

import (
	"sort"
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// With no extra goroutines the sort is sequential and correct.
func TestSequential(t *testing.T) {
	r := Run(Config{Size: 100, MaxThreads: 0, Seed: 7})
	if !sort.IntsAreSorted(r.Sorted) || len(r.Sorted) != 100 || r.Started != 0 {
		t.Fatalf("got %v (started %d)", r.Sorted, r.Started)
	}
	for i, v := range r.Sorted {
		if v != i {
			t.Fatalf("element %d is %d: not a permutation of 0..99", i, v)
		}
	}
}

// Concurrent merges share scratch cells: the output may be wrong, but it
// keeps its length and the sort finishes.
func TestConcurrent(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if len(r.Sorted) != cfg.Size || r.Started == 0 {
		t.Fatalf("got %d elements, %d goroutines started", len(r.Sorted), r.Started)
	}
	if !sort.IntsAreSorted(r.Sorted) {
		t.Logf("scratch race corrupted the sort: %v", r.Sorted)
	}
}
