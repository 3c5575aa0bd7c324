// Package clock is the synchronization half of every racekit detector: the
// one implementation of the happens-before rules of docs/semantics.md and of
// the goroutine and lock bookkeeping they rest on. A Tracker follows the
// goroutines of one event stream (their vector clocks, the locks they hold),
// the clocks of locks, sync objects and atomic words, the fork/join edges and
// the rule for goroutines born in untraced code; it counts the ill-formed
// events it tolerates. The access half (shadow memory and the race check) is
// each detector's own.
//
// How much of the relation a Tracker builds is its Edges:
//
//   - AllEdges, for the precise detectors hb and fasttrack: every edge of the
//     table's happens-before column, lock release→acquire included;
//   - NoLockEdges, for hybrid: the same without lock edges (fork/join,
//     snd/rcv, atomics and the untraced-goroutine rule);
//   - NoEdges, for Eraser: no clocks at all, only goroutines and the locks
//     they hold.
//
// Goroutines are identified inside a Tracker by a dense ID (Thread.ID), in
// order of first appearance (as the child of a fork or by an event of their
// own); vector clocks and epochs (package vc) are indexed by it, never by the
// trace's GID, so that a stray huge GID costs one clock entry, not billions.
//
// # Ill-formed events
//
// A Tracker never panics. Each of these events applies the clock effect the
// table gives it where there is one (a release still publishes C_t; a join
// of an unknown goroutine joins ⊥), and is counted once in
// Counters.IllFormed:
//
//   - an acquire of a lock the goroutine already holds (Go's locks are not
//     reentrant), or that another goroutine holds in a conflicting mode (any
//     holder for an exclusive acquire, an exclusive holder for a read-mode
//     one);
//   - a release of a lock the goroutine does not hold in that mode: a hold
//     in the other mode is dropped instead; with none, nothing is dropped;
//   - a fork of the forking goroutine itself, of a goroutine already forked
//     or already running (the edge is applied anyway), or of a child ID
//     beyond 32 bits (ignored);
//   - a join of the joining goroutine itself, of a goroutine never seen, or
//     of a child ID beyond 32 bits (ignored);
//   - an event of a goroutine after a join of it;
//   - an event whose op is invalid or unknown (ignored).
package clock

import (
	"github.com/racekit/racekit/detect/shadow"
	"github.com/racekit/racekit/detect/vc"
	"github.com/racekit/racekit/trace"
)

// Edges says which happens-before edges a Tracker builds.
type Edges uint8

const (
	// AllEdges builds every edge of docs/semantics.md (hb, fasttrack).
	AllEdges Edges = iota
	// NoLockEdges leaves out lock release→acquire edges (hybrid): acquires
	// and releases only change what a goroutine holds.
	NoLockEdges
	// NoEdges keeps no clocks (Eraser): a Tracker then follows only
	// goroutines and the locks they hold, and every clock stays ⊥.
	NoEdges
)

// denseGIDs bounds the goroutine IDs looked up through a slice; larger IDs
// (only seen in ill-formed or hostile input: the trace model assigns GIDs
// densely) go through a map so that they cannot make a Tracker allocate a
// table the size of the ID.
const denseGIDs = 1 << 16

// Thread is one goroutine's state.
type Thread struct {
	id      uint32
	gid     trace.GID
	c       vc.VectorClock // C_t, indexed by ID
	epoch   vc.Epoch       // C_t(t)@t, kept in step with c
	started bool           // has had an event of its own
	forked  bool           // was the child of a fork before it started
	joined  bool           // a join of it was seen
	held    []Hold         // locks held, in acquisition order

	pendOn   []*chanState // channels it has begun operations on (chan.go)
	inSelect bool         // its last sync event begun a channel operation
}

// Hold is one acquisition of a lock not released yet.
type Hold struct {
	Lock uint64
	Read bool // acquired in read (shared) mode
}

// ID is the goroutine's dense index in its Tracker: clocks and epochs are
// indexed by it.
func (t *Thread) ID() uint32 { return t.id }

// GID is the goroutine's ID in the trace.
func (t *Thread) GID() trace.GID { return t.gid }

// Clock is C_t, indexed by Thread.ID. It is the Tracker's own: read it
// before the next event, never modify it.
func (t *Thread) Clock() vc.VectorClock { return t.c }

// Epoch is t's current epoch, C_t(t)@t with t its ID: every access of t
// until its next tick happens at it.
func (t *Thread) Epoch() vc.Epoch { return t.epoch }

// Held lists the locks t holds, in acquisition order (a lock acquired again
// while held, which is ill-formed, appears once per acquire). The slice is
// the Tracker's own.
func (t *Thread) Held() []Hold { return t.held }

// Holds reports whether t holds lock, and whether in write mode (by at
// least one of its holds of it).
func (t *Thread) Holds(lock uint64) (held, write bool) {
	for _, h := range t.held {
		if h.Lock == lock {
			held = true
			write = write || !h.Read
		}
	}
	return held, write
}

// refresh recomputes the cached epoch after c changed.
func (t *Thread) refresh() { t.epoch = vc.EpochOf(t.c, trace.GID(t.id)) }

// tick starts a new epoch of t (C_t[t]++). Every operation that publishes
// C_t ticks afterwards, so no other clock ever holds t's current epoch:
// FastTrack's same-epoch rules rely on it.
func (t *Thread) tick() {
	t.c.Inc(trace.GID(t.id))
	t.refresh()
}

// holding reports whether t holds lock.
func (t *Thread) holding(lock uint64) bool {
	for _, h := range t.held {
		if h.Lock == lock {
			return true
		}
	}
	return false
}

// find returns the index of t's most recent hold of lock in the given mode,
// or -1.
func (t *Thread) find(lock uint64, read bool) int {
	for i := len(t.held) - 1; i >= 0; i-- {
		if h := t.held[i]; h.Lock == lock && h.Read == read {
			return i
		}
	}
	return -1
}

// lockState is a lock's clocks, W_L (published by exclusive releases) and
// R_L (the join of the read-mode releases since the last exclusive one),
// and how many holds of it all goroutines have, for the well-formedness
// checks: a goroutine holding the lock is one of them.
type lockState struct {
	w, r             vc.VectorClock
	writers, readers int32 // exclusive and read-mode holds
}

// Tracker follows one event stream's goroutines, locks, sync objects and
// atomic words. Create it with New; feed it every event in trace order:
// Running (and Start) for each, then Sync for each that is not a data
// access.
type Tracker struct {
	edges   Edges
	threads []*Thread // by ID
	dense   []*Thread // by GID, for GID < denseGIDs
	running []*Thread // by GID, for GID < denseGIDs: started and not joined
	sparse  map[trace.GID]*Thread
	locks   shadow.Table[*lockState]
	syncs   shadow.Table[*vc.VectorClock] // S_o of snd/rcv objects
	atomics shadow.Table[*vc.VectorClock] // S_a of atomic words
	chans   shadow.Table[*chanState]      // channels with message events (chan.go)
	in      vc.VectorClock                // Incoming
	free    []vc.VectorClock              // reusable clocks of completed operations

	events, illformed, untraced int64
}

// New returns an empty Tracker building the given edges.
func New(edges Edges) Tracker { return Tracker{edges: edges} }

// Edges returns the edges the Tracker builds.
func (k *Tracker) Edges() Edges { return k.edges }

// Running accounts for event e and returns the goroutine performing it if
// that one is running (started, not joined, with a GID below 1<<16), or nil:
// the caller then calls Start(e.G). Every event goes through Running once.
// The two are apart so that Running, the per-event fast path (one slice
// load), inlines:
//
//	t := k.Running(e)
//	if t == nil {
//		t = k.Start(e.G)
//	}
func (k *Tracker) Running(e *trace.Event) *Thread {
	k.events++
	if int(e.G) < len(k.running) {
		return k.running[e.G]
	}
	return nil
}

// Thread returns the goroutine with the given dense ID, which must be one
// the Tracker handed out.
func (k *Tracker) Thread(id uint32) *Thread { return k.threads[id] }

// Lookup returns the goroutine with trace ID g, or nil if g was never seen.
func (k *Tracker) Lookup(g trace.GID) *Thread {
	if int(g) < len(k.dense) {
		return k.dense[g]
	}
	return k.sparse[g]
}

// get returns g's thread, creating it (with the bottom clock) if new.
func (k *Tracker) get(g trace.GID) *Thread {
	if t := k.Lookup(g); t != nil {
		return t
	}
	t := &Thread{id: uint32(len(k.threads)), gid: g}
	k.threads = append(k.threads, t)
	if g < denseGIDs {
		if int(g) >= len(k.dense) {
			n := max(int(g)+1, 2*len(k.dense), 8)
			k.dense = append(k.dense, make([]*Thread, n-len(k.dense))...)
			k.running = append(k.running, make([]*Thread, n-len(k.running))...)
		}
		k.dense[g] = t
	} else {
		if k.sparse == nil {
			k.sparse = make(map[trace.GID]*Thread)
		}
		k.sparse[g] = t
	}
	return t
}

// Start returns the goroutine performing an event of g that Running did
// not return, handling g's first event. A goroutine
// forked earlier already has its clock; one never forked was born in
// untraced code and is ordered after every event observed so far:
// C_u ⊔= C_t for every started t, and each such t ticks so that its later
// events are not ordered before u.
//
// Every clock's entry for t is at most C_t(t) (entries only flow out of
// C_t, which never decreases), so that join is just C_u(t) := C_t(t) for
// each started t: linear, not quadratic, in the number of goroutines.
// (Entries of goroutines not started yet are left out: they are below
// the epoch of such a goroutine's first event, so they order nothing.)
func (k *Tracker) Start(g trace.GID) *Thread {
	u := k.get(g)
	if u.started {
		if u.joined {
			k.illformed++ // an event after its join
		}
		return u // a huge GID, or a joined goroutine: never running
	}
	u.started = true
	if g < denseGIDs && !u.joined {
		k.running[g] = u
	}
	if !u.forked {
		k.untraced++
		if k.edges != NoEdges {
			for _, t := range k.threads {
				if t != u && t.started {
					if c := t.c.Get(trace.GID(t.id)); c > u.c.Get(trace.GID(t.id)) {
						u.c.Set(trace.GID(t.id), c)
					}
					t.tick()
				}
			}
		}
	}
	if k.edges != NoEdges {
		if u.c.Get(trace.GID(u.id)) < 1 {
			u.c.Set(trace.GID(u.id), 1)
		}
		u.refresh()
	}
	return u
}

func (k *Tracker) lock(obj uint64) *lockState {
	l := k.locks.Get(obj)
	if *l == nil {
		*l = &lockState{}
	}
	return *l
}

// objClock returns the clock of a sync object or atomic word, creating it
// (⊥) if new.
func objClock(m *shadow.Table[*vc.VectorClock], obj uint64) *vc.VectorClock {
	s := m.Get(obj)
	if *s == nil {
		*s = new(vc.VectorClock)
	}
	return *s
}

// Sync applies the effect of e, an event of t (as Running or Start
// returned it) that is not a data access: the edges of docs/semantics.md
// that the Tracker builds, and the locks t holds. Ill-formed events are
// tolerated and counted (see the package comment).
func (k *Tracker) Sync(t *Thread, e *trace.Event) {
	clocks := k.edges != NoEdges
	if e.Flags&trace.FlagMessage != 0 && Message(e) {
		if clocks {
			k.message(t, e)
		}
		return
	}
	if t.inSelect {
		t.inSelect = false
		k.dropPending(t)
	}
	switch e.Op {
	case trace.OpAcquire:
		l, read := k.lock(e.Obj), e.ReadLock()
		switch {
		case l.writers > 0 || (!read && l.readers > 0):
			k.illformed++ // held in a conflicting mode (by t: nested)
		case l.readers > 0 && t.holding(e.Obj):
			k.illformed++ // nested read-mode acquire
		}
		if read {
			l.readers++
		} else {
			l.writers++
		}
		t.held = append(t.held, Hold{e.Obj, read})
		if k.edges == AllEdges {
			t.c.Join(l.w) // C_t ⊔= W_L, and ⊔= R_L if exclusive
			if !read {
				t.c.Join(l.r)
			}
			t.refresh()
		}

	case trace.OpRelease:
		l, read := k.lock(e.Obj), e.ReadLock()
		i := t.find(e.Obj, read)
		if i < 0 {
			k.illformed++ // not held in this mode: drop a hold in the other one
			i = t.find(e.Obj, !read)
		}
		if i >= 0 {
			if t.held[i].Read {
				l.readers--
			} else {
				l.writers--
			}
			if n := len(t.held) - 1; i == n { // the usual, last-in first-out
				t.held = t.held[:n]
			} else {
				t.held = append(t.held[:i], t.held[i+1:]...)
			}
		}
		if k.edges == AllEdges { // held or not, the release publishes C_t
			if read {
				l.r.Join(t.c) // R_L ⊔= C_t
			} else {
				l.w.Copy(t.c) // W_L := C_t; R_L := ⊥
				l.r = l.r[:0]
			}
			t.tick()
		}

	case trace.OpSyncRelease:
		if clocks {
			objClock(&k.syncs, e.Obj).Join(t.c) // S_o ⊔= C_t
			t.tick()
		}

	case trace.OpSyncAcquire:
		if clocks {
			t.c.Join(*objClock(&k.syncs, e.Obj)) // C_t ⊔= S_o
			t.refresh()
		}

	case trace.OpAtomicStore:
		if clocks {
			objClock(&k.atomics, e.Obj).Join(t.c) // S_a ⊔= C_t
			t.tick()
		}

	case trace.OpAtomicLoad:
		if clocks {
			t.c.Join(*objClock(&k.atomics, e.Obj)) // C_t ⊔= S_a
			t.refresh()
		}

	case trace.OpAtomicRMW:
		if clocks {
			s := objClock(&k.atomics, e.Obj)
			t.c.Join(*s) // C_t ⊔= S_a; S_a ⊔= C_t
			s.Join(t.c)
			t.tick()
		}

	case trace.OpFork:
		k.fork(t, e.Obj)

	case trace.OpJoin:
		k.join(t, e.Obj)

	case trace.OpAlloc:
		// A channel made at a reused address numbers its messages from 1
		// again (rt counts per channel object): the message state of the
		// one that was there is forgotten, or its message k would stand
		// for the new one's. Lock, sync-object and atomic clocks at a
		// reused address are kept: that can only add edges, hiding a
		// race, never inventing one. The shadow memory is the detector's.
		if lo, _, ok := e.AllocRange(); ok {
			if s := k.chans.Lookup(lo); s != nil {
				*s = nil
			}
		}

	case trace.OpRead, trace.OpWrite, trace.OpBegin, trace.OpEnd,
		trace.OpMethodBegin, trace.OpMethodEnd,
		trace.OpFuncEnter, trace.OpFuncExit, trace.OpRegionBegin, trace.OpRegionEnd:
		// No synchronization (BarrierPairs are RDIT's business; accesses
		// are the detector's).

	default:
		k.illformed++ // invalid or unknown op
	}
}

// fork: C_u ⊔= C_t; C_u[u] = max(C_u[u], 1); C_t[t]++.
func (k *Tracker) fork(t *Thread, child uint64) {
	if child > 0xFFFFFFFF {
		k.illformed++
		return
	}
	u := k.get(trace.GID(child))
	if u == t || u.started || u.forked {
		k.illformed++ // self-fork, or a second fork: apply the edge anyway
	}
	if !u.started {
		u.forked = true
	}
	if k.edges == NoEdges {
		return
	}
	u.c.Join(t.c)
	if u.c.Get(trace.GID(u.id)) < 1 {
		u.c.Set(trace.GID(u.id), 1)
	}
	u.refresh()
	t.tick()
}

// join: C_t ⊔= C_u; C_u[u]++.
func (k *Tracker) join(t *Thread, child uint64) {
	var u *Thread
	if child <= 0xFFFFFFFF {
		u = k.Lookup(trace.GID(child))
	}
	if u == nil || u == t {
		k.illformed++ // joining an unknown goroutine joins ⊥
		return
	}
	u.joined = true
	if int(u.gid) < len(k.running) {
		k.running[u.gid] = nil // its later events go through Start, which counts them
	}
	if k.edges == NoEdges {
		return
	}
	t.c.Join(u.c)
	t.refresh()
	// u's later events (only in an ill-formed trace) are not ordered
	// before t: start a new epoch of u, as FastTrack's join rule does.
	u.tick()
}

// Counters are a Tracker's counts so far.
type Counters struct {
	Events      int64 // events passed to Running
	IllFormed   int64 // events tolerated (see the package comment)
	Untraced    int64 // goroutines first seen without a fork (born in untraced code)
	Goroutines  int64 // goroutines seen
	Locks       int64 // locks acquired or released
	SyncObjects int64 // snd/rcv objects with a clock (none under NoEdges)
	AtomicWords int64 // atomic words with a clock (none under NoEdges)
}

// Counters returns the Tracker's counts.
func (k *Tracker) Counters() Counters {
	return Counters{
		Events:      k.events,
		IllFormed:   k.illformed,
		Untraced:    k.untraced,
		Goroutines:  int64(len(k.threads)),
		Locks:       int64(k.locks.Len()),
		SyncObjects: int64(k.syncs.Len()),
		AtomicWords: int64(k.atomics.Len()),
	}
}
