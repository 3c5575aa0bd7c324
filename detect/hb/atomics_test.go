package hb_test

// Atomics as Go's race detector orders them (clock.GoAtomics), on traces
// shaped as the Go front end records atomic operations (trace.Builder's
// GoAtomic). Each case is one that `go test -race` was run on as a Go
// test: the ones named TestRace... it reports, the TestNoRace... it does
// not (e2e's stdraces holds the same programs).

import (
	"testing"

	"github.com/racekit/racekit/trace"
)

// Two loads of a word do not synchronize: what comes before one is not
// ordered before what comes after the other.
func TestRaceAtomicLoadLoad(t *testing.T) {
	b := forked("T1", "T2")
	w1 := b.Write("T1", "x", "w1")
	b.GoAtomic("T1", trace.OpAtomicLoad, "f", "load1")
	b.GoAtomic("T2", trace.OpAtomicLoad, "f", "load2")
	w2 := b.Write("T2", "x", "w2")
	tr := b.Trace()
	h, f := expect(t, tr, "w1~w2")
	checkOnly(t, "hb", h, tr, w1, w2)
	checkOnly(t, "fasttrack", f, tr, w1, w2)
}

// A load does not synchronize with a later store.
func TestRaceAtomicLoadThenStore(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.GoAtomic("T1", trace.OpAtomicLoad, "f", "load")
	b.GoAtomic("T2", trace.OpAtomicStore, "f", "store")
	b.Write("T2", "x", "w2")
	expect(t, b.Trace(), "w1~w2")
}

// A load that reads a later store is not ordered after the store it
// overwrote: T2's load reads T2's own store.
func TestRaceAtomicOverwrittenStore(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.GoAtomic("T1", trace.OpAtomicStore, "f", "store1")
	b.GoAtomic("T2", trace.OpAtomicStore, "f", "store2")
	b.GoAtomic("T2", trace.OpAtomicLoad, "f", "load")
	b.Write("T2", "x", "w2")
	expect(t, b.Trace(), "w1~w2")
}

// A load that reads a store is ordered after it; a read-modify-write
// passes on what it read.
func TestNoRaceAtomicStoreLoadAndRMWChain(t *testing.T) {
	b := forked("T1", "T2", "T3")
	b.Write("T1", "x", "w1")
	b.GoAtomic("T1", trace.OpAtomicStore, "f", "store")
	b.GoAtomic("T2", trace.OpAtomicRMW, "f", "add")
	b.GoAtomic("T3", trace.OpAtomicLoad, "f", "load")
	b.Write("T3", "x", "w3")
	b.GoAtomic("T3", trace.OpAtomicStore, "f", "store3")
	b.GoAtomic("T2", trace.OpAtomicLoad, "f", "load2") // reads store3
	b.Read("T2", "x", "r2")
	expect(t, b.Trace())
}

// Atomic accesses never race with each other, ordered or not.
func TestNoRaceAtomicAccessesUnordered(t *testing.T) {
	b := forked("T1", "T2", "T3")
	b.GoAtomic("T1", trace.OpAtomicStore, "f", "store1")
	b.GoAtomic("T2", trace.OpAtomicLoad, "f", "load2")
	b.GoAtomic("T3", trace.OpAtomicRMW, "f", "add3")
	b.GoAtomic("T2", trace.OpAtomicStore, "f", "store2")
	b.GoAtomic("T1", trace.OpAtomicLoad, "f", "load1")
	expect(t, b.Trace())
}

// A plain access races with an unordered atomic one, in either order: a
// plain read with an atomic write, a plain write with an atomic load.
func TestRaceAtomicAndPlainAccess(t *testing.T) {
	b := forked("T1", "T2")
	b.GoAtomic("T1", trace.OpAtomicStore, "f", "store")
	b.Read("T2", "f", "plainread")
	b.GoAtomic("T1", trace.OpAtomicLoad, "g", "load")
	b.Write("T2", "g", "plainwrite")
	b.Read("T1", "h", "plainread2")
	b.GoAtomic("T2", trace.OpAtomicRMW, "h", "add")
	expect(t, b.Trace(), "plainread~store", "load~plainwrite", "add~plainread2")
}

// An atomic access ordered after a plain one (here by a fork) does not
// race with it, nor does a plain access ordered after the atomic one
// through the word itself.
func TestNoRaceAtomicAfterPlain(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Write("M", "f", "init")
	b.Fork("M", "T1", "go T1")
	b.GoAtomic("T1", trace.OpAtomicStore, "f", "store")
	b.GoAtomic("M", trace.OpAtomicLoad, "f", "load") // reads T1's store
	b.Write("M", "f", "reset")
	expect(t, b.Trace())
}

// The atomic accesses of a word are a set, not one last write: two
// unordered atomic stores, and a plain write ordered after only the
// second races with the first (FastTrack's last-write argument does not
// hold for them: they need not be ordered). A plain write then forgets
// them: what follows it is ordered after them or raced with it.
func TestRaceAtomicStoresKeptAsSet(t *testing.T) {
	b := forked("T1", "T2", "T3")
	s1 := b.GoAtomic("T1", trace.OpAtomicStore, "f", "store1")
	b.GoAtomic("T2", trace.OpAtomicStore, "f", "store2")
	b.Snd("T2", "c")
	b.Rcv("T3", "c")
	w := b.Write("T3", "f", "plainwrite")
	b.Snd("T3", "d")
	b.Rcv("T2", "d")
	b.GoAtomic("T2", trace.OpAtomicLoad, "f", "load")
	tr := b.Trace()
	h, f := expect(t, tr, "plainwrite~store1")
	checkOnly(t, "hb", h, tr, s1, w)
	checkOnly(t, "fasttrack", f, tr, s1, w)
}

// Traces from other sources have atomic operations without the front
// end's lock and data access: stores there replace the word's clock too
// (Go's memory model: a load synchronizes with the store it reads).
func TestRaceBareAtomicOverwrittenStore(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.AStore("T1", "f")
	b.AStore("T2", "f")
	b.ALoad("T2", "f")
	b.Write("T2", "x", "w2")
	expect(t, b.Trace(), "w1~w2")
}
