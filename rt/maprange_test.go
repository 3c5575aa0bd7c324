package rt

import (
	"math"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/racekit/racekit/sched"
)

// rangeKeys ranges over m as instrumented code does and returns the keys
// in the order produced.
func rangeKeys[K comparable, V any](m map[K]V, site uint32) []K {
	var ks []K
	for k := range MRange(m, site, true) {
		ks = append(ks, k)
	}
	return ks
}

// Under control a range over a map visits its entries in the seed's
// order: the same in every run of one seed, different across seeds (Go's
// own order differs between runs of one seed: this test fails with MRange
// returning Go's range).
func TestMapRangeBySeed(t *testing.T) {
	base := schedFileSites("/src/maprange.go", 4)
	m := map[int]string{}
	for i := 0; i < 32; i++ {
		m[i*7] = "v"
	}
	orders := map[string]bool{}
	for seed := uint64(0); seed < 6; seed++ {
		var got [3][]int
		for k := range got {
			var mu sync.Mutex
			controlled(t, sched.NewRandom(seed), "random", seed, sched.SitePair{}, func() {
				steps(&mu, 1, base+1) // a point: the root is under control
				got[k] = rangeKeys(m, base+3)
			})
		}
		if !slices.Equal(got[0], got[1]) || !slices.Equal(got[1], got[2]) {
			t.Fatalf("seed %d: orders differ:\n%v\n%v\n%v", seed, got[0], got[1], got[2])
		}
		if s := slices.Clone(got[0]); len(s) != len(m) || !sort.IntsAreSorted(sortedInts(s)) || !allIn(s, m) {
			t.Fatalf("seed %d: keys %v", seed, got[0])
		}
		orders[fmtInts(got[0])] = true
	}
	if len(orders) < 2 {
		t.Errorf("6 seeds gave %d order(s), want several", len(orders))
	}
}

func sortedInts(s []int) []int { sort.Ints(s); return s }

func allIn(ks []int, m map[int]string) bool {
	seen := map[int]bool{}
	for _, k := range ks {
		if _, ok := m[k]; !ok || seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

func fmtInts(s []int) string {
	b := make([]byte, 0, 4*len(s))
	for _, x := range s {
		b = append(b, byte(x), byte(x>>8), ',')
	}
	return string(b)
}

// The spec's rules for a map changed during its range hold under control:
// an entry deleted before its turn is not produced, the value produced is
// the entry's value at its turn, and a NaN key (which no lookup finds) is
// still produced once.
func TestMapRangeMutation(t *testing.T) {
	base := schedFileSites("/src/maprangemut.go", 4)
	var mu sync.Mutex
	controlled(t, sched.NewRandom(3), "random", 3, sched.SitePair{}, func() {
		steps(&mu, 1, base+1)
		m := map[int]int{}
		for i := 0; i < 20; i++ {
			m[i] = i
		}
		produced, deleted := map[int]bool{}, map[int]bool{}
		for k, v := range MRange(m, base+3, true) {
			if cur, ok := m[k]; !ok || cur != v {
				t.Errorf("key %d produced with %d; in the map now: %d, %v", k, v, cur, ok)
			}
			produced[k] = true
			// Delete a key not produced yet, change another's value.
			for j := 0; j < 20; j++ {
				if !produced[j] && !deleted[j] {
					delete(m, j)
					deleted[j] = true
					break
				}
			}
			for j := 19; j >= 0; j-- {
				if !produced[j] && !deleted[j] {
					m[j] = -j
					break
				}
			}
		}
		for i := 0; i < 20; i++ {
			if produced[i] == deleted[i] {
				t.Errorf("key %d: produced %v, deleted before its turn %v", i, produced[i], deleted[i])
			}
		}
		f := map[float64]int{math.NaN(): 1, 1: 2, math.NaN(): 3}
		n := 0
		for k, v := range MRange(f, base+4, true) {
			n++
			if k == k && v != 2 {
				t.Errorf("key %v: value %d", k, v)
			}
		}
		if n != 3 {
			t.Errorf("%d entries of a map with two NaN keys and one other produced, want 3", n)
		}
	})
}

// Outside controlled mode MRange is Go's range: every entry once, and the
// loop stops at a break.
func TestMapRangePlain(t *testing.T) {
	m := map[string]int{"a": 1, "b": 2, "c": 3}
	got := map[string]int{}
	for k, v := range MRange(m, 0, true) {
		got[k] = v
	}
	if len(got) != 3 || got["a"] != 1 || got["b"] != 2 || got["c"] != 3 {
		t.Errorf("range: %v", got)
	}
	n := 0
	for range MRange(m, 0, true) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("break: %d iterations", n)
	}
}

// keyCompare is a total order on keys of struct, array, interface,
// float and pointer types.
func TestKeyCompare(t *testing.T) {
	type pt struct {
		X int
		s string
	}
	ps := []pt{{2, "b"}, {1, "z"}, {2, "a"}}
	slices.SortFunc(ps, keyCompare[pt])
	if ps[0] != (pt{1, "z"}) || ps[1] != (pt{2, "a"}) || ps[2] != (pt{2, "b"}) {
		t.Errorf("structs: %v", ps)
	}
	is := []any{"b", 2, nil, 1, "a", 1.5}
	slices.SortFunc(is, keyCompare[any])
	if is[0] != nil {
		t.Errorf("interfaces: %v (nil first)", is)
	}
	for i := 1; i < len(is); i++ {
		if keyCompare(is[i-1], is[i]) > 0 {
			t.Errorf("interfaces not sorted: %v", is)
		}
	}
	fs := []float64{2, math.NaN(), -1}
	slices.SortFunc(fs, keyCompare[float64])
	if !math.IsNaN(fs[0]) || fs[1] != -1 || fs[2] != 2 {
		t.Errorf("floats: %v", fs)
	}
	as := [][2]int8{{1, 2}, {1, -1}, {0, 9}}
	slices.SortFunc(as, keyCompare[[2]int8])
	if as[0] != [2]int8{0, 9} || as[1] != [2]int8{1, -1} {
		t.Errorf("arrays: %v", as)
	}
}
