package loopcapture

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// The fixed version is race-free and exact (runs under -race).
func TestFixed(t *testing.T) {
	items := Items(10)
	got := ProcessAll(items)
	for i, it := range items {
		if got[i] != process(it) {
			t.Fatalf("result %d = %d, want %d", i, got[i], process(it))
		}
	}
}

// The buggy version may compute wrong results; it computes one per item.
func TestBuggy(t *testing.T) {
	racy.Skip(t)
	r := Run(DefaultConfig())
	if r.Items != 12 || r.Wrong > r.Items {
		t.Fatalf("got %+v", r)
	}
	t.Logf("%d of %d results wrong", r.Wrong, r.Items)
}
