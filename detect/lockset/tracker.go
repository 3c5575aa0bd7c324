package lockset

import (
	"slices"

	"github.com/racekit/racekit/detect/vc"
	"github.com/racekit/racekit/trace"
)

// held is one lock a goroutine holds; depth counts nested acquires (each
// one past the first is ill-formed).
type held struct {
	lock  uint64
	write bool
	depth int32
}

// gstate is what both detectors know of one goroutine.
type gstate struct {
	gid     trace.GID
	held    []held
	ls      uint32         // interned set of held locks with modes
	clock   vc.VectorClock // indexed by tid, not GID
	started bool           // has performed an event
	forked  bool           // a fork of it was seen
	joined  bool           // a join of it was seen
}

// denseGIDs bounds the goroutine IDs looked up through a slice; larger ones
// (only in ill-formed input: GIDs are assigned densely) go through a map, so
// that a stray huge GID costs one table entry, not a table its size.
const denseGIDs = 1 << 16

// tid is a goroutine's index in the tracker, in order of first appearance;
// vector clocks are indexed by it.
type tid = trace.GID

// tracker follows goroutines and the locks they hold; with clocks set it
// also keeps hybrid's happens-before relation (fork/join, messages,
// atomics, untraced goroutines; no lock edges).
type tracker struct {
	clocks    bool
	gs        []gstate            // by tid
	dense     []int32             // GID -> tid+1 (0: unseen), for GID < denseGIDs
	sparse    map[trace.GID]int32 // GID -> tid+1 beyond
	ls        locksets            //
	syncIdx   map[uint64]int32    // snd/rcv object -> index in syncClocks (S_o)
	atomIdx   map[uint64]int32    // atomic word -> index in syncClocks (S_a)
	syncs     []vc.VectorClock    //
	events    int64
	illformed int64
	untraced  int64
}

func newTracker(clocks bool) tracker {
	t := tracker{clocks: clocks, ls: newLocksets()}
	if clocks {
		t.syncIdx = make(map[uint64]int32)
		t.atomIdx = make(map[uint64]int32)
	}
	return t
}

// lookup returns g's tid, or false if g was never seen (neither run nor
// forked).
func (t *tracker) lookup(g trace.GID) (tid, bool) {
	var i int32
	if g < denseGIDs {
		if int(g) < len(t.dense) {
			i = t.dense[g]
		}
	} else {
		i = t.sparse[g]
	}
	return tid(i - 1), i != 0
}

// get returns g's tid, adding g if new.
func (t *tracker) get(g trace.GID) tid {
	if id, ok := t.lookup(g); ok {
		return id
	}
	id := tid(len(t.gs))
	t.gs = append(t.gs, gstate{gid: g})
	if g < denseGIDs {
		if int(g) >= len(t.dense) {
			t.dense = append(t.dense, make([]int32, int(g)+1-len(t.dense))...)
		}
		t.dense[g] = int32(id) + 1
	} else {
		if t.sparse == nil {
			t.sparse = make(map[trace.GID]int32)
		}
		t.sparse[g] = int32(id) + 1
	}
	return id
}

// step does the bookkeeping every event shares (first appearance of a
// goroutine, lock and ordering ops) and returns the tid of the goroutine
// performing e.
func (t *tracker) step(e *trace.Event) tid {
	t.events++
	id := t.get(e.G)
	g := &t.gs[id]
	if !g.started {
		t.start(id)
	} else if g.joined {
		t.illformed++ // an event after its join
	}
	switch e.Op {
	case trace.OpAcquire:
		t.acquire(g, e.Obj, !e.ReadLock())
	case trace.OpRelease:
		t.release(g, e.Obj, !e.ReadLock())
	case trace.OpFork:
		t.fork(id, e.Child())
	case trace.OpJoin:
		t.join(id, e.Child())
	}
	if !t.clocks {
		return id
	}
	switch e.Op {
	case trace.OpSyncRelease:
		t.publish(id, t.syncClock(t.syncIdx, e.Obj))
	case trace.OpSyncAcquire:
		t.subscribe(id, t.syncIdx, e.Obj)
	case trace.OpAtomicStore:
		t.publish(id, t.syncClock(t.atomIdx, e.Obj))
	case trace.OpAtomicLoad:
		t.subscribe(id, t.atomIdx, e.Obj)
	case trace.OpAtomicRMW:
		t.subscribe(id, t.atomIdx, e.Obj)
		t.publish(id, t.syncClock(t.atomIdx, e.Obj))
	}
	return id
}

// start handles the first event of goroutine id. One never forked was born
// in untraced code: it is ordered after every event observed so far, as if
// each goroutine seen so far had forked it (so each one's own clock moves
// on, leaving its later events unordered with the newcomer).
func (t *tracker) start(id tid) {
	g := &t.gs[id]
	g.started = true
	if g.forked {
		return
	}
	t.untraced++
	if !t.clocks {
		return
	}
	for i := range t.gs {
		u := &t.gs[i]
		if tid(i) == id || !(u.started || u.forked) {
			continue
		}
		g.clock.Join(u.clock)
		u.clock.Inc(tid(i))
	}
	if g.clock.Get(id) == 0 {
		g.clock.Set(id, 1)
	}
}

func (t *tracker) acquire(g *gstate, lock uint64, write bool) {
	for i := range g.held {
		h := &g.held[i]
		if h.lock != lock {
			continue
		}
		// Nested acquire of a lock already held: ill-formed (Go's locks
		// are not reentrant). Keep it held, in write mode if either
		// acquire was, until the matching number of releases.
		t.illformed++
		h.depth++
		if write && !h.write {
			h.write = true
			g.ls = t.ls.add(g.ls, lock, true)
		}
		return
	}
	g.held = append(g.held, held{lock: lock, write: write, depth: 1})
	g.ls = t.ls.add(g.ls, lock, write)
}

func (t *tracker) release(g *gstate, lock uint64, write bool) {
	for i := range g.held {
		h := &g.held[i]
		if h.lock != lock {
			continue
		}
		if h.write != write && h.depth == 1 {
			t.illformed++ // RUnlock of a write-held lock, or the reverse
		}
		h.depth--
		if h.depth > 0 {
			return
		}
		g.held = slices.Delete(g.held, i, i+1)
		g.ls = t.ls.remove(g.ls, lock)
		return
	}
	t.illformed++ // release of a lock not held by this goroutine
}

// fork: C_c ⊔= C_t; C_c[c] = max(C_c[c], 1); C_t[t]++.
func (t *tracker) fork(id tid, child trace.GID) {
	cid := t.get(child) // may grow t.gs: index it afterwards
	c := &t.gs[cid]
	if c.forked || c.started {
		t.illformed++ // a second fork, or a fork of a running goroutine
	}
	c.forked = true
	if !t.clocks || cid == id {
		return
	}
	g := &t.gs[id]
	c.clock.Join(g.clock)
	if c.clock.Get(cid) == 0 {
		c.clock.Set(cid, 1)
	}
	g.clock.Inc(id)
}

// join: C_t ⊔= C_c; a join of a goroutine never seen joins ⊥.
func (t *tracker) join(id tid, child trace.GID) {
	cid, ok := t.lookup(child)
	if !ok {
		t.illformed++
		return
	}
	c := &t.gs[cid]
	c.joined = true
	if t.clocks && cid != id {
		t.gs[id].clock.Join(c.clock)
	}
}

func (t *tracker) syncClock(idx map[uint64]int32, obj uint64) *vc.VectorClock {
	i, ok := idx[obj]
	if !ok {
		i = int32(len(t.syncs))
		idx[obj] = i
		t.syncs = append(t.syncs, nil)
	}
	return &t.syncs[i]
}

// publish is a release on an object whose clock is s: S ⊔= C_t; C_t[t]++.
func (t *tracker) publish(id tid, s *vc.VectorClock) {
	g := &t.gs[id]
	s.Join(g.clock)
	g.clock.Inc(id)
}

// subscribe is an acquire on obj: C_t ⊔= S_obj.
func (t *tracker) subscribe(id tid, idx map[uint64]int32, obj uint64) {
	if i, ok := idx[obj]; ok {
		t.gs[id].clock.Join(t.syncs[i])
	}
}

func (t *tracker) stats(m map[string]int64) {
	m["events"] = t.events
	m["illformed"] = t.illformed
	m["untraced"] = t.untraced
	m["locksets"] = int64(t.ls.len())
	m["goroutines"] = int64(len(t.gs))
	if t.clocks {
		m["syncobjs"] = int64(len(t.syncIdx))
		m["atomics"] = int64(len(t.atomIdx))
	}
}
