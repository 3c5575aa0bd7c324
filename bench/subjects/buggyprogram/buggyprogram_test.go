package buggyprogram

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// One worker (and the monitor, whose limit is never reached): every step
// counts, every claim lands in its own slot.
func TestSequential(t *testing.T) {
	racy.Skip(t) // the monitor still polls the counter
	r := Run(Config{Workers: 1, Iterations: 30, Slots: 20, Limit: 1 << 30})
	want := Result{Counter: 30, Recorded: 20, Next: 20, Steps: 30}
	if r != want {
		t.Fatalf("got %+v, want %+v", r, want)
	}
}

// Three workers: increments and claims may be lost; the bounds still hold.
func TestConcurrent(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	total := cfg.Workers * cfg.Iterations
	if r.Counter > total || r.Counter < 1 || r.Next > cfg.Slots || r.Recorded > total {
		t.Fatalf("out of bounds: %+v", r)
	}
	if r.Counter != total || r.Next != r.Recorded {
		t.Logf("lost updates: %+v (want counter %d, next = recorded)", r, total)
	}
}
