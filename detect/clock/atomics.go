package clock

// Go's atomics (GoAtomics): the lock private to an atomic word, held for
// the operation's data access and building no edge, and the publication
// of a store after that access.

import "github.com/racekit/racekit/trace"

// GoAtomics makes k give atomics the edges of Go's memory model as Go's
// race detector builds them (docs/semantics.md, "Atomics"): a load
// acquires from the word's clock, a store replaces it with the storer's
// (S_a := C_t), a read-modify-write does both; and the lock private to an
// atomic word (trace.AtomicLockBit) is held but builds no edge, so that
// two loads, or a load and a later store, do not order what comes before
// and after them. Without it (the predictive detectors, whose soundness
// argument takes the front end's lock as a real one) stores join the
// word's clock and the private lock orders every atomic operation on the
// word before the next: more edges, so races -race reports may be missed.
// A detector using it must keep atomic accesses (Thread.AtomicAccess) from
// racing with each other itself. Call it before the first event.
func (k *Tracker) GoAtomics() { k.goAtom = true }

// AtomicAccess reports whether t's data access of addr now is the access
// the Go front end records inside an atomic operation on addr: the last
// lock t acquired is the word's private lock (trace.AtomicLockBit).
func (t *Thread) AtomicAccess(addr uint64) bool {
	n := len(t.held)
	return n > 0 && t.held[n-1].Lock == addr|trace.AtomicLockBit
}

// InAtomicAccess reports whether t is inside an atomic operation as the
// Go front end records it (the last lock t acquired is a word's private
// lock): AtomicAccess may then hold for some address.
func (t *Thread) InAtomicAccess() bool {
	n := len(t.held)
	return n > 0 && t.held[n-1].Lock&trace.AtomicLockBit != 0
}

// atomicLock reports whether lock is an atomic word's private lock that
// builds no edge (GoAtomics).
func (k *Tracker) atomicLock(lock uint64) bool {
	return k.goAtom && lock&trace.AtomicLockBit != 0
}

// publishAtomic is S_a := C_t for a store or read-modify-write of t on
// word a (GoAtomics), then a tick. Inside the word's private lock, as the
// Go front end records it, it waits for the lock's release: the data
// access recorded after the operation is part of it (Go's race detector
// records an atomic access before its release), so a goroutine that reads
// the store is ordered after that access too.
func (k *Tracker) publishAtomic(t *Thread, a uint64) {
	o := objClock(&k.atomics, a)
	if t.AtomicAccess(a) {
		t.atomPub = o
		return
	}
	k.copyTo(t, o)
	t.tick()
}

// atomicAcquire is the acquire of an atomic word's private lock under
// GoAtomics: it builds no edge, so only t's held locks change. The lock
// gets no lockState: an atomics-heavy trace has as many such locks as
// words (millions: puzpuzpuz/xsync's map tests), and their table was the
// largest part of the analysis (docs/benchmarks.md, "Atomic words' locks").
// Well-formedness is checked on t alone: rt records the lock inside the
// word's stripe, which no other goroutine holds meanwhile, and never
// nests two.
func (k *Tracker) atomicAcquire(t *Thread, e *trace.Event) {
	if n := len(t.held); n > 0 && t.held[n-1].Lock&trace.AtomicLockBit != 0 {
		k.illformed++ // nested inside another atomic operation
	}
	t.held = append(t.held, Hold{e.Obj, e.ReadLock()})
}

// atomicRelease is the release of an atomic word's private lock under
// GoAtomics: the publication a store or read-modify-write left pending,
// after the operation's data access (publishAtomic).
func (k *Tracker) atomicRelease(t *Thread, e *trace.Event, clocks bool) {
	k.dropHold(t, e)
	if t.atomPub != nil && clocks { // the operation's data access is before its publication
		k.copyTo(t, t.atomPub)
		t.tick()
	}
	t.atomPub = nil
}

// GoAtomicBegin is Sync, under GoAtomics, of the first two of the four
// events an atomic operation with trace.FlagGoAtomic stands for
// (trace.GoAtomicEvents): the acquire of the word's private lock, which
// builds no edge and so is not pushed on t's held locks, and the
// operation's acquire from the word's clock; a store's publication waits
// for GoAtomicEnd. The caller handles the operation's data access in
// between, as an atomic one (what Thread.AtomicAccess says of it inside
// the lock). Nothing else of t's may come between the two calls.
func (k *Tracker) GoAtomicBegin(t *Thread, e *trace.Event) {
	if t.inSelect {
		t.inSelect = false
		k.dropPending(t)
	}
	if n := len(t.held); n > 0 && t.held[n-1].Lock&trace.AtomicLockBit != 0 {
		k.illformed++ // nested inside another atomic operation
	}
	if k.edges != NoEdges {
		switch e.Op {
		case trace.OpAtomicLoad:
			k.acquireFrom(t, objClock(&k.atomics, e.Obj)) // C_t ⊔= S_a
			t.refresh()
		case trace.OpAtomicStore:
			t.atomPub = objClock(&k.atomics, e.Obj) // S_a := C_t at GoAtomicEnd
		case trace.OpAtomicRMW:
			o := objClock(&k.atomics, e.Obj)
			k.acquireFrom(t, o)
			t.refresh()
			t.atomPub = o
		}
	}
	t.acc = t.epoch.Clock() // as Running does for the data access
}

// GoAtomicEnd is Sync of the release that ends an atomic operation begun
// by GoAtomicBegin: the publication of a store or read-modify-write.
func (k *Tracker) GoAtomicEnd(t *Thread) {
	if t.atomPub != nil {
		k.copyTo(t, t.atomPub)
		t.tick()
		t.atomPub = nil
	}
}
