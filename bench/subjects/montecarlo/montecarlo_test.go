package montecarlo

import (
	"math"
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// One worker: the running total is exact, and the walks are the same
// whatever the number of workers (each task carries its own random state).
func TestSequentialMatchesExact(t *testing.T) {
	cfg := Config{Tasks: 10, Steps: 30, Threads: 1}
	r := Run(cfg)
	if r.Recorded != 10 || math.Abs(r.Mean-r.Exact) > 1e-9 {
		t.Fatalf("got %+v", r)
	}
	if r.Exact < 80 || r.Exact > 120 {
		t.Fatalf("mean price %v is implausible for 30 daily steps from 100", r.Exact)
	}
}

// Several workers: every result is recorded and the exact mean does not
// change; the racy running mean may.
func TestConcurrent(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	seq := cfg
	seq.Threads = 1
	want := Run(seq).Exact
	r := Run(cfg)
	if r.Recorded != cfg.Tasks || math.Abs(r.Exact-want) > 1e-9 {
		t.Fatalf("got %+v, want exact mean %v", r, want)
	}
	if math.Abs(r.Mean-r.Exact) > 1e-9 {
		t.Logf("lost additions: racy mean %v, exact %v", r.Mean, r.Exact)
	}
}
