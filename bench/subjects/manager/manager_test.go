package manager

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// Alone, a client always gets a resource and the books balance.
func TestAlone(t *testing.T) {
	m := New(2)
	for i := 0; i < 10; i++ {
		r, ok := m.Alloc()
		if !ok {
			t.Fatalf("round %d: no resource", i)
		}
		m.Free(r)
	}
	if a, n := m.Stats(); a != 2 || n != 10 {
		t.Fatalf("stats = %d available, %d allocated; want 2, 10", a, n)
	}
}

// Concurrently, every resource comes back; the count may lose updates.
func TestConcurrent(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Available != cfg.Resources || r.Allocated > r.Granted || r.Samples != cfg.Iterations {
		t.Fatalf("got %+v", r)
	}
}
