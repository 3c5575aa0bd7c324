package moldyn

import (
	"math"
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a)) }

// One thread is the reference; two threads compute the same energies
// (the races are benign), and count at most as many interactions.
func TestBenignRaces(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	seq := cfg
	seq.Threads = 1
	want := Run(seq)
	if want.Interactions == 0 || want.Ekin <= 0 {
		t.Fatalf("reference run did nothing: %+v", want)
	}
	got := Run(cfg)
	if !close(got.Epot, want.Epot) || !close(got.Vir, want.Vir) || !close(got.Ekin, want.Ekin) {
		t.Fatalf("2 threads: %+v, 1 thread: %+v", got, want)
	}
	if got.Interactions > want.Interactions {
		t.Fatalf("%d interactions counted, only %d exist", got.Interactions, want.Interactions)
	}
}

// Sequentially the run is deterministic and race-free.
func TestSequentialDeterministic(t *testing.T) {
	cfg := Config{Side: 3, Threads: 1, Steps: 3, Rescale: 1}
	if a, b := Run(cfg), Run(cfg); a != b {
		t.Fatalf("two runs differ: %+v, %+v", a, b)
	}
}
