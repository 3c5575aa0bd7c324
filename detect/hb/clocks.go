package hb

import (
	"github.com/racekit/racekit/detect/vc"
	"github.com/racekit/racekit/trace"
)

// denseGIDs bounds the goroutine IDs looked up through a slice; larger IDs
// (only seen in ill-formed or hostile input: the trace model assigns GIDs
// densely) go through a map so that they cannot make the detector allocate
// a table the size of the ID.
const denseGIDs = 1 << 16

// thread is one goroutine's happens-before state.
//
// Clocks and epochs are indexed by tid, a dense index in order of first
// appearance, never by the trace's GID, so that a stray huge GID costs one
// clock entry rather than billions.
type thread struct {
	tid     uint32
	gid     trace.GID
	c       vc.VectorClock // C_t
	epoch   vc.Epoch       // E_t = C_t(t)@t, kept in step with c
	started bool           // has had an event of its own
	forked  bool           // was the child of a fork before it started
	held    []heldLock     // locks held, in acquisition order
}

// refresh recomputes the cached epoch after c changed.
func (t *thread) refresh() { t.epoch = vc.EpochOf(t.c, trace.GID(t.tid)) }

// tick starts a new epoch of t (C_t[t]++). Every operation that publishes
// C_t ticks afterwards, so no other clock ever holds t's current epoch:
// FastTrack's same-epoch rules rely on it.
func (t *thread) tick() {
	t.c.Inc(trace.GID(t.tid))
	t.refresh()
}

type heldLock struct {
	l    *lockState
	read bool
}

// lockState is a lock's clocks: W_L, published by exclusive releases, and
// R_L, the join of the read-mode releases since the last exclusive one.
type lockState struct {
	w, r    vc.VectorClock
	holder  *thread // exclusive holder, for well-formedness checks only
	readers int32   // read-mode holders
}

// clocks is the synchronization half shared by Detector and FastTrack: the
// goroutine, lock, sync-object and atomic clocks and the edges of
// docs/semantics.md. The access half (shadow memory) is each detector's own.
type clocks struct {
	threads []*thread // by tid
	dense   []*thread // by GID, for GID < denseGIDs
	running []*thread // by GID, for GID < denseGIDs: the started ones
	sparse  map[trace.GID]*thread
	locks   shadowTable[*lockState]
	syncs   shadowTable[*vc.VectorClock] // S_o of snd/rcv objects
	atomics shadowTable[*vc.VectorClock] // S_a of atomic words

	events, illformed int64
}

func newClocks() clocks { return clocks{} }

// lookup returns g's thread, or nil if g was never seen.
func (k *clocks) lookup(g trace.GID) *thread {
	if int(g) < len(k.dense) {
		return k.dense[g]
	}
	return k.sparse[g]
}

// get returns g's thread, creating it (with the bottom clock) if new.
func (k *clocks) get(g trace.GID) *thread {
	if t := k.lookup(g); t != nil {
		return t
	}
	t := &thread{tid: uint32(len(k.threads)), gid: g}
	k.threads = append(k.threads, t)
	if g < denseGIDs {
		if int(g) >= len(k.dense) {
			n := max(int(g)+1, 2*len(k.dense), 8)
			k.dense = append(k.dense, make([]*thread, n-len(k.dense))...)
			k.running = append(k.running, make([]*thread, n-len(k.running))...)
		}
		k.dense[g] = t
	} else {
		if k.sparse == nil {
			k.sparse = make(map[trace.GID]*thread)
		}
		k.sparse[g] = t
	}
	return t
}

// start returns the thread performing an event of g when it is not in
// running (the detectors' fast path covers those), handling g's first
// event. A goroutine forked earlier already has its clock; one never
// forked was born in untraced code and is ordered after every event
// observed so far: C_u ⊔= C_t for every started t, and each such t ticks
// so that its later events are not ordered before u.
//
// Every clock's entry for t is at most C_t(t) (entries only flow out of
// C_t, which never decreases), so that join is just C_u(t) := C_t(t) for
// each started t: linear, not quadratic, in the number of goroutines.
// (Entries of goroutines not started yet are left out: they are below
// the epoch of such a goroutine's first event, so they order nothing.)
func (k *clocks) start(g trace.GID) *thread {
	u := k.get(g)
	if u.started {
		return u
	}
	u.started = true
	if g < denseGIDs {
		k.running[g] = u
	}
	if !u.forked {
		for _, t := range k.threads {
			if t != u && t.started {
				if c := t.c.Get(trace.GID(t.tid)); c > u.c.Get(trace.GID(t.tid)) {
					u.c.Set(trace.GID(t.tid), c)
				}
				t.tick()
			}
		}
	}
	if u.c.Get(trace.GID(u.tid)) < 1 {
		u.c.Set(trace.GID(u.tid), 1)
	}
	u.refresh()
	return u
}

func (k *clocks) lock(obj uint64) *lockState {
	l := k.locks.get(obj)
	if *l == nil {
		*l = &lockState{}
	}
	return *l
}

// objClock returns the clock of a sync object or atomic word, creating it
// (⊥) if new.
func objClock(m *shadowTable[*vc.VectorClock], obj uint64) *vc.VectorClock {
	s := m.get(obj)
	if *s == nil {
		*s = new(vc.VectorClock)
	}
	return *s
}

// sync applies the happens-before effect of every event that is not a data
// access (docs/semantics.md). Ill-formed events still apply their clock
// effect and are counted.
func (k *clocks) sync(t *thread, e *trace.Event) {
	switch e.Op {
	case trace.OpAcquire:
		l := k.lock(e.Obj)
		if e.ReadLock() {
			if l.holder != nil {
				k.illformed++
			}
			l.readers++
			t.c.Join(l.w) // C_t ⊔= W_L
		} else {
			if l.holder != nil || l.readers > 0 {
				k.illformed++
			}
			l.holder = t
			t.c.Join(l.w) // C_t ⊔= W_L ⊔ R_L
			t.c.Join(l.r)
		}
		t.held = append(t.held, heldLock{l, e.ReadLock()})
		t.refresh()

	case trace.OpRelease:
		l := k.lock(e.Obj)
		read := e.ReadLock()
		if !t.drop(l, read) {
			k.illformed++ // not held by t in this mode: publish anyway
		} else if read {
			l.readers--
		} else {
			l.holder = nil
		}
		if read {
			l.r.Join(t.c) // R_L ⊔= C_t
		} else {
			l.w.Copy(t.c) // W_L := C_t; R_L := ⊥
			l.r = l.r[:0]
		}
		t.tick()

	case trace.OpSyncRelease:
		objClock(&k.syncs, e.Obj).Join(t.c) // S_o ⊔= C_t
		t.tick()

	case trace.OpSyncAcquire:
		t.c.Join(*objClock(&k.syncs, e.Obj)) // C_t ⊔= S_o
		t.refresh()

	case trace.OpAtomicStore:
		objClock(&k.atomics, e.Obj).Join(t.c)
		t.tick()

	case trace.OpAtomicLoad:
		t.c.Join(*objClock(&k.atomics, e.Obj))
		t.refresh()

	case trace.OpAtomicRMW:
		s := objClock(&k.atomics, e.Obj)
		t.c.Join(*s)
		s.Join(t.c)
		t.tick()

	case trace.OpFork:
		if e.Obj > 0xFFFFFFFF {
			k.illformed++
			return
		}
		u := k.get(e.Child())
		if u == t || u.started || u.forked {
			k.illformed++ // self-fork, or a second fork: apply the edge anyway
		}
		if !u.started {
			u.forked = true
		}
		u.c.Join(t.c) // C_u ⊔= C_t; C_u[u] = max(C_u[u], 1)
		if u.c.Get(trace.GID(u.tid)) < 1 {
			u.c.Set(trace.GID(u.tid), 1)
		}
		u.refresh()
		t.tick()

	case trace.OpJoin:
		var u *thread
		if e.Obj <= 0xFFFFFFFF {
			u = k.lookup(e.Child())
		}
		if u == nil || u == t {
			k.illformed++ // joining an unknown goroutine joins ⊥
			return
		}
		t.c.Join(u.c) // C_t ⊔= C_u
		t.refresh()
		// u's later events (only in an ill-formed trace) are not ordered
		// before t: start a new epoch of u, as FastTrack's join rule does.
		u.tick()

	case trace.OpBegin, trace.OpEnd, trace.OpMethodBegin, trace.OpMethodEnd,
		trace.OpFuncEnter, trace.OpFuncExit, trace.OpRegionBegin, trace.OpRegionEnd:
		// No happens-before effect (BarrierPairs are RDIT's business).

	default:
		k.illformed++ // invalid or unknown op
	}
}

// drop removes the most recent hold of l in the given mode, reporting
// whether there was one.
func (t *thread) drop(l *lockState, read bool) bool {
	for i := len(t.held) - 1; i >= 0; i-- {
		if h := t.held[i]; h.l == l && h.read == read {
			t.held = append(t.held[:i], t.held[i+1:]...)
			return true
		}
	}
	return false
}

// counters adds the synchronization counters to m.
func (k *clocks) counters(m map[string]int64) {
	m["events"] = k.events
	m["illformed"] = k.illformed
	m["goroutines"] = int64(len(k.threads))
	m["locks"] = int64(k.locks.len())
	m["sync_objects"] = int64(k.syncs.len())
	m["atomic_words"] = int64(k.atomics.len())
}
