package hb_test

import (
	"testing"

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
