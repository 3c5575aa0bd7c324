// Package tree is TREE, the sound redundant-event filter of Rajagopalan's
// thesis (Texas A&M 2016, chapter 3): it drops memory accesses that cannot
// give a detector a distinct race it would not get from the events it
// keeps, and keeps every other event.
//
// New returns a Filter (filter.Filter): Keep is called once per event in
// trace order. For each goroutine t the filter follows its concurrency
// context Γ_t (Definition 3.3.2: the locks it holds and the history of
// its happens-before edges); for each access location — the thesis'
// lexical site, access kind and memory address (conditions 1-3 of
// concurrential equivalence) — it keeps the concurrency history Θ_loc: the
// contexts in which the location was kept, each with the two-slot stack of
// goroutines of Algorithm 2. An access whose context is already in Θ_loc
// with its own goroutine on the stack (intra-thread redundancy), or with
// two other goroutines (inter-thread redundancy), is dropped (Algorithm 1).
//
// # What a context is, per relation
//
// Which events make two accesses equivalent depends on the relation the
// detector behind the filter uses, so Options.Relation names it:
//
//   - HappensBefore (hb, fasttrack): two accesses of t at one location are
//     equivalent when no edge left t between them (one "span", section
//     3.6). Every op that publishes t's clock (docs/semantics.md: a lock
//     release in either mode, snd, atomic store and read-modify-write,
//     fork, a join of t, and the first event of a goroutine born in
//     untraced code, which orders it after every goroutine) starts a new
//     span; locks held do not matter, since hb orders through lock edges
//     only.
//   - Hybrid (hybrid): the locks held (with their modes) and the spans of
//     the message edges; a lock release starts no span, because hybrid has
//     no lock edges. This is the thesis' own model (section 3.3).
//   - Eraser (lockset): Eraser's state machine reacts to the order of
//     accesses to an address, not only to the race relation (an access by
//     the owner after another goroutine's read moves the address to
//     Shared-Modified), so an access is dropped only when the last kept
//     access to its address was by the same goroutine at the same site,
//     of the same kind, under the same locks: then it changes nothing
//     Eraser keeps but the Seq of its last access.
//   - All (the zero value): the conjunction of the three, sound for every
//     racekit detector.
//
// Incoming edges (acquire, rcv, atomic load, join of a child) never start a
// span: a later access of t can only be ordered after more events than an
// earlier one, never fewer, so it cannot race where the earlier one does
// not (proof of Theorem 3.3.1, same-thread case).
//
// # Soundness
//
// For every Relation but Eraser, an access is dropped only if an earlier
// kept access e_i of the same goroutine, site, kind and address has the
// same context; then every access f of another goroutine that races with
// the dropped one races with e_i too (same locks; e_i ≺ f would need an
// edge leaving t after e_i, which would have changed the context). So the
// distinct racing site pairs on each address are unchanged, and the first
// racing access on each address is never dropped (it would have an earlier
// racing twin). Every goroutine's context starts with a span of its own, so
// two goroutines never share a context and Algorithm 2's inter-thread case
// never fires: the thesis' inter-thread redundancy (Theorem 3.3.1, "two from
// different threads") is not sound online, because whether e_i ≺ f depends
// on edges t sends after e_i, which the filter has not seen yet (the
// counterexample is TestInterThreadRedundancyIsUnsound).
//
// With Options.Span, an access is also dropped when an earlier kept access
// of the same goroutine in the same happens-before span hit the same
// address with the same kind or as a write (Theorem 3.6.1), whatever its
// site. That keeps, for fasttrack, the racing addresses and the first
// racing access on each (FastTrack's own guarantee), but not every site
// pair: use it for fasttrack only.
//
// # Memory
//
// Options.MaxEntries bounds what is remembered (addresses and Θ leaves,
// plus interned locksets); past it the older half is forgotten. Forgetting
// only makes the filter keep more, so it stays sound. A goroutine's old
// spans never come back, so their leaves are reused in place.
package tree

import (
	"slices"

	"github.com/racekit/racekit/detect/shadow"
	"github.com/racekit/racekit/trace"
)

// Relation names the relation whose distinct races the filter must keep.
type Relation uint8

const (
	// All keeps every racekit detector's races (hb, fasttrack, hybrid and
	// lockset): the conjunction of the other relations' rules.
	All Relation = iota
	// HappensBefore keeps hb's distinct site pairs per address and
	// fasttrack's racing addresses and first racing accesses.
	HappensBefore
	// Hybrid keeps hybrid's distinct site pairs per address (lockset plus
	// happens-before without lock edges: the thesis' model).
	Hybrid
	// Eraser keeps the lockset (Eraser) detector's reports.
	Eraser

	numRelations
)

var relationNames = [...]string{"all", "hb", "hybrid", "lockset"}

// String is the relation's name: all, hb, hybrid or lockset.
func (r Relation) String() string {
	if r < numRelations {
		return relationNames[r]
	}
	return "relation(?)"
}

// DefaultMaxEntries is the bound used when Options.MaxEntries is 0.
const DefaultMaxEntries = 1 << 22

// Options configure a Filter. The zero value is sound for every detector.
type Options struct {
	// Relation is the relation whose races must be kept (see the package
	// comment); the zero value, All, serves every detector.
	Relation Relation
	// Span adds span redundancy (thesis section 3.6) for detectors that
	// report the first race per address (fasttrack): it keeps fasttrack's
	// racing addresses and first racing accesses, not hb's site pairs.
	Span bool
	// MaxEntries bounds the remembered addresses, Θ leaves and locksets:
	// 0 means DefaultMaxEntries, a negative value no bound. Past the bound
	// the older half is forgotten, which only keeps more events.
	MaxEntries int

	// thesis replaces the sound contexts by the thesis' literal ones (every
	// goroutine starts with the empty context, snd and rcv both extend it,
	// locks are only a set): tests use it to replay the case study of
	// section 3.5 and to show where it loses races.
	thesis bool
}

// OptionsFor returns the options for the named racekit detector: hb,
// fasttrack (with Span), hybrid, lockset; any other name gets the zero
// Options (sound for all of them).
func OptionsFor(detector string) Options {
	switch detector {
	case "hb":
		return Options{Relation: HappensBefore}
	case "fasttrack":
		return Options{Relation: HappensBefore, Span: true}
	case "hybrid":
		return Options{Relation: Hybrid}
	case "lockset":
		return Options{Relation: Eraser}
	}
	return Options{}
}

// Stats are a Filter's counts so far.
type Stats struct {
	Events   int64 // events seen
	Kept     int64 // events kept
	Dropped  int64 // events dropped (always accesses)
	Accesses int64 // reads and writes seen
	// InterThread counts drops by Algorithm 2's full stack (only with the
	// thesis' literal contexts; zero with sound ones); SpanDrops counts
	// drops by span redundancy alone.
	InterThread, SpanDrops int64
	Addresses              int64 // addresses remembered now
	TrieNodes              int64 // Θ leaves plus interned lockset nodes now
	Forgotten              int64 // times the older half was forgotten (MaxEntries)
}

// thread is one goroutine's concurrency context Γ_t.
type thread struct {
	gid     trace.GID
	started bool // has had an event of its own
	forked  bool // was forked before it started
	// span identifies the current span of the relation's edges, hbSpan the
	// current happens-before span (every edge); both are fresh numbers,
	// never reused, so a span identifies its goroutine too.
	span, hbSpan uint64
	holds        []hold // locks held, as clock.Thread keeps them
	ls           uint32 // the interned set of held locks with modes
	idx          uint32 // index in Filter.threads
}

// hold is one acquisition of a lock not released yet.
type hold struct {
	lock uint64
	read bool
}

// leaf is one context in Θ_loc for one address: the site and kind, the
// context (span, lockset) and Algorithm 2's stack of goroutines.
type leaf struct {
	span  uint64
	site  trace.SiteID
	ls    uint32
	owner uint32 // index of the goroutine of stack[0] in Filter.threads
	stack [2]trace.GID
	n     uint8
	write bool
}

// maxLeaves bounds the live leaves per address; past it the oldest slot is
// overwritten (forgetting keeps more, never less).
const maxLeaves = 32

// addrState is everything remembered about one address.
type addrState struct {
	leaves []leaf
	next   uint8 // round-robin victim once leaves is full
	// The last kept access (Eraser rule).
	lastSet   bool
	lastWrite bool
	lastG     trace.GID
	lastSite  trace.SiteID
	lastLS    uint32
	// The kept accesses of goroutine spanT-1 in HB span spanID (Span).
	spanT        uint32
	spanID       uint64
	spanW, spanR bool
	live         bool // held by this generation (not moved out or cleared)
}

// generation is one half of the address table: the state of each address
// in shadow memory (package shadow, as the detectors keep theirs), so that
// a lookup is one probe, mostly on the page of the previous access.
type generation struct {
	mem     shadow.Mem[addrState]
	entries int
}

func newGeneration() *generation { return new(generation) }

// lsKey is an edge of the lockset trie: a canonical set is the path of its
// (lock, write) elements in increasing lock order.
type lsKey struct {
	parent uint32
	lock   uint64
	write  bool
}

// Filter is TREE. Create it with New; it is not safe for concurrent use.
type Filter struct {
	rel                     Relation
	span, thesis            bool
	lockEdges, locks, edges bool
	eraserRule, contextRule bool
	max                     int
	threads                 []*thread
	dense                   []int32 // GID → index+1 in threads, for GID < 1<<16
	sparse                  map[trace.GID]int32
	cur, old                *generation
	lsTrie                  map[lsKey]uint32
	lsNext                  uint32
	nextSpan                uint64
	scratch                 []hold
	stats                   Stats
}

const denseGIDs = 1 << 16

// New returns a TREE filter with the given options.
func New(o Options) *Filter {
	f := &Filter{
		rel:      o.Relation,
		span:     o.Span,
		thesis:   o.thesis,
		max:      o.MaxEntries,
		cur:      newGeneration(),
		lsTrie:   make(map[lsKey]uint32),
		lsNext:   1, // 0 is the empty set
		nextSpan: 1, // 0 is the thesis' shared empty context
	}
	if f.max == 0 {
		f.max = DefaultMaxEntries
	}
	switch f.rel {
	case All:
		f.lockEdges, f.locks, f.edges, f.eraserRule, f.contextRule = true, true, true, true, true
	case HappensBefore:
		f.lockEdges, f.edges, f.contextRule = true, true, true
	case Hybrid:
		f.locks, f.edges, f.contextRule = true, true, true
	default: // Eraser, and anything unknown gets the strictest of the rules it can
		f.rel = Eraser
		f.locks, f.eraserRule = true, true
	}
	if f.thesis {
		// Algorithm 1 as written: locks are a set, SND and RCV extend Γ,
		// nothing else.
		f.lockEdges, f.locks, f.edges, f.eraserRule, f.contextRule = false, true, true, false, true
	}
	return f
}

// Stats returns the filter's counts.
func (f *Filter) Stats() Stats {
	s := f.stats
	s.Addresses, s.TrieNodes = 0, int64(len(f.lsTrie))
	for _, g := range []*generation{f.cur, f.old} {
		if g == nil {
			continue
		}
		g.mem.Each(func(_ uint64, st *addrState) {
			if st.live {
				s.Addresses++
				s.TrieNodes += int64(len(st.leaves))
			}
		})
	}
	return s
}

// Keep reports whether e must reach the detector. Only reads and writes are
// ever dropped; every other event updates the contexts and is kept.
func (f *Filter) Keep(e *trace.Event) bool {
	f.stats.Events++
	t := f.thread(e.G)
	if !t.started {
		f.start(t)
	}
	if e.Op.IsAccess() {
		if f.access(t, e) {
			f.stats.Kept++
			return true
		}
		f.stats.Dropped++
		return false
	}
	f.sync(t, e)
	f.stats.Kept++
	return true
}

// thread returns g's context, creating it if new.
func (f *Filter) thread(g trace.GID) *thread {
	if g < denseGIDs {
		if int(g) < len(f.dense) {
			if i := f.dense[g]; i > 0 {
				return f.threads[i-1]
			}
		}
	} else if i, ok := f.sparse[g]; ok {
		return f.threads[i-1]
	}
	t := &thread{gid: g, idx: uint32(len(f.threads))}
	if !f.thesis {
		// A goroutine's first span is its own: contexts of two goroutines
		// never coincide (see the package comment).
		t.span, t.hbSpan = f.fresh(), f.fresh()
	}
	f.threads = append(f.threads, t)
	i := int32(len(f.threads))
	if g < denseGIDs {
		if int(g) >= len(f.dense) {
			f.dense = append(f.dense, make([]int32, max(int(g)+1, 2*len(f.dense), 8)-len(f.dense))...)
		}
		f.dense[g] = i
	} else {
		if f.sparse == nil {
			f.sparse = make(map[trace.GID]int32)
		}
		f.sparse[g] = i
	}
	return t
}

func (f *Filter) fresh() uint64 {
	f.nextSpan++
	return f.nextSpan - 1
}

// start handles a goroutine's first event. One never forked was born in
// untraced code: racekit orders it after every event so far, as if each
// goroutine had forked it, so every other goroutine has an edge leaving it
// here and starts a new span (clock.Tracker.Start ticks them all).
func (f *Filter) start(t *thread) {
	t.started = true
	if t.forked || f.thesis {
		return
	}
	for _, u := range f.threads {
		if u != t {
			f.edgeOut(u, false)
		}
	}
}

// edgeOut starts a new span of t after an edge leaving t. A lock release
// (lock) starts a relation span only where locks are edges; every edge
// starts a new happens-before span (for Span).
func (f *Filter) edgeOut(t *thread, lock bool) {
	t.hbSpan = f.fresh()
	if f.edges && (!lock || f.lockEdges) {
		t.span = f.fresh()
	}
}

// sync applies a non-access event to the contexts (Algorithm 1, ACQ, REL,
// SND and RCV, with racekit's ops mapped as docs/semantics.md orders them).
func (f *Filter) sync(t *thread, e *trace.Event) {
	switch e.Op {
	case trace.OpAcquire:
		// An acquire is an incoming edge (C_t ⊔= W_L): no new span. The
		// lock joins the lockset, in its mode (a read-mode hold protects
		// only against writes).
		if f.locks {
			t.holds = append(t.holds, hold{e.Obj, e.ReadLock()})
			f.relock(t)
		}
	case trace.OpRelease:
		// A release publishes C_t (W_L := C_t or R_L ⊔= C_t): an outgoing
		// edge under hb. Without lock edges (hybrid, the thesis) only the
		// lockset changes, and the context returns to what it was before
		// the acquire (Algorithm 1, REL).
		if f.locks {
			f.unlock(t, e.Obj, e.ReadLock())
		}
		f.edgeOut(t, true)
	case trace.OpSyncRelease, trace.OpAtomicStore, trace.OpAtomicRMW:
		// snd, atomic store, read-modify-write: S ⊔= C_t, an outgoing edge
		// (Algorithm 1, SND).
		f.edgeOut(t, false)
	case trace.OpSyncAcquire, trace.OpAtomicLoad:
		// rcv and atomic load: C_t ⊔= S, incoming only. The thesis' Γ adds
		// the message anyway (Algorithm 1, RCV).
		if f.thesis {
			t.span = f.fresh()
		}
	case trace.OpFork:
		// C_u ⊔= C_t; C_t[t]++: an outgoing edge of t. The child starts with
		// its own span (thread); a fork seen before its first event marks it
		// as traced, so its start orders nothing else.
		f.edgeOut(t, false)
		if e.Obj <= 0xFFFFFFFF {
			if u := f.thread(trace.GID(e.Obj)); !u.started {
				u.forked = true
			}
		}
	case trace.OpJoin:
		// C_t ⊔= C_u; C_u[u]++: incoming for t; u's clock is published, so
		// u (whose later events, in an ill-formed trace, are not ordered
		// before t) starts a new span. The thesis' Γ_t records the RCV.
		if f.thesis {
			t.span = f.fresh()
		} else if e.Obj <= 0xFFFFFFFF {
			if u := f.thread(trace.GID(e.Obj)); u != t {
				f.edgeOut(u, false)
			}
		}
	case trace.OpAlloc:
		// Fresh memory: detectors forget the old object's accesses, so the
		// filter forgets its representatives there too.
		f.forgetRange(e)
	}
}

// unlock drops the hold a release ends, exactly as clock.Tracker does (the
// latest hold in the release's mode, else one in the other mode), so that
// the lockset is the detectors' even on ill-formed streams.
func (f *Filter) unlock(t *thread, lock uint64, read bool) {
	i := -1
	for _, mode := range []bool{read, !read} {
		for j := len(t.holds) - 1; j >= 0; j-- {
			if t.holds[j].lock == lock && t.holds[j].read == mode {
				i = j
				break
			}
		}
		if i >= 0 {
			break
		}
	}
	if i < 0 {
		return
	}
	t.holds = append(t.holds[:i], t.holds[i+1:]...)
	f.relock(t)
}

// relock interns t's set of held locks: each lock once, in write mode if
// any of its holds is (the lockset detectors' set), in lock order.
func (f *Filter) relock(t *thread) {
	s := append(f.scratch[:0], t.holds...)
	slices.SortFunc(s, func(a, b hold) int {
		switch {
		case a.lock < b.lock:
			return -1
		case a.lock > b.lock:
			return 1
		}
		return 0
	})
	node := uint32(0)
	for i := 0; i < len(s); {
		write := false
		j := i
		for ; j < len(s) && s[j].lock == s[i].lock; j++ {
			write = write || !s[j].read
		}
		k := lsKey{node, s[i].lock, write}
		n, ok := f.lsTrie[k]
		if !ok {
			n = f.lsNext
			f.lsNext++
			f.lsTrie[k] = n
		}
		node = n
		i = j
	}
	f.scratch = s
	t.ls = node
}

// access decides one read or write (Algorithms 1 and 2).
func (f *Filter) access(t *thread, e *trace.Event) bool {
	f.stats.Accesses++
	write := e.Op == trace.OpWrite
	st := f.state(e.Obj)
	ti := t.idx

	// Span redundancy (section 3.6, Theorem 3.6.1): an earlier kept access
	// of t in this happens-before span to this address, as strong.
	if f.span && st.spanT == ti+1 && st.spanID == t.hbSpan && (st.spanW || (!write && st.spanR)) {
		f.stats.SpanDrops++
		return false
	}

	redundant := true
	if f.contextRule {
		redundant = f.detectRedundancy(st, t, ti, e.Site, write)
	}
	if f.eraserRule && !(st.lastSet && st.lastG == e.G && st.lastSite == e.Site && st.lastWrite == write && st.lastLS == t.ls) {
		redundant = false
	}
	if redundant {
		return false
	}
	if f.eraserRule {
		st.lastSet, st.lastG, st.lastSite, st.lastWrite, st.lastLS = true, e.G, e.Site, write, t.ls
	}
	if f.span {
		if st.spanT != ti+1 || st.spanID != t.hbSpan {
			st.spanT, st.spanID, st.spanW, st.spanR = ti+1, t.hbSpan, false, false
		}
		if write {
			st.spanW = true
		} else {
			st.spanR = true
		}
	}
	return true
}

// detectRedundancy is Algorithm 2 on the Θ leaves of one address.
func (f *Filter) detectRedundancy(st *addrState, t *thread, ti uint32, site trace.SiteID, write bool) bool {
	g := t.gid
	for i := range st.leaves {
		l := &st.leaves[i]
		if l.span != t.span || l.site != site || l.write != write || l.ls != t.ls {
			continue
		}
		switch {
		case l.stack[0] == g || (l.n == 2 && l.stack[1] == g):
			return true // intra-thread redundancy
		case l.n == 1:
			l.stack[1], l.n = g, 2 // a second goroutine in this context
			return false
		default:
			f.stats.InterThread++
			return true // two other goroutines already: inter-thread redundancy
		}
	}
	// Stack empty: a new context for this location.
	nl := leaf{span: t.span, site: site, ls: t.ls, owner: ti, stack: [2]trace.GID{g}, n: 1, write: write}
	if !f.thesis {
		// A leaf whose goroutine has left its span can never match again.
		for i := range st.leaves {
			if l := &st.leaves[i]; f.threads[l.owner].span != l.span {
				*l = nl
				return false
			}
		}
	}
	if len(st.leaves) < maxLeaves {
		st.leaves = append(st.leaves, nl)
		f.cur.entries++
		f.bound()
		return false
	}
	st.leaves[st.next%maxLeaves] = nl
	st.next++
	return false
}

// state returns the state of address a, creating it or bringing it from
// the older generation. The pointer is valid until the next call.
func (f *Filter) state(a uint64) *addrState {
	st := f.cur.mem.Get(a)
	if st.live {
		return st
	}
	var s addrState
	if f.old != nil {
		if o := f.old.mem.Lookup(a); o != nil && o.live {
			s, *o = *o, addrState{}
		}
	}
	// Before inserting, so that a new generation starts empty.
	if f.bound() {
		st = f.cur.mem.Get(a)
	}
	s.live = true
	*st = s
	f.cur.entries += 1 + len(s.leaves)
	return st
}

// bound starts a new generation when the current one holds half of
// MaxEntries, forgetting the older one. Interned locksets are forgotten
// with it when they are that many: numbering goes on, so an old number
// never names another set (an equal set interned anew just gets a new
// number, which only keeps more).
func (f *Filter) bound() bool {
	if f.max < 0 || f.cur.entries+len(f.lsTrie) <= f.max/2 {
		return false
	}
	f.stats.Forgotten++
	f.old, f.cur = f.cur, newGeneration()
	if len(f.lsTrie) > f.max/4 {
		clear(f.lsTrie)
	}
	return true
}

// forgetRange forgets every address an Alloc makes fresh, in both
// generations.
func (f *Filter) forgetRange(e *trace.Event) {
	lo, hi, ok := e.AllocRange()
	if !ok {
		return
	}
	for _, g := range []*generation{f.cur, f.old} {
		if g != nil {
			g.mem.Clear(lo, hi)
		}
	}
}
