package atomicmix

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// The mailbox alone is race-free (runs under -race) and delivers the
// whole payload.
func TestMailbox(t *testing.T) {
	mb := &Mailbox{}
	got := make(chan int)
	go func() { got <- mb.Await() }()
	mb.Publish(10)
	if s := <-got; s != 10+11+12+13 {
		t.Fatalf("Await = %d, want 46", s)
	}
}

// Atomic increments alone are exact.
func TestCounterAlone(t *testing.T) {
	c := &Counter{}
	for i := 0; i < 5; i++ {
		c.Inc()
	}
	if c.Snapshot() != 5 {
		t.Fatalf("Snapshot = %d", c.Snapshot())
	}
	c.Reset()
	if c.Snapshot() != 0 {
		t.Fatal("Reset did not zero")
	}
}

// Everything together: the counter ends between 0 and the increments.
func TestRun(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Final < 0 || r.Final > int64(cfg.Workers*cfg.Incs) || r.Samples != cfg.Incs || r.Mail != 406 {
		t.Fatalf("got %+v", r)
	}
}
