package boundedbuffer

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// The monitor loses nothing: every item is consumed exactly once.
func TestRun(t *testing.T) {
	racy.Skip(t) // Len races with Put and Get
	cfg := DefaultConfig()
	r := Run(cfg)
	want := Result{Consumed: cfg.Producers * cfg.Items, Sum: ExpectedSum(cfg), Samples: cfg.Items}
	if r != want {
		t.Fatalf("got %+v, want %+v", r, want)
	}
}

// FIFO order through a one-slot buffer, single goroutine.
func TestFIFO(t *testing.T) {
	b := New(3)
	for i := 0; i < 3; i++ {
		b.Put(&Item{Seq: i})
	}
	b.Close()
	for i := 0; i < 3; i++ {
		if it := b.Get(); it == nil || it.Seq != i {
			t.Fatalf("Get %d = %+v", i, it)
		}
	}
	if it := b.Get(); it != nil || b.Len() != 0 {
		t.Fatalf("drained buffer gave %+v, len %d", it, b.Len())
	}
}
