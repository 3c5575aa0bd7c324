package hb

import (
	"cmp"
	"slices"
	"testing"
)

// BenchmarkReadSharedFind: find (its guess at the offset from the first
// entry, then a search by hand) against the generic
// slices.BinarySearchFunc it replaced (the baseline), over a read-shared
// state of 64 entries: sparse IDs (every third), where the guess misses,
// and dense ones (a run of consecutive IDs, as package clock hands them
// out), where it hits.
func BenchmarkReadSharedFind(b *testing.B) {
	for _, shape := range []struct {
		name string
		step uint32
	}{{"sparse", 3}, {"dense", 1}} {
		rs := &readShared{}
		for t := uint32(1); t <= 64; t++ {
			rs.set(t*shape.step, 0, 1, 0)
		}
		generic := func(tid uint32) (int, bool) {
			return slices.BinarySearchFunc(rs.ents, tid, func(e sharedEnt, t uint32) int { return cmp.Compare(e.tid, t) })
		}
		for _, c := range []struct {
			name string
			find func(uint32) (int, bool)
		}{{"generic", generic}, {"find", rs.find}} {
			b.Run(shape.name+"/"+c.name, func(b *testing.B) {
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
}

// find gives the generic binary search's answer, entry or insertion
// point, for every ID around sets of entries that are runs, runs with
// gaps and scattered IDs.
func TestReadSharedFind(t *testing.T) {
	sets := [][]uint32{
		nil, {0}, {5}, {1, 2, 3, 4}, {3, 4, 5, 9, 10}, {0, 2, 3, 4, 5}, {1, 100, 101, 102},
		{7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 40},
	}
	for _, ids := range sets {
		rs := &readShared{}
		for _, id := range ids {
			rs.set(id, 0, 1, 0)
		}
		for tid := uint32(0); tid < 120; tid++ {
			wi, wok := slices.BinarySearchFunc(rs.ents, tid, func(e sharedEnt, t uint32) int { return cmp.Compare(e.tid, t) })
			if i, ok := rs.find(tid); i != wi || ok != wok {
				t.Errorf("entries %v: find(%d) = %d, %v, want %d, %v", ids, tid, i, ok, wi, wok)
			}
		}
	}
}
