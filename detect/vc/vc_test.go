package vc

import (
	"math/rand/v2"
	"testing"

	"github.com/racekit/racekit/trace"
)

func TestJoinIsLeastUpperBound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	randVC := func() VectorClock {
		v := make(VectorClock, r.IntN(6))
		for i := range v {
			v[i] = uint32(r.IntN(4))
		}
		return v
	}
	for i := 0; i < 2000; i++ {
		a, b := randVC(), randVC()
		j := a.Clone()
		j.Join(b)
		if !a.Leq(j) || !b.Leq(j) {
			t.Fatalf("%v ⊔ %v = %v is not an upper bound", a, b, j)
		}
		for g := 0; g < len(j); g++ {
			if want := max(a.Get(trace.GID(g)), b.Get(trace.GID(g))); j[g] != want {
				t.Fatalf("%v ⊔ %v = %v: entry %d is %d, want %d", a, b, j, g, j[g], want)
			}
		}
		// Join is commutative and idempotent.
		k := b.Clone()
		k.Join(a)
		if !j.Leq(k) || !k.Leq(j) {
			t.Fatalf("join not commutative: %v vs %v", j, k)
		}
		k.Join(a)
		if !j.Leq(k) || !k.Leq(j) {
			t.Fatalf("join not idempotent: %v vs %v", j, k)
		}
	}
}

func TestCopyClearsTail(t *testing.T) {
	v := VectorClock{5, 6, 7}
	v.Copy(VectorClock{1})
	if v.Get(0) != 1 || v.Get(1) != 0 || v.Get(2) != 0 {
		t.Fatalf("Copy left %v", v)
	}
}

func TestEpochPacking(t *testing.T) {
	e := MakeEpoch(0xDEADBEEF, 7)
	if e.Clock() != 0xDEADBEEF || e.G() != 7 {
		t.Fatalf("epoch %v unpacked wrong", e)
	}
	v := VectorClock{0, 0, 0, 0, 0, 0, 0, 0xDEADBEEF}
	if !e.Leq(v) {
		t.Fatal("c@t should be <= a clock with v(t) = c")
	}
	v[7]--
	if e.Leq(v) {
		t.Fatal("c@t should not be <= a clock with v(t) = c-1")
	}
	if !Epoch(0).Leq(nil) {
		t.Fatal("bottom epoch must precede the bottom clock")
	}
	if got := e.String(); got != "3735928559@7" {
		t.Fatalf("String = %q", got)
	}
}

// TestJoinAfterShorteningIsBottom: a clock shortened to reuse its storage
// (an objVC's reset, R_L := ⊥) is ⊥: a later join must not bring back
// what the storage held.
func TestJoinAfterShorteningIsBottom(t *testing.T) {
	v := VectorClock{5, 6, 7}
	v = v[:0]
	v.Join(VectorClock{1})
	v.Set(2, 1)
	if want := (VectorClock{1, 0, 1}); v.String() != want.String() {
		t.Fatalf("got %v, want %v", v, want)
	}
}
