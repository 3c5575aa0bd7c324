package synclist

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// In one thread the bulk operations are right, and an iterator used
// across a modification reports it.
func TestSequential(t *testing.T) {
	a, b := New(10), New(10)
	for i := 0; i < 4; i++ {
		a.Add(i)
		b.Add(i)
	}
	if ok, err := a.ContainsAll(b); !ok || err != nil {
		t.Fatalf("ContainsAll = %v, %v", ok, err)
	}
	if ok, err := a.Equals(b); !ok || err != nil {
		t.Fatalf("Equals = %v, %v", ok, err)
	}
	b.RemoveAll(2)
	if ok, _ := a.Equals(b); ok {
		t.Fatal("Equals after RemoveAll(2)")
	}
	it := b.Iterator()
	b.Add(9)
	if _, err := it.Next(); err != ErrConcurrentModification {
		t.Fatalf("Next after Add = %v, want ErrConcurrentModification", err)
	}
}

// The driver: the bulk operations race with the mutator; every call
// completes, some may report a concurrent modification.
func TestDriver(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Checks != cfg.Rounds || r.Exceptions > r.Checks || r.FinalLen > cfg.Elements+cfg.Rounds {
		t.Fatalf("got %+v", r)
	}
	t.Logf("%+v", r)
}
