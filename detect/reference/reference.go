// Package reference holds deliberately simple, obviously-correct race
// oracles used to test racekit's real detectors differentially. They build
// the happens-before graph of docs/semantics.md explicitly, one edge per
// release→acquire pair, compute each event's full set of predecessors as a
// bitset, and compare every pair of accesses: O(n²) time and memory, for
// traces of a few thousand events at most. They share no code with the
// vector-clock detectors they check.
package reference

import (
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// Race is a racing pair of accesses by event index, A < B.
type Race struct {
	A, B int
	Addr uint64
}

// Edges selects which synchronization creates happens-before edges.
type Edges struct {
	Locks bool // release → later acquire of the same lock
	// GoAtomics: atomics as Go's race detector orders them (a load or
	// read-modify-write after the latest store or read-modify-write of the
	// word, no edge from a load), and the lock private to an atomic word
	// (trace.AtomicLockBit) with no edge.
	GoAtomics bool
}

// HBRaces returns every pair of conflicting accesses unordered by the full
// happens-before relation (program order, fork/join, locks, sync objects,
// atomics as Go orders them, untraced-goroutine rule), but for two atomic
// accesses (those the Go front end records inside atomic operations on
// the word), which never race with each other.
func HBRaces(t *trace.Trace) []Race {
	pred := predecessors(t, Edges{Locks: true, GoAtomics: true})
	held := locksets(t)
	atomic := func(i int) bool {
		h := held[i]
		return len(h) > 0 && h[len(h)-1].lock == t.Events[i].Obj|trace.AtomicLockBit
	}
	return pairwise(t, func(a, b int) bool { return !pred[b].has(a) && !(atomic(a) && atomic(b)) })
}

// HybridRaces returns every pair of conflicting accesses with no common lock
// and unordered by happens-before without lock edges (O'Callahan–Choi).
func HybridRaces(t *trace.Trace) []Race {
	pred := predecessors(t, Edges{Locks: false})
	held := locksets(t)
	return pairwise(t, func(a, b int) bool {
		return !pred[b].has(a) && !commonLock(held[a], held[b])
	})
}

// LocksetRaces returns every pair of conflicting accesses by different
// goroutines with no common lock, ignoring all other synchronization.
func LocksetRaces(t *trace.Trace) []Race {
	held := locksets(t)
	return pairwise(t, func(a, b int) bool { return !commonLock(held[a], held[b]) })
}

// HBPairs, HybridPairs and LocksetPairs return the distinct site pairs of
// the corresponding races, sorted.
func HBPairs(t *trace.Trace) []finding.Pair      { return Pairs(t, HBRaces(t)) }
func HybridPairs(t *trace.Trace) []finding.Pair  { return Pairs(t, HybridRaces(t)) }
func LocksetPairs(t *trace.Trace) []finding.Pair { return Pairs(t, LocksetRaces(t)) }

// Pairs returns the distinct site pairs of rs, sorted.
func Pairs(t *trace.Trace, rs []Race) []finding.Pair {
	seen := map[finding.Pair]bool{}
	var ps []finding.Pair
	for _, r := range rs {
		p := finding.MakePair(t.Events[r.A].Site, t.Events[r.B].Site)
		if !seen[p] {
			seen[p] = true
			ps = append(ps, p)
		}
	}
	finding.SortPairs(ps)
	return ps
}

// pairwise applies races to every conflicting pair of accesses by different
// goroutines to one object: an Alloc of the address between them makes
// them accesses to two objects.
func pairwise(t *trace.Trace, races func(a, b int) bool) []Race {
	var out []Race
	evs := t.Events
	for b := range evs {
		eb := &evs[b]
		if !eb.Op.IsAccess() {
			continue
		}
		first := 0 // the first event after the last Alloc of eb's address
		for a := b - 1; a >= 0; a-- {
			if lo, hi, ok := evs[a].AllocRange(); ok && eb.Obj >= lo && eb.Obj < hi {
				first = a + 1
				break
			}
		}
		for a := first; a < b; a++ {
			ea := &evs[a]
			if !ea.Op.IsAccess() || ea.Obj != eb.Obj || ea.G == eb.G {
				continue
			}
			if ea.Op != trace.OpWrite && eb.Op != trace.OpWrite {
				continue
			}
			if races(a, b) {
				out = append(out, Race{A: a, B: b, Addr: eb.Obj})
			}
		}
	}
	return out
}

type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (s bitset) add(i int)      { s[i/64] |= 1 << (i % 64) }
func (s bitset) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s bitset) union(o bitset) {
	for i := range o {
		s[i] |= o[i]
	}
}

// predecessors returns, for each event, the set of events that happen
// before it (strictly).
func predecessors(t *trace.Trace, edges Edges) []bitset {
	evs := t.Events
	n := len(evs)
	pred := make([]bitset, n)
	lastOf := map[trace.GID]int{} // goroutine → index of its latest event
	forkOf := map[trace.GID]int{} // goroutine → index of the fork that created it
	started := map[trace.GID]bool{}
	var pubs []uint64
	if edges.GoAtomics {
		pubs = atomicPublications(t)
	}
	from := func(i, j int) { // edge j → i
		pred[i].add(j)
		pred[i].union(pred[j])
	}
	for i := range evs {
		e := &evs[i]
		pred[i] = newBitset(n)
		g := e.G
		if j, ok := lastOf[g]; ok {
			from(i, j) // program order
		} else if !started[g] {
			started[g] = true
			if f, ok := forkOf[g]; ok {
				from(i, f)
			} else {
				// Born in untraced code: after everything observed so far.
				for _, j := range lastOf {
					from(i, j)
				}
			}
		}
		switch e.Op {
		case trace.OpFork:
			c := e.Child()
			if _, seen := forkOf[c]; !seen && !started[c] {
				forkOf[c] = i
			}
		case trace.OpJoin:
			if j, ok := lastOf[e.Child()]; ok {
				from(i, j)
			}
		case trace.OpAcquire:
			if edges.Locks && !(edges.GoAtomics && e.Obj&trace.AtomicLockBit != 0) {
				for j := 0; j < i; j++ {
					r := &evs[j]
					// An exclusive release orders every later acquire; a
					// read-mode release orders only later exclusive ones.
					if r.Op == trace.OpRelease && r.Obj == e.Obj && (!r.ReadLock() || !e.ReadLock()) {
						from(i, j)
					}
				}
			}
		case trace.OpSyncAcquire:
			if isMessage(e) {
				for _, j := range messageSources(evs, i) {
					from(i, j)
				}
				break
			}
			for j := 0; j < i; j++ {
				if evs[j].Op == trace.OpSyncRelease && evs[j].Obj == e.Obj {
					from(i, j)
				}
			}
		case trace.OpAtomicLoad, trace.OpAtomicRMW:
			if edges.GoAtomics {
				for j := i - 1; j >= 0; j-- {
					if pubs[j] == e.Obj|pubMark {
						from(i, j) // the store it reads; earlier ones through it only if it joined them
						break
					}
				}
				break
			}
			for j := 0; j < i; j++ {
				r := &evs[j]
				if (r.Op == trace.OpAtomicStore || r.Op == trace.OpAtomicRMW) && r.Obj == e.Obj {
					from(i, j)
				}
			}
		}
		lastOf[g] = i
	}
	return pred
}

// pubMark tags the entries of atomicPublications (a word may be 0).
const pubMark = 1 << 63

// atomicPublications returns, per event, a|pubMark if the event publishes
// a store or read-modify-write of word a, else 0: the operation itself,
// or, when the Go front end recorded it inside the word's private lock,
// that lock's release (the data access between them is part of it).
func atomicPublications(t *trace.Trace) []uint64 {
	pubs := make([]uint64, len(t.Events))
	held := locksets(t)
	type key struct {
		g    trace.GID
		lock uint64
	}
	pending := map[key]bool{}
	for i := range t.Events {
		e := &t.Events[i]
		switch e.Op {
		case trace.OpAtomicStore, trace.OpAtomicRMW:
			if h := held[i]; len(h) > 0 && h[len(h)-1].lock == e.Obj|trace.AtomicLockBit {
				pending[key{e.G, e.Obj | trace.AtomicLockBit}] = true
			} else {
				pubs[i] = e.Obj | pubMark
			}
		case trace.OpRelease:
			if k := (key{e.G, e.Obj}); pending[k] {
				delete(pending, k)
				pubs[i] = e.Obj&^trace.AtomicLockBit | pubMark
			}
		}
	}
	return pubs
}

// heldLock is a lock held at an access, with its mode.
type heldLock struct {
	lock  uint64
	write bool
}

// locksets returns the locks each goroutine holds at each event.
func locksets(t *trace.Trace) [][]heldLock {
	cur := map[trace.GID][]heldLock{}
	out := make([][]heldLock, len(t.Events))
	for i := range t.Events {
		e := &t.Events[i]
		switch e.Op {
		case trace.OpAcquire:
			cur[e.G] = append(cur[e.G], heldLock{e.Obj, !e.ReadLock()})
		case trace.OpRelease:
			hs := cur[e.G]
			for k := len(hs) - 1; k >= 0; k-- {
				if hs[k].lock == e.Obj {
					cur[e.G] = append(hs[:k:k], hs[k+1:]...)
					break
				}
			}
		}
		out[i] = append([]heldLock(nil), cur[e.G]...)
	}
	return out
}

// commonLock reports whether some lock is held at both accesses, in write
// mode by at least one of them.
func commonLock(a, b []heldLock) bool {
	for _, x := range a {
		for _, y := range b {
			if x.lock == y.lock && (x.write || y.write) {
				return true
			}
		}
	}
	return false
}
