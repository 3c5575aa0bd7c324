package rwmap

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// One goroutine: counts are exact and a missing name is created.
func TestSequential(t *testing.T) {
	r := New(2)
	r.Lookup("k0")
	r.Lookup("k0")
	if e := r.Lookup("x"); e.Name != "x" || e.Hits != 1 {
		t.Fatalf("Lookup(x) = %+v", e)
	}
	if r.Stats() != 3 || r.Lookup("k0").Hits != 3 || len(r.m) != 3 {
		t.Fatalf("stats %d, entries %d", r.Stats(), len(r.m))
	}
}

// Concurrently the counts may lose updates; they never exceed the truth.
func TestConcurrent(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Entries != cfg.Keys+1 || r.Lookups > r.Done || r.Hits > r.Done || r.Samples != cfg.Lookups {
		t.Fatalf("got %+v", r)
	}
}
