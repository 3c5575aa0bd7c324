package stdraces

import (
	"cmp"
	"maps"
	"slices"
	"testing"
)

// A generic function passed where its type arguments are inferred from
// the parameter (maps.EqualFunc(a, b, slices.Equal)) must stay in place:
// a call into std with two operands that are not simple goes through
// temporaries (a BarrierPair), and a go statement's arguments too, where
// it has nothing to infer them from (held-out google.golang.org/grpc's
// xds/grpcservice did not build under racekit).
type inferredConfig struct {
	md   map[string][]string
	keys []int
}

func TestNoRaceInferredGenericArgs(t *testing.T) {
	a := &inferredConfig{md: map[string][]string{"k": {"v"}}, keys: []int{3, 1, 2}}
	b := &inferredConfig{md: map[string][]string{"k": {"v"}}, keys: []int{2, 1}}
	eq := maps.EqualFunc(a.md, b.md, slices.Equal)
	if !eq {
		t.Fatal("maps differ")
	}
	done := make(chan bool)
	go slices.SortFunc(b.keys, cmp.Compare)
	go func() {
		slices.SortFunc(a.keys, cmp.Compare)
		done <- true
	}()
	<-done
	if !slices.IsSorted(a.keys) {
		t.Fatal("not sorted")
	}
}

// The same call racing with a write to the map is reported.
func TestRaceInferredGenericArgs(t *testing.T) {
	a := &inferredConfig{md: map[string][]string{"k": {"v"}}}
	b := &inferredConfig{md: map[string][]string{"k": {"v"}}}
	done := make(chan bool)
	go func() {
		a.md["x"] = nil // race: inferredeq
		done <- true
	}()
	eq := maps.EqualFunc(a.md, b.md, slices.Equal) // race: inferredeq
	<-done
	_ = eq
}
