package lockset

import (
	"github.com/racekit/racekit/detect/clock"
	"github.com/racekit/racekit/trace"
)

// tracker is what both detectors know of the goroutines: the shared
// clock.Tracker (goroutines, the locks each holds, and for hybrid the
// happens-before relation without lock edges), and for each goroutine the
// interned set of the locks it holds, with their modes, derived from the
// Tracker's holds after each acquire and release.
type tracker struct {
	k     clock.Tracker
	ls    locksets
	held  []uint32        // by clock.Thread.ID: the interned set of held locks; emptySet past the end
	owner []*clock.Thread // by clock.Thread.ID: whose set held is (IDs may be recycled)
}

func newTracker(edges clock.Edges) tracker {
	return tracker{k: clock.New(edges), ls: newLocksets()}
}

// step applies e's synchronization and returns the goroutine performing it.
func (t *tracker) step(e *trace.Event) *clock.Thread {
	g := t.k.Running(e)
	if g == nil {
		g = t.k.Start(e.G)
	}
	if e.Op.IsAccess() {
		return g
	}
	t.k.Sync(g, e)
	if e.Op == trace.OpAcquire || e.Op == trace.OpRelease {
		id := int(g.ID())
		for len(t.held) <= id {
			t.held = append(t.held, emptySet)
			t.owner = append(t.owner, nil)
		}
		if t.owner[id] != g { // a goroutine that took over the ID holds nothing yet
			t.owner[id], t.held[id] = g, emptySet
		}
		if held, write := g.Holds(e.Obj); held {
			t.held[id] = t.ls.add(t.held[id], e.Obj, write)
		} else {
			t.held[id] = t.ls.remove(t.held[id], e.Obj)
		}
	}
	return g
}

// lockset returns the interned set of the locks g holds.
func (t *tracker) lockset(g *clock.Thread) uint32 {
	if id := int(g.ID()); id < len(t.held) && t.owner[id] == g {
		return t.held[id]
	}
	return emptySet
}

// stats adds the goroutine and synchronization counters to m, and, when the
// Tracker keeps clocks (hybrid), the number of sync objects and atomic words.
func (t *tracker) stats(m map[string]int64) {
	c := t.k.Counters()
	m["events"] = c.Events
	m["illformed"] = c.IllFormed
	m["untraced"] = c.Untraced
	m["locksets"] = int64(t.ls.len())
	m["goroutines"] = c.Goroutines
	if t.k.Edges() != clock.NoEdges {
		m["syncobjs"] = c.SyncObjects
		m["atomics"] = c.AtomicWords
	}
}

// clearRange resets, through reset, the shadow state of every address that
// an Alloc event e makes fresh memory (an earlier object's accesses there
// never race with the new object's). It costs the smaller of the object's
// size and the number of addresses seen.
func clearRange(idx map[uint64]int32, e *trace.Event, reset func(i int32)) {
	lo, hi, ok := e.AllocRange()
	if !ok {
		return
	}
	if hi-lo <= uint64(len(idx)) {
		for a := lo; a < hi; a++ {
			if i, ok := idx[a]; ok {
				reset(i)
			}
		}
		return
	}
	for a, i := range idx {
		if a >= lo && a < hi {
			reset(i)
		}
	}
}
