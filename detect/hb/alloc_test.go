package hb_test

import (
	"fmt"
	"testing"

	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/trace"
)

// An address freed and allocated anew (OpAlloc) holds another object:
// accesses to the old one never race with accesses to the new one.

func TestNoRaceAddressReusedAfterAlloc(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "old")
	b.Alloc("T2", "x", 8)
	b.Write("T2", "x", "new")
	expect(t, b.Trace())
}

func TestRaceAfterAllocStillFound(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "old")
	b.Alloc("T2", "x", 8)
	b.Write("T2", "x", "init")
	b.Write("T1", "x", "racy") // T1 reaches the new object unordered with T2's write
	expect(t, b.Trace(), "init~racy")
}

func TestNoRaceAllocCoversEveryWordOfTheObject(t *testing.T) {
	b := forked("T1", "T2")
	x := b.Obj("x")
	b.Obj("x1") // the next word, x+8
	b.Write("T1", "x1", "old")
	b.Add(trace.Event{G: b.G("T2"), Op: trace.OpAlloc, Obj: x, Value: 16})
	b.Write("T2", "x1", "new")
	expect(t, b.Trace())
}

func TestRaceAllocOfUnknownSizeClearsNothing(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "old")
	b.Add(trace.Event{G: b.G("T2"), Op: trace.OpAlloc, Obj: b.Obj("x"), Flags: trace.FlagValueUnknown})
	b.Write("T2", "x", "new")
	expect(t, b.Trace(), "old~new")
}

func TestRaceAllocOfAnotherObjectClearsNothing(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "a")
	b.Alloc("T2", "y", 8)
	b.Write("T2", "x", "b")
	expect(t, b.Trace(), "a~b")
}

// Words read by two goroutines (FastTrack's read-shared state), freed and
// allocated anew, many times over: the allocation clears their cells, and
// FastTrack's sweep takes back the states no cell refers to, so the live
// ones stay near the words in use (without it: one state per object ever
// read-shared). Races on the new objects are still found, against every
// reader: each round's last object is read by T1 and T2 and then written
// by M unordered with T2's read.
func TestRaceReadSharedStatesOfFreedMemoryTakenBack(t *testing.T) {
	defer hb.SetMinSweep(8)()
	const rounds, words = 40, 16
	b := forked("T1", "T2")
	var want []string
	for r := 0; r < rounds; r++ {
		for w := 0; w < words; w++ {
			x := fmt.Sprintf("x%d", w)
			b.Alloc("T1", x, 8)
			b.Read("T1", x, fmt.Sprintf("a%d_%d", r, w))
			b.Read("T2", x, fmt.Sprintf("b%d_%d", r, w))
		}
		if r == rounds-1 {
			b.Write("M", "x0", "last")
			want = append(want, "a39_0~last", "b39_0~last")
		}
	}
	_, ft := expect(t, b.Trace(), want...)
	if live := ft.stats["read_shared_live"]; live > 3*words {
		t.Errorf("%d read-shared states live after %d rounds of %d words, want about %d", live, rounds, words, words)
	}
	if n := ft.stats["read_share"]; n != rounds*words {
		t.Errorf("%d promotions to read-shared, want %d", n, rounds*words)
	}
}

// The same for words accessed atomically by two goroutines at once (their
// atomic accesses kept as sets): freed and allocated anew many times, the
// states of the freed ones are taken back; a plain write of the last
// object races with both goroutines' atomic accesses.
func TestRaceAtomicStatesOfFreedMemoryTakenBack(t *testing.T) {
	defer hb.SetMinSweep(8)()
	const rounds, words = 40, 16
	b := forked("T1", "T2")
	var want []string
	for r := 0; r < rounds; r++ {
		for w := 0; w < words; w++ {
			x := fmt.Sprintf("x%d", w)
			b.Alloc("T1", x, 8)
			b.GoAtomic("T1", trace.OpAtomicStore, x, fmt.Sprintf("s%d_%d", r, w))
			b.GoAtomic("T2", trace.OpAtomicStore, x, fmt.Sprintf("t%d_%d", r, w))
			b.GoAtomic("T1", trace.OpAtomicLoad, x, fmt.Sprintf("l%d_%d", r, w))
			b.GoAtomic("T2", trace.OpAtomicLoad, x, fmt.Sprintf("m%d_%d", r, w))
		}
		if r == rounds-1 {
			b.Write("M", "x0", "last")
			want = append(want, "s39_0~last", "t39_0~last", "l39_0~last", "m39_0~last")
		}
	}
	_, ft := expect(t, b.Trace(), want...)
	if live := ft.stats["atomic_live"]; live > 3*words {
		t.Errorf("%d words' atomic accesses kept after %d rounds of %d words, want about %d", live, rounds, words, words)
	}
	if live := ft.stats["read_shared_live"]; live > 6*words {
		t.Errorf("%d read-shared states live after %d rounds of %d words, want about %d", live, rounds, words, 2*words)
	}
}
