package treefig53

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// One thread and no iterations: only T0's increment happens, no race.
func TestNoThreadWork(t *testing.T) {
	if got := Run(Config{Threads: 1, Iters: 0, Locks: 2}); got != 1 {
		t.Fatalf("x = %d, want 1", got)
	}
}

// The figure's program: x never exceeds the number of increments.
func TestRun(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	got, max := Run(cfg), cfg.Threads*(cfg.Iters+1)
	if got < 1 || got > max {
		t.Fatalf("x = %d, want 1..%d", got, max)
	}
}
