package lockfreelist

import (
	"reflect"
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// Set semantics in one goroutine.
func TestSequential(t *testing.T) {
	l := New()
	for _, k := range []int{5, 1, 9, 5, 3} {
		l.Insert(k)
	}
	if !l.Delete(9) || l.Delete(9) || !l.Contains(3) || l.Contains(9) {
		t.Fatal("wrong set semantics")
	}
	if got := l.Keys(); !reflect.DeepEqual(got, []int{1, 3, 5}) || l.Len() != 3 {
		t.Fatalf("keys %v, len %d", got, l.Len())
	}
}

// The list itself is linearizable: its keys stay sorted and match the
// callers' successful inserts minus deletes; only the plain size counter
// may be off.
func TestConcurrent(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if !r.Sorted || r.Keys != r.Inserted || r.Samples != cfg.Ops {
		t.Fatalf("got %+v", r)
	}
	if r.Len != r.Keys {
		t.Logf("size counter lost updates: %+v", r)
	}
}
