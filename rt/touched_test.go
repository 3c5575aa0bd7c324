package rt

import (
	"math/rand"
	"testing"
)

// TestTouched checks touched against a set of marked granules, over ranges
// that start and end anywhere in a granule and cross words and leaves. The
// addresses are near the window's top, where no heap of the test lives.
func TestTouched(t *testing.T) {
	if touchedHi == touchedLo {
		t.Skip("no window on a 32-bit platform")
	}
	base := touchedHi - 6<<leafShift // three leaves of their own (TestAllocHookUntouched marks the top one): the first two meet in the middle of the span
	rng := rand.New(rand.NewSource(1))
	marked := map[uint64]bool{} // granule numbers
	for i := 0; i < 300; i++ {
		// Near the boundary between the first two leaves, and anywhere.
		var a uint64
		if i%2 == 0 {
			a = base + 1<<leafShift - 4096 + uint64(rng.Intn(8192))
		} else {
			a = base + uint64(rng.Int63n(2<<leafShift))
		}
		markTouched(a)
		marked[a>>granuleShift] = true
	}
	want := func(lo, hi uint64) bool {
		for g := lo >> granuleShift; g <= (hi-1)>>granuleShift; g++ {
			if marked[g] {
				return true
			}
		}
		return false
	}
	for i := 0; i < 20000; i++ {
		lo := base + 1<<leafShift - 8192 + uint64(rng.Intn(16384))
		if i%10 == 0 {
			lo = base + uint64(rng.Int63n(2<<leafShift))
		}
		n := uint64(1 + rng.Intn(2048))
		if i%100 == 0 {
			n = uint64(rng.Int63n(1 << leafShift))
		}
		if got, w := touched(lo, lo+n), want(lo, lo+n); got != w {
			t.Fatalf("touched(%#x, %#x) = %v, want %v", lo, lo+n, got, w)
		}
	}
	// The third leaf was never marked: nothing there is touched, and no
	// leaf is made for it by asking.
	third := base + 2<<leafShift
	if touched(third, third+1<<leafShift) {
		t.Error("an unmarked leaf is touched")
	}
	if leafOf(third, false) != nil {
		t.Error("touched made a leaf")
	}
	// Outside the window everything counts as touched; marking there is a
	// no-op.
	markTouched(7)
	for _, r := range [][2]uint64{{0, 16}, {touchedLo - 16, touchedLo + 16}, {touchedHi - 16, touchedHi + 16}, {touchedHi, touchedHi + 64}} {
		if !touched(r[0], r[1]) {
			t.Errorf("touched(%#x, %#x) = false outside the window", r[0], r[1])
		}
	}
}

// clearTouched clears the granules a range covers whole, and only those.
func TestClearTouched(t *testing.T) {
	if touchedHi == touchedLo {
		t.Skip("no window on a 32-bit platform")
	}
	base := touchedHi - 8<<leafShift // a leaf of its own
	for g := uint64(0); g < 100; g++ {
		markTouched(base + g<<granuleShift)
	}
	clearTouched(base+8, base+40*16+8) // granule 0 and 40 partly: kept; 1-39 cleared
	for g := uint64(0); g < 100; g++ {
		want := g == 0 || g >= 40
		if got := touched(base+g<<granuleShift, base+g<<granuleShift+16); got != want {
			t.Errorf("granule %d touched %v after the clear, want %v", g, got, want)
		}
	}
}

// TestMarkTouchedRange checks markTouchedRange, which sets a leaf word's
// bits at once, against a set of the granules each range covers: ranges
// that start and end anywhere in a granule, within one word, across words
// and across the boundary of two leaves, in two leaves of their own below
// TestTouched's.
func TestMarkTouchedRange(t *testing.T) {
	if touchedHi == touchedLo {
		t.Skip("no window on a 32-bit platform")
	}
	mid := touchedHi - 11<<leafShift // the boundary of the two leaves
	const half = 1 << 20             // ranges within a MiB of it
	rng := rand.New(rand.NewSource(2))
	var g gstate
	marked := map[uint64]bool{} // granule numbers
	for i := 0; i < 300; i++ {
		lo := mid - half + uint64(rng.Intn(2*half))
		if i%3 == 0 {
			lo = mid - uint64(rng.Intn(600)) // across the boundary, often
		}
		n := uint64(1 + rng.Intn(40))
		if i%2 == 0 {
			n = uint64(1 + rng.Intn(3000))
		}
		n = min(n, mid+half-lo)
		g.markTouchedRange(lo, lo+n)
		for gr := lo >> granuleShift; gr <= (lo+n-1)>>granuleShift; gr++ {
			marked[gr] = true
		}
	}
	for a := mid - half; a < mid+half; a += 1 << granuleShift {
		if got := touched(a, a+1); got != marked[a>>granuleShift] {
			t.Fatalf("granule %#x: touched %v, want %v", a, got, marked[a>>granuleShift])
		}
	}
}
