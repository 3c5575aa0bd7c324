package waitgroup

import (
	"sort"
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// The fix collects every square (runs under -race).
func TestFixed(t *testing.T) {
	got := Collect(5)
	sort.Ints(got)
	want := []int{0, 1, 4, 9, 16}
	for i := range want {
		if len(got) != len(want) || got[i] != want[i] {
			t.Fatalf("Collect(5) = %v, want %v", got, want)
		}
	}
}

// The buggy version returns at most every square, maybe none.
func TestBuggy(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Fixed != cfg.Workers || r.Buggy > cfg.Workers {
		t.Fatalf("got %+v", r)
	}
	t.Logf("buggy version returned %d of %d", r.Buggy, cfg.Workers)
}
