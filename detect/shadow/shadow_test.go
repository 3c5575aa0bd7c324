package shadow

import (
	"math/rand/v2"
	"testing"
)

// TestShadowTableKeepsEveryAddress checks the shadow table against a Go
// map: every address, including 0 and addresses that collide in the hash,
// keeps its own state across growth.
func TestShadowTableKeepsEveryAddress(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var tab Table[uint64]
	want := map[uint64]uint64{}
	addrs := []uint64{0, 1, ^uint64(0), 8, 16}
	for i := range uint64(5000) {
		addrs = append(addrs, 0x1000+8*i, r.Uint64(), i<<54) // i<<54 share low bits
	}
	for i, a := range addrs {
		*tab.Get(a) += uint64(i) + 1
		want[a] += uint64(i) + 1
	}
	if tab.Len() != len(want) {
		t.Fatalf("len = %d, want %d", tab.Len(), len(want))
	}
	for a, v := range want {
		if got := *tab.Get(a); got != v {
			t.Fatalf("address %#x holds %d, want %d", a, got, v)
		}
	}
	if tab.Len() != len(want) {
		t.Fatalf("lookups added addresses: len = %d, want %d", tab.Len(), len(want))
	}
}

// TestShadowMemKeepsEveryAddress checks the paged shadow memory against a
// Go map: aligned words (dense and scattered), unaligned addresses sharing
// a word, address 0 and the top of the address space each keep their own
// state, and len counts each once.
func TestShadowMemKeepsEveryAddress(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var mem Mem[uint64]
	want := map[uint64]uint64{}
	addrs := []uint64{0, 1, 7, 8, ^uint64(0), ^uint64(7)}
	for i := range uint64(3000) {
		addrs = append(addrs, 0x1000+8*i, 0x1001+8*i, 0x1004+8*i, r.Uint64(), r.Uint64()&^7)
	}
	for round := range 2 {
		for i, a := range addrs {
			*mem.Get(a) += uint64(i+1) << round
			want[a] += uint64(i+1) << round
		}
	}
	if mem.Len() != len(want) {
		t.Fatalf("len = %d, want %d", mem.Len(), len(want))
	}
	for a, v := range want {
		if got := *mem.Get(a); got != v {
			t.Fatalf("address %#x holds %d, want %d", a, got, v)
		}
	}
}
