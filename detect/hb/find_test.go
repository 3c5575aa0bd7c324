package hb

import (
	"cmp"
	"slices"
	"testing"
)

// BenchmarkReadSharedFind: find's search by hand against the generic
// slices.BinarySearchFunc it replaced (the baseline), over a read-shared
// state of 64 entries.
func BenchmarkReadSharedFind(b *testing.B) {
	rs := &readShared{}
	for t := uint32(1); t <= 64; t++ {
		rs.set(t*3, 0, 1, 0)
	}
	generic := func(tid uint32) (int, bool) {
		return slices.BinarySearchFunc(rs.ents, tid, func(e sharedEnt, t uint32) int { return cmp.Compare(e.tid, t) })
	}
	for _, c := range []struct {
		name string
		find func(uint32) (int, bool)
	}{{"generic", generic}, {"find", rs.find}} {
		b.Run(c.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				for t := uint32(0); t < 200; t++ {
					if _, ok := c.find(t); ok {
						n++
					}
				}
			}
			if n != 64*b.N {
				b.Fatalf("found %d, want %d", n, 64*b.N)
			}
		})
	}
}
