package syncset

import (
	"reflect"
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// Sequentially: a sorted set, and the bulk operations are exact.
func TestSequential(t *testing.T) {
	a, b := New(10), New(10)
	for _, x := range []int{5, 1, 3, 1} {
		b.Add(x)
	}
	if got := a.AddAll(b); got != 3 {
		t.Fatalf("AddAll added %d, want 3", got)
	}
	if !a.ContainsAll(b) || !reflect.DeepEqual(a.Elements(), []int{1, 3, 5}) {
		t.Fatalf("a = %v", a.Elements())
	}
	b.Add(4)
	b.Remove(1)
	if a.ContainsAll(b) || !reflect.DeepEqual(b.Elements(), []int{3, 4, 5}) {
		t.Fatalf("b = %v", b.Elements())
	}
}

// The driver: s1 stays a sorted set (it is only changed under its lock),
// whatever the walks of s2 saw.
func TestDriver(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if !r.Sorted || r.FinalS1Len != r.Added || r.Added > 2*cfg.Elements+cfg.Rounds {
		t.Fatalf("got %+v", r)
	}
}
