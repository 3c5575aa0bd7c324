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
// # Recycled IDs
//
// A program that runs a million short goroutines (an HTTP test suite, a
// worker per request) would make every clock a million entries wide, and
// keep as many clocks: quadratic memory. A Tracker made with Recycle gives
// the ID of a goroutine that ended to a goroutine created later, when that
// costs no precision: only if the new goroutine's first clock covers the
// old one's last data access (the parent of a fork knows it; a goroutine
// born in untraced code is after everything). The new owner's clock values
// on the ID start above every value the old owner's ever had (its base), so
// a value v on the ID is knowledge of the owner whose values v falls in;
// and a clock that knows any event of the new owner knows its start, hence
// every access of the old one. Each query a detector makes, "is access
// c@id ordered before this clock?", answers as it would with separate IDs,
// for accesses: the only events the detectors that recycle (hb, fasttrack,
// hybrid) keep epochs of. (Not for other events: an event of the old owner
// after its last access, a release say, may look ordered before a clock
// that knows the new owner when it is not, so wcp and PECAN, which keep
// clocks of synchronization events, do not recycle.) GIDAt names the
// goroutine an epoch belongs to. What a recycling Tracker no longer keeps
// for a goroutine that ended is its clock, for a later join of it (an op
// Go traces never have): the last final clocks up to maxRetired entries in
// all are kept, and a join of an older one joins the join of all those let
// go (more order, never less), counted in Counters.ApproxJoins. Past
// maxIDs, IDs are also taken without that order, from goroutines that
// ended and then from alive ones (see maxIDs): races may then be missed.
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
	"sort"

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

	pendOn []*chanState // channels it has begun operations on (chan.go)

	// Joins skipped (objVC): cver changes whenever c changes other than
	// by a tick; memo holds, per object clock seen, the version joined.
	cver     uint64
	memo     *[memoSlots]memoEntry
	img      vc.Image // c in chunks, which the clocks it is copied into share (vc.Shared)
	inSelect bool     // its last sync event begun a channel operation
	// atomPub: the word clock a store or read-modify-write inside the
	// word's private lock publishes into at the lock's release (GoAtomics).
	atomPub *objVC

	// Recycling (see the package comment).
	base    uint32 // its first value on its ID: 1, or above the previous owner's
	acc     uint32 // C_t(t) at its latest data access (0: none)
	ended   bool   // its End was seen
	retired bool   // its ID went to a goroutine created later
	// detached: its ID went to another goroutine while it was alive
	// (maxIDs); its next event gives it another (attach).
	detached bool
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

// Base is t's first clock value on its ID: 1, or, when t took over the ID
// of a goroutine that ended (Recycle), one more than that goroutine's
// last. A value below Base on t's ID is an earlier owner's.
func (t *Thread) Base() uint32 { return t.base }

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

// image returns t's clock in chunks, up to date (cver changes whenever c
// does, but by a tick).
func (t *Thread) image() *vc.Image {
	t.img.Sync(t.c, t.cver, trace.GID(t.id))
	return &t.img
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

// dropHold removes t's most recent hold of the lock e releases, in e's
// mode, else (ill-formed, counted) in the other one; it returns the hold,
// and false when t held the lock in neither.
func (k *Tracker) dropHold(t *Thread, e *trace.Event) (Hold, bool) {
	i := t.find(e.Obj, e.ReadLock())
	if i < 0 {
		k.illformed++ // not held in this mode: drop a hold in the other one
		if i = t.find(e.Obj, !e.ReadLock()); i < 0 {
			return Hold{}, false
		}
	}
	h := t.held[i]
	if n := len(t.held) - 1; i == n { // the usual, last-in first-out
		t.held = t.held[:n]
	} else {
		t.held = append(t.held[:i], t.held[i+1:]...)
	}
	return h, true
}

// lockState is a lock's clocks, W_L (published by exclusive releases) and
// R_L (the join of the read-mode releases since the last exclusive one),
// and how many holds of it all goroutines have, for the well-formedness
// checks: a goroutine holding the lock is one of them.
type lockState struct {
	w, r             objVC
	writers, readers int32 // exclusive and read-mode holds
}

// Tracker follows one event stream's goroutines, locks, sync objects and
// atomic words. Create it with New; feed it every event in trace order:
// Running (and Start) for each, then Sync for each that is not a data
// access.
type Tracker struct {
	edges   Edges
	op      trace.Op  // the op of the event Running saw last
	threads []*Thread // by ID: its current owner
	dense   []*Thread // by GID, for GIDs below len(dense) (denseLimit)
	running []*Thread // by GID, for GIDs below len(dense): started, not joined, not retired
	sparse  map[trace.GID]*Thread
	gors    int64 // goroutines seen
	locks   shadow.Table[*lockState]
	syncs   shadow.Table[*objVC]     // S_o of snd/rcv objects
	atomics shadow.Table[*objVC]     // S_a of atomic words
	vers    uint64                   // versions of objVCs and Thread.cver, handed out by bump
	exact   bool                     // every join made (tests: the skips against none)
	goAtom  bool                     // GoAtomics
	chans   shadow.Table[*chanState] // channels with message events (chan.go)
	in      vc.Shared                // Incoming
	inFlat  vc.VectorClock           // Incoming's result
	free    []vc.Shared              // reusable clocks of completed operations
	// msgClocks counts the per-message clocks of all channels (chan.go),
	// chanFolds the times a channel's were merged for maxMsgBytes.
	msgClocks, chanFolds int64

	// Recycling (Recycle; see the package comment).
	recycle    bool
	prev       [][]owner      // by ID: its earlier owners, oldest first
	endedIDs   []uint32       // IDs whose owner ended, oldest first, from endedHead
	endedHead  int            //
	retired    []*Thread      // goroutines whose ID was recycled, with their final clocks, oldest first
	retiredN   int            // clock entries in retired[retiredHead:]
	retiredHd  int            //
	letGo      vc.VectorClock // the join of the final clocks of retired goroutines let go
	gone       *Thread        // stands, in dense and sparse, for a goroutine let go
	reused     int64
	forced     int64 // IDs taken past maxIDs without order (see maxIDs)
	approxJoin int64
	// attached: the IDs in the order their current owners took them, from
	// attachedHd (entries whose owner has changed since are skipped): the
	// order in which alive goroutines lend their ID past maxIDs.
	attached   []slot
	attachedHd int
	preempted  int64 // IDs taken from an alive goroutine (see maxIDs)

	events, illformed, untraced int64
}

// slot is an ID and the goroutine that took it.
type slot struct {
	id uint32
	t  *Thread
}

// owner is an earlier owner of an ID: its goroutine, and its first value on
// the ID.
type owner struct {
	base uint32
	gid  trace.GID
}

// maxRetired bounds the clock entries a recycling Tracker keeps, in all, of
// goroutines whose ID went to another, for a join of them (a variable for
// the tests).
var maxRetired = 1 << 22

// MaxRetired is the bound on the retired clock entries a recycling Tracker
// keeps for joins.
func MaxRetired() int { return maxRetired }

// maxScan bounds the ended goroutines' IDs a recycling Tracker looks at for
// one new goroutine; those not taken go to the back of the queue.
const maxScan = 16

// maxIDs bounds a recycling Tracker's clock width when goroutines end
// unordered with what comes after them (watchers cancelled by a context and
// never waited for: go-memdb's tests leave 55,000, and each of 200,000
// channel clocks was as wide). Past it, an ended goroutine's ID goes to a
// new one even though the new one's clock does not know its last access:
// the new owner's values start above the old one's, so a clock that knows
// the new owner takes every access of the old one for ordered before it.
// Races may be missed that way (Counters.ForcedRecycles counts the IDs so
// taken), never invented. The Go race detector bounds its clocks likewise
// (a fixed number of slots, reused).
//
// Past it too, with no ended goroutine's ID to take, a new goroutine takes
// the ID of an alive one, the one that took its ID longest ago (as
// ThreadSanitizer's slots are preempted, in its tsan_rtl.cpp), and that
// one takes another at its next event (attach), with values above the
// ID's earlier owners'. The same reasoning holds: a clock that knows the
// new owner takes every access of the old one on the ID for ordered
// before it, which may hide a race, never invent one (the old owner's
// later accesses are on its new ID). A test of ten thousand goroutines
// alive at once (panjf2000/ants) kept clocks ten thousand entries wide,
// and the analysis was mostly their joins.
var maxIDs = 1024

// MaxIDs is the clock width past which IDs are recycled without order.
func MaxIDs() int { return maxIDs }

// SetMaxIDs sets the clock width past which IDs are recycled without
// order (see maxIDs) and returns a function restoring the old bound: for
// tests, which reach it with small traces. Not safe while a Tracker runs.
func SetMaxIDs(n int) (restore func()) {
	old := maxIDs
	maxIDs = n
	return func() { maxIDs = old }
}

// maxBase bounds the clock values of a recycled ID: an ID whose owner got
// past it is not recycled (its values stay below 2^32).
const maxBase = 1 << 31

// New returns an empty Tracker building the given edges.
func New(edges Edges) Tracker { return Tracker{edges: edges} }

// Recycle makes k give the IDs of goroutines that ended to goroutines
// created later (see the package comment), which bounds its clocks by the
// goroutines alive and not yet known to be done, instead of every
// goroutine the trace ever had. Call it before the first event. Only for
// detectors that compare clocks with epochs of data accesses alone, and
// report a previous access's goroutine through GIDAt; it does nothing
// without clocks (NoEdges).
func (k *Tracker) Recycle() {
	k.recycle = k.edges != NoEdges
}

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
	k.op = e.Op
	if int(e.G) < len(k.running) {
		t := k.running[e.G]
		if t != nil && (e.Op.IsAccess() || e.Op.IsRange()) { // a range's words: FastTrack.HandleRange
			t.acc = t.epoch.Clock()
		}
		return t
	}
	return nil
}

// Thread returns the goroutine with the given dense ID, which must be one
// the Tracker handed out: its current owner, when IDs are recycled.
func (k *Tracker) Thread(id uint32) *Thread { return k.threads[id] }

// GIDAt returns the goroutine whose epoch c@id is: the owner of ID id
// when its clock was c (Thread(id), unless IDs are recycled).
func (k *Tracker) GIDAt(id, c uint32) trace.GID {
	t := k.threads[id]
	if c >= t.base || int(id) >= len(k.prev) {
		return t.gid
	}
	// The last earlier owner whose base is at most c.
	ps := k.prev[id]
	i := sort.Search(len(ps), func(i int) bool { return ps[i].base > c })
	if i == 0 {
		if len(ps) == 0 {
			return t.gid
		}
		return ps[0].gid
	}
	return ps[i-1].gid
}

// Lookup returns the goroutine with trace ID g, or nil if g was never seen
// (or, when IDs are recycled, was let go: see the package comment).
func (k *Tracker) Lookup(g trace.GID) *Thread {
	t := k.lookup(g)
	if t == k.gone {
		return nil
	}
	return t
}

func (k *Tracker) lookup(g trace.GID) *Thread {
	if int(g) < len(k.dense) {
		if t := k.dense[g]; t != nil {
			return t
		}
	}
	return k.sparse[g]
}

// denseLimit is the GIDs kept in slices: below denseGIDs, or below twice
// the goroutines seen (the trace model assigns GIDs densely; a hostile
// huge GID goes to the map).
func (k *Tracker) denseLimit() int64 { return max(denseGIDs, 2*k.gors) }

// get returns g's thread, creating it (with the bottom clock) if new: its
// ID a recycled one when from, the goroutine whose clock the new one
// starts from (nil: born in untraced code, after everything), knows the
// last access of the ID's owner.
func (k *Tracker) get(g trace.GID, from *Thread) *Thread {
	old := k.lookup(g)
	if old != nil && !old.retired && old != k.gone {
		return old
	}
	t := &Thread{gid: g, base: 1}
	k.gors++
	k.giveID(t, from)
	if int64(g) < k.denseLimit() {
		if int(g) >= len(k.dense) {
			n := max(int(g)+1, 2*len(k.dense), 8)
			k.dense = append(k.dense, make([]*Thread, n-len(k.dense))...)
			k.running = append(k.running, make([]*Thread, n-len(k.running))...)
			for sg, st := range k.sparse { // now in the slices' range
				if int(sg) < n {
					k.dense[sg] = st
					if st.started && !st.joined && !st.retired && st != k.gone {
						k.running[sg] = st
					}
					delete(k.sparse, sg)
				}
			}
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

// giveID gives t an ID: an ended goroutine's (takeID), past maxIDs an
// alive one's (preemptID), or a new one. from is the goroutine whose clock
// t's starts from (nil: none); it keeps its ID.
func (k *Tracker) giveID(t *Thread, from *Thread) {
	if !k.takeID(t, from) && !k.preemptID(t, from) {
		t.id = uint32(len(k.threads))
		k.threads = append(k.threads, t)
	}
	if k.recycle {
		k.attached = append(k.attached, slot{t.id, t})
		if k.attachedHd > len(k.attached)/2 || len(k.attached)-k.attachedHd > 2*len(k.threads)+64 {
			// Mostly taken already (preemptID), or stale (their ID taken
			// since): keep the current owners' alone, or the queue would
			// keep every goroutine that ever took an ID, clocks and all.
			live := k.attached[:0]
			for _, s := range k.attached[k.attachedHd:] {
				if k.threads[s.id] == s.t {
					live = append(live, s)
				}
			}
			clear(k.attached[len(live):])
			k.attached, k.attachedHd = live, 0
		}
	}
}

// preemptID gives t, past maxIDs, the ID of the alive goroutine that took
// its ID longest ago (not from, not one whose values on it got past
// maxBase), and reports whether it did. The old owner is detached: its
// next event gives it another ID (attach).
func (k *Tracker) preemptID(t *Thread, from *Thread) bool {
	if !k.recycle || len(k.threads) < maxIDs {
		return false
	}
	for n := len(k.attached) - k.attachedHd; n > 0; n-- {
		s := k.attached[k.attachedHd]
		k.attachedHd++
		o := k.threads[s.id]
		if o != s.t {
			continue // taken by another since
		}
		last := o.c.Get(trace.GID(s.id))
		if o == from || o.ended || last >= maxBase {
			// Ended: takeID's (it found none it could take). from: its
			// clock is being copied. Back of the queue.
			k.attached = append(k.attached, s)
			continue
		}
		k.handOver(o, t, s.id, last)
		o.detached = true
		if int(o.gid) < len(k.running) {
			k.running[o.gid] = nil // its next event goes through Start, which attaches it
		}
		k.preempted++
		return true
	}
	return false
}

// handOver gives ID id, whose values o took up to last, to t: o becomes
// one of its earlier owners, t's values on it start above o's.
func (k *Tracker) handOver(o, t *Thread, id, last uint32) {
	for len(k.prev) <= int(id) {
		k.prev = append(k.prev, nil)
	}
	k.prev[id] = append(k.prev[id], owner{o.base, o.gid})
	// t's accesses come after o's and its predecessors' (or are taken to
	// be: see maxIDs); until t has one, a taker of its ID must know theirs.
	t.id, t.base, t.acc = id, last+1, o.acc
	k.threads[id] = t
}

// attach gives t, detached, an ID again, and starts its values there
// above the ID's earlier owners'; t's clock keeps what it knew on its old
// ID, so its earlier accesses stay ordered before it. from is the
// goroutine whose clock t's is about to be at least (t itself, or the
// parent of a fork): an ended goroutine's ID it does not know the last
// access of is taken as forced (takeID).
func (k *Tracker) attach(t *Thread, from *Thread) {
	t.detached = false
	k.giveID(t, from)
	if k.edges != NoEdges {
		if t.c.Get(trace.GID(t.id)) < t.base {
			t.c.Set(trace.GID(t.id), t.base)
		}
		k.learnt(t)
		t.refresh()
	}
}

// takeID gives t, a new goroutine starting from from's clock (nil: after
// everything), the ID of a goroutine that ended and whose last access from
// knows, if one of the first maxScan in the queue is; and reports whether
// it did. The old owner is retired: its final clock kept for a join, its
// later events (ill-formed) a new goroutine's.
func (k *Tracker) takeID(t *Thread, from *Thread) bool {
	if !k.recycle {
		return false
	}
	defer func() {
		if k.endedHead > len(k.endedIDs)/2 {
			k.endedIDs = append(k.endedIDs[:0], k.endedIDs[k.endedHead:]...)
			k.endedHead = 0
		}
	}()
	for n := 0; n < maxScan && k.endedHead < len(k.endedIDs); n++ {
		id := k.endedIDs[k.endedHead]
		k.endedHead++
		o := k.threads[id]
		last := o.c.Get(trace.GID(id))
		if last >= maxBase {
			continue // never again
		}
		if from != nil && from.c.Get(trace.GID(id)) < o.acc {
			if len(k.threads) < maxIDs {
				k.endedIDs = append(k.endedIDs, id) // not yet
				continue
			}
			// Too wide: taken anyway (see maxIDs).
			k.forced++
		}
		k.handOver(o, t, id, last) // from knows o's accesses (or maxIDs)
		k.reused++
		k.retire(o)
		return true
	}
	return false
}

// retire takes o, whose ID went to another goroutine, out of the running,
// keeps its final clock for a join of it, and lets go of the oldest kept
// clocks past maxRetired entries: their join goes into letGo, and their
// goroutines are then k.gone.
func (k *Tracker) retire(o *Thread) {
	o.retired = true
	if int(o.gid) < len(k.running) {
		k.running[o.gid] = nil
	}
	k.retired = append(k.retired, o)
	k.retiredN += len(o.c)
	for k.retiredN > maxRetired && k.retiredHd < len(k.retired) {
		r := k.retired[k.retiredHd]
		k.retired[k.retiredHd] = nil
		k.retiredHd++
		k.retiredN -= len(r.c)
		k.letGo.Join(r.c)
		if k.gone == nil {
			k.gone = &Thread{retired: true}
		}
		if k.lookup(r.gid) == r {
			if int(r.gid) < len(k.dense) {
				k.dense[r.gid] = k.gone
			} else {
				k.sparse[r.gid] = k.gone
			}
		}
	}
	if k.retiredHd > len(k.retired)/2 {
		k.retired = append(k.retired[:0], k.retired[k.retiredHd:]...)
		k.retiredHd = 0
	}
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
//
// With recycled IDs (Recycle), an owner not started yet (forked) gives
// C_u its base less one: every access of the ID's earlier owners, none of
// its own. An event of a goroutine whose ID was recycled (after its End:
// ill-formed) starts it again, as a new goroutine born in untraced code.
func (k *Tracker) Start(g trace.GID) *Thread {
	u := k.start(g)
	if k.op.IsAccess() || k.op.IsRange() {
		u.acc = u.epoch.Clock()
	}
	return u
}

func (k *Tracker) start(g trace.GID) *Thread {
	if o := k.lookup(g); o != nil && o.retired {
		k.illformed++ // an event after its End, its ID taken since
	}
	u := k.get(g, nil)
	if u.detached {
		k.attach(u, u)
		if u.started && !u.joined && g < denseGIDs {
			k.running[g] = u
		}
	}
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
				if t == u {
					continue
				}
				c := t.c.Get(trace.GID(t.id))
				if !t.started {
					c = t.base - 1 // its earlier owners'
				}
				if c > u.c.Get(trace.GID(t.id)) {
					u.c.Set(trace.GID(t.id), c)
				}
				if t.started {
					t.tick()
				}
			}
		}
	}
	if k.edges != NoEdges {
		if u.c.Get(trace.GID(u.id)) < u.base {
			u.c.Set(trace.GID(u.id), u.base)
		}
		k.learnt(u)
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
	if t.inSelect && e.Op != trace.OpAlloc {
		// An allocation is no operation of t's on a channel: the runtime
		// allocates inside a send or receive (its waiting record), and rt
		// writes it before the completion (rt/mallochook.go).
		t.inSelect = false
		k.dropPending(t)
	}
	switch e.Op {
	case trace.OpAcquire:
		if k.atomicLock(e.Obj) {
			k.atomicAcquire(t, e)
			return
		}
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
		if k.edges == AllEdges && !k.atomicLock(e.Obj) {
			k.acquireFrom(t, &l.w) // C_t ⊔= W_L, and ⊔= R_L if exclusive
			if !read {
				k.acquireFrom(t, &l.r)
			}
			t.refresh()
		}

	case trace.OpRelease:
		if k.atomicLock(e.Obj) {
			k.atomicRelease(t, e, clocks)
			return
		}
		l, read := k.lock(e.Obj), e.ReadLock()
		if h, ok := k.dropHold(t, e); ok {
			if h.Read {
				l.readers--
			} else {
				l.writers--
			}
		}
		if k.edges == AllEdges { // held or not, the release publishes C_t
			if read {
				k.releaseTo(t, &l.r) // R_L ⊔= C_t
			} else {
				k.copyTo(t, &l.w) // W_L := C_t; R_L := ⊥
				k.reset(&l.r)
			}
			t.tick()
		}

	case trace.OpSyncRelease:
		if clocks {
			k.releaseTo(t, objClock(&k.syncs, e.Obj)) // S_o ⊔= C_t
			t.tick()
		}

	case trace.OpSyncAcquire:
		if clocks {
			k.acquireFrom(t, objClock(&k.syncs, e.Obj)) // C_t ⊔= S_o
			t.refresh()
		}

	case trace.OpAtomicStore:
		if clocks {
			if k.goAtom {
				k.publishAtomic(t, e.Obj) // S_a := C_t
			} else {
				k.releaseTo(t, objClock(&k.atomics, e.Obj)) // S_a ⊔= C_t
				t.tick()
			}
		}

	case trace.OpAtomicLoad:
		if clocks {
			k.acquireFrom(t, objClock(&k.atomics, e.Obj)) // C_t ⊔= S_a
			t.refresh()
		}

	case trace.OpAtomicRMW:
		if clocks {
			s := objClock(&k.atomics, e.Obj)
			k.acquireFrom(t, s) // C_t ⊔= S_a; S_a ⊔= C_t
			if k.goAtom {
				t.refresh()
				k.publishAtomic(t, e.Obj) // S_a := C_t, the same
			} else {
				k.releaseTo(t, s)
				t.tick()
			}
		}

	case trace.OpFork:
		k.fork(t, e.Obj)

	case trace.OpJoin:
		k.join(t, e.Obj)

	case trace.OpAlloc:
		// A channel made at a reused address numbers its messages from 1
		// again (rt counts per channel object): the message state of the
		// one that was there starts over (restartChan), or its message k
		// would stand for the new one's. Lock, sync-object and atomic
		// clocks at a reused address are kept: that can only add edges,
		// hiding a race, never inventing one. The shadow memory is the
		// detector's.
		if lo, _, ok := e.AllocRange(); ok {
			if s := k.chans.Lookup(lo); s != nil && *s != nil {
				*s = k.restartChan(*s)
			}
		}

	case trace.OpEnd:
		if k.recycle && !t.ended {
			t.ended = true
			k.endedIDs = append(k.endedIDs, t.id)
		}

	case trace.OpRead, trace.OpWrite, trace.OpBegin,
		trace.OpMethodBegin, trace.OpMethodEnd,
		trace.OpFuncEnter, trace.OpFuncExit, trace.OpRegionBegin, trace.OpRegionEnd, trace.OpBlock:
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
	if o := k.lookup(trace.GID(child)); o != nil && o.retired {
		k.illformed++ // a fork of a goroutine that ended: a new one
	}
	u := k.get(trace.GID(child), t)
	if u == t || u.started || u.forked {
		k.illformed++ // self-fork, or a second fork: apply the edge anyway
	}
	if u.detached { // a second fork of one that lent its ID
		k.attach(u, t)
	}
	if !u.started {
		u.forked = true
	}
	if k.edges == NoEdges {
		return
	}
	u.c.Join(t.c)
	k.learnt(u)
	if u.c.Get(trace.GID(u.id)) < u.base {
		u.c.Set(trace.GID(u.id), u.base)
	}
	u.refresh()
	t.tick()
}

// join: C_t ⊔= C_u; C_u[u]++.
func (k *Tracker) join(t *Thread, child uint64) {
	var u *Thread
	if child <= 0xFFFFFFFF {
		u = k.lookup(trace.GID(child))
	}
	if u == nil || u == t {
		k.illformed++ // joining an unknown goroutine joins ⊥
		return
	}
	if u == k.gone {
		// Its final clock was let go (maxRetired): join all those let go.
		k.approxJoin++
		t.c.Join(k.letGo)
		k.learnt(t)
		t.refresh()
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
	k.learnt(t)
	t.refresh()
	if u.retired || u.detached {
		return // its ID is another's: its later events start it again, or attach it
	}
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
	IDs         int64 // IDs handed out: the width of the widest clock
	Recycled    int64 // goroutines given the ID of one that ended (Recycle)
	ApproxJoins int64 // joins of a goroutine whose final clock was let go (Recycle)
	// ForcedRecycles are IDs given to a new goroutine that did not know
	// the old owner's last access, because the clocks reached maxIDs:
	// races with those accesses may be missed.
	ForcedRecycles int64
	// Preempted are IDs given to a new goroutine, or to one that lent its
	// own, from an alive goroutine, because the clocks reached maxIDs:
	// races with the old owner's accesses until then may be missed.
	Preempted int64
	// ChanFolds counts the times a channel's per-message clocks were
	// merged into its wide clocks because all channels' together passed
	// their bound: races ordered only by those messages may be missed.
	ChanFolds   int64
	Locks       int64 // locks acquired or released (under GoAtomics, atomic words' private locks are not counted)
	SyncObjects int64 // snd/rcv objects with a clock (none under NoEdges)
	AtomicWords int64 // atomic words with a clock (none under NoEdges)
}

// Counters returns the Tracker's counts.
func (k *Tracker) Counters() Counters {
	return Counters{
		Events:         k.events,
		IllFormed:      k.illformed,
		Untraced:       k.untraced,
		Goroutines:     k.gors,
		IDs:            int64(len(k.threads)),
		Recycled:       k.reused,
		ApproxJoins:    k.approxJoin,
		ForcedRecycles: k.forced,
		Preempted:      k.preempted,
		ChanFolds:      k.chanFolds,
		Locks:          int64(k.locks.Len()),
		SyncObjects:    int64(k.syncs.Len()),
		AtomicWords:    int64(k.atomics.Len()),
	}
}
