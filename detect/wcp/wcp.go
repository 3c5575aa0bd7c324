// Package wcp is racekit's linear-time predictive race detector: Weak
// Causal Precedence (Kini, Mathur and Viswanathan, "Dynamic race
// prediction in linear time", PLDI 2017). WCP is a relation weaker than
// happens-before: it does not order two critical sections of one lock
// merely because one released the lock before the other acquired it, only
// when they contain conflicting accesses (rule a), when their acquires are
// already ordered (rule b), or through happens-before on either side
// (rule c). So it reports every race hb reports and also races that only
// a reordering of the observed run exposes; its findings carry
// finding.Predicted evidence.
//
// New returns the Detector. It follows the paper's vector-clock algorithm
// (Algorithm 1): per goroutine an HB clock H_t and a WCP clock P_t (the
// WCP-predecessors of its current event; C_t = P_t[t := own epoch] is the
// time an access is checked at); per lock the clocks of its last release
// (H_ℓ via the clock.Tracker, P_ℓ here), a log of acquire times and
// release clocks read through a per-goroutine cursor (the queues
// Acq_ℓ(t), Rel_ℓ(t) of rule b), and per (lock, address) the HB clocks of
// the releases of critical sections that read or wrote the address (L^r,
// L^w of rule a), kept per releasing goroutine so that a goroutine never
// joins its own.
//
// # Guarantee
//
// The paper's soundness theorem (weak soundness): if a trace has a WCP
// race, it has a predictable race or a predictable deadlock; its proof
// shows that the first WCP race, (e1, e2) with e2 earliest in the trace
// and then e1 latest, is a predictable race unless a deadlock is
// predictable. A predictable race is a pair of conflicting accesses both
// enabled after some correct reordering (program order kept, locks
// respected, every read seeing the same last write as in the trace). No
// promise covers the later pairs, and some are not predictable (they may
// depend on an earlier race). The tests check exactly that statement
// against a brute-force enumeration of correct reorderings of thousands
// of small traces, and log how many later pairs happen to be predictable.
// And WCP ⊆ HB as relations (P_t ⊑ H_t always), so every site pair hb
// reports, wcp reports too.
//
// # racekit's other synchronization
//
// The paper's traces have reads, writes, exclusive locks, fork and join.
// The rest of docs/semantics.md is mapped so that no race is invented:
// each such edge is a hard edge, one every reordering must keep, and WCP
// treats a hard edge s → r exactly as if s released a private lock of its
// own around a write of a private variable that r then read under that
// lock: rule (a) orders s before r, so P_r ⊔= H_s. Reorderings that keep
// those edges are a subset of the real ones, so a race predicted among
// them is a real one; and the edges are exactly the HB column's, so
// P_t ⊑ H_t still holds. The edges:
//
//   - snd → every later rcv of the object, and atomic store (or
//     read-modify-write) → every later load (or read-modify-write) of the
//     word: what hb uses (release-merge clocks, per sending goroutine);
//   - fork → the child's first event, the child's last event → join, and
//     for a goroutine born in untraced code every event observed before
//     its first one (the untraced-goroutine rule);
//   - read-mode locks (RWMutex.RLock): a read-mode critical section is not
//     a critical section of the lock for rules (a) and (b); instead its
//     order against every exclusive one is fixed as observed: each
//     exclusive release → every later read acquire, each read release →
//     every later exclusive acquire. (Edges to the adjacent exclusive
//     sections only would not do: WCP may move another exclusive section
//     over the read one, breaking mutual exclusion; the tests found that.)
//     That keeps mutual exclusion in every reordering WCP considers, at
//     the cost of races between readers and writers that only a swap of
//     the two could show. Under HB these edges hold already (through the
//     chain of exclusive sections), so P_t ⊑ H_t is kept;
//   - a goroutine never joins its own contributions (its own sends, its
//     own releases): those are program order, which WCP's C_t has anyway,
//     and joining them into P_t would pass its HB knowledge on as WCP.
//
// Alloc events forget the shadow state of the freed memory as hb does;
// the lock-protected histories of rule (a) are kept, which can only add
// order (never a race).
package wcp

import (
	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/clock"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/shadow"
	"github.com/racekit/racekit/detect/vc"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// Detector is the WCP detector ("wcp"). Create it with New.
type Detector struct {
	k    clock.Tracker // the HB relation H of docs/semantics.md
	sink finding.Sink

	threads []*thread // by Tracker ID
	locks   shadow.Table[*lockState]
	syncs   shadow.Table[*senders] // snd/rcv objects
	atomics shadow.Table[*senders] // atomic words
	crit    map[critKey]*critHist  // rule (a) histories
	shadow  shadow.Mem[hb.History]
	race    finding.Race

	accesses, races, entries, sameEpoch, ruleA, ruleB int64
}

// thread is the WCP half of a goroutine's state.
type thread struct {
	p  vc.VectorClock // P_t: WCP-predecessors of the current event
	cs []critSec      // open exclusive critical sections, innermost last
	n  int            // len of cs in use (entries past n are kept for reuse)
}

// critSec is an open exclusive critical section: its lock, the index of
// its acquire in the lock's log, and the addresses it read and wrote.
type critSec struct {
	lock   uint64
	logIdx int
	access map[uint64]uint8 // addr → accRead|accWrite
}

const (
	accRead  = 1
	accWrite = 2
)

// lockState is a lock's WCP state.
type lockState struct {
	p       vc.VectorClock // P_ℓ: P_t at the last exclusive release
	excl    senders        // H at exclusive releases (latest per goroutine), for read acquires
	readers senders        // H at read releases (latest per goroutine), for exclusive acquires
	log     []acqRecord    // exclusive critical sections in acquire order
	cursor  []int          // per Tracker ID: next log entry not yet dequeued
}

// acqRecord is one exclusive critical section of a lock: who acquired it,
// at which epoch (C of the acquire, which is enough to compare: see
// release), and H at its release (nil while open).
type acqRecord struct {
	tid  uint32
	acq  uint32
	relH vc.VectorClock
}

// senders holds, per goroutine, the HB clock of its latest release of an
// object (clocks only grow, so the latest covers the earlier ones).
type senders struct {
	tids   []uint32
	clocks []vc.VectorClock
}

func (s *senders) publish(tid uint32, h vc.VectorClock) {
	for i, t := range s.tids {
		if t == tid {
			s.clocks[i].Copy(h)
			return
		}
	}
	s.tids = append(s.tids, tid)
	s.clocks = append(s.clocks, h.Clone())
}

// joinOthers joins into p every goroutine's clock but tid's.
func (s *senders) joinOthers(p *vc.VectorClock, tid uint32) {
	for i, t := range s.tids {
		if t != tid {
			p.Join(s.clocks[i])
		}
	}
}

type critKey struct{ lock, addr uint64 }

// critHist is rule (a)'s memory for one (lock, address): the HB clocks of
// the releases of critical sections that read it (L^r) and wrote it (L^w).
type critHist struct{ r, w senders }

var (
	_ detect.Detector = (*Detector)(nil)
	_ detect.Stats    = (*Detector)(nil)
)

// New returns a WCP detector reporting into sink (nil discards findings).
func New(sink finding.Sink) *Detector {
	if sink == nil {
		sink = finding.SinkFunc(func(*finding.Race) {})
	}
	return &Detector{
		k:    clock.New(clock.AllEdges),
		sink: sink,
		crit: map[critKey]*critHist{},
		race: finding.Race{Detector: "wcp", Evidence: finding.Predicted},
	}
}

// thr returns the WCP state of the goroutine with Tracker ID id.
func (d *Detector) thr(id uint32) *thread {
	for int(id) >= len(d.threads) {
		d.threads = append(d.threads, &thread{})
	}
	return d.threads[id]
}

// joinHard joins into t's P an HB clock h that reaches t over hard edges
// (fork, the untraced-goroutine rule), leaving t's own entry alone: the
// Tracker starts a goroutine's own entry at 1, which is no WCP fact.
func joinHard(p *vc.VectorClock, h vc.VectorClock, self uint32) {
	own := p.Get(trace.GID(self))
	p.Join(h)
	p.Set(trace.GID(self), own)
}

// Handle processes one event.
func (d *Detector) Handle(e *trace.Event) {
	t := d.k.Running(e)
	if t == nil {
		before := d.k.Counters().Untraced
		t = d.k.Start(e.G)
		if d.k.Counters().Untraced != before {
			// Born in untraced code: ordered after everything observed
			// (a hard edge), so its P starts at its H.
			w := d.thr(t.ID())
			joinHard(&w.p, t.Clock(), t.ID())
		}
	}
	w := d.thr(t.ID())
	switch e.Op {
	case trace.OpRead, trace.OpWrite:
		d.access(t, w, e)
	case trace.OpAlloc:
		if lo, hi, ok := e.AllocRange(); ok {
			d.shadow.Clear(lo, hi)
		}
		d.k.Sync(t, e) // a channel's message state (clock.Tracker.Sync)
	case trace.OpAcquire:
		d.acquire(t, w, e)
	case trace.OpRelease:
		d.release(t, w, e)
	case trace.OpSyncRelease:
		if !clock.Message(e) {
			d.senders(&d.syncs, e.Obj).publish(t.ID(), t.Clock())
		}
		d.k.Sync(t, e)
	case trace.OpSyncAcquire:
		if clock.Message(e) {
			// A channel event with its message: the hard edge is the
			// one the Tracker built, per message (detect/clock's
			// chan.go); what reached t over it joins P_t.
			d.k.Sync(t, e)
			joinHard(&w.p, d.k.Incoming(), t.ID())
			break
		}
		d.senders(&d.syncs, e.Obj).joinOthers(&w.p, t.ID())
		d.k.Sync(t, e)
	case trace.OpAtomicStore:
		d.senders(&d.atomics, e.Obj).publish(t.ID(), t.Clock())
		d.k.Sync(t, e)
	case trace.OpAtomicLoad:
		d.senders(&d.atomics, e.Obj).joinOthers(&w.p, t.ID())
		d.k.Sync(t, e)
	case trace.OpAtomicRMW:
		s := d.senders(&d.atomics, e.Obj)
		s.joinOthers(&w.p, t.ID())
		d.k.Sync(t, e)
		// Publish the clock the Tracker published (C_t after the join,
		// before its tick): the tick made own entry one too high.
		h := t.Clock().Clone()
		h.Set(trace.GID(t.ID()), h.Get(trace.GID(t.ID()))-1)
		s.publish(t.ID(), h)
	case trace.OpFork:
		d.k.Sync(t, e)
		if e.Obj <= 0xFFFFFFFF {
			if u := d.k.Lookup(trace.GID(e.Obj)); u != nil && u != t {
				joinHard(&d.thr(u.ID()).p, u.Clock(), u.ID())
			}
		}
	case trace.OpJoin:
		if e.Obj <= 0xFFFFFFFF {
			if u := d.k.Lookup(trace.GID(e.Obj)); u != nil && u != t {
				w.p.Join(u.Clock()) // the child's last event → join
			}
		}
		d.k.Sync(t, e)
	default:
		d.k.Sync(t, e)
	}
}

func (d *Detector) senders(m *shadow.Table[*senders], obj uint64) *senders {
	s := m.Get(obj)
	if *s == nil {
		*s = &senders{}
	}
	return *s
}

func (d *Detector) lock(obj uint64) *lockState {
	l := d.locks.Get(obj)
	if *l == nil {
		*l = &lockState{}
	}
	return *l
}

func (d *Detector) acquire(t *clock.Thread, w *thread, e *trace.Event) {
	l := d.lock(e.Obj)
	id := t.ID()
	if e.ReadLock() {
		// Hard edges: every exclusive release → this read acquire.
		l.excl.joinOthers(&w.p, id)
		d.k.Sync(t, e)
		return
	}
	// Rule (c), right composition: P_ℓ ≺ rel ≤HB this acquire.
	w.p.Join(l.p)
	// Hard edges: every read release → this exclusive acquire.
	l.readers.joinOthers(&w.p, id)
	d.k.Sync(t, e)
	l.log = append(l.log, acqRecord{tid: id, acq: t.Epoch().Clock()})
	if w.n == len(w.cs) {
		w.cs = append(w.cs, critSec{access: map[uint64]uint8{}})
	}
	cs := &w.cs[w.n]
	w.n++
	cs.lock, cs.logIdx = e.Obj, len(l.log)-1
	clear(cs.access)
}

func (d *Detector) release(t *clock.Thread, w *thread, e *trace.Event) {
	l := d.lock(e.Obj)
	id := t.ID()
	h := t.Clock() // H_t before the release's tick
	if e.ReadLock() {
		l.readers.publish(id, h)
		d.k.Sync(t, e)
		return
	}
	// The innermost open exclusive critical section of this lock (none in
	// an ill-formed trace: then only the clocks are published).
	ci := -1
	for i := w.n - 1; i >= 0; i-- {
		if w.cs[i].lock == e.Obj {
			ci = i
			break
		}
	}

	// Rule (b): every earlier critical section of ℓ by another goroutine
	// whose acquire is WCP-before this release has its release
	// WCP-before it too. The log is in acquire order, so the queue of the
	// paper is the log from this goroutine's cursor on; an acquire a1 of
	// goroutine u at epoch n is WCP-before the current point iff
	// n ≤ P_t(u) (P_t then covers all of C(a1)). Once one is not, no later
	// one is (a later acquire of ℓ comes after a1's release in HB).
	for len(l.cursor) <= int(id) {
		l.cursor = append(l.cursor, 0)
	}
	cur := l.cursor[id]
	for cur < len(l.log) {
		r := &l.log[cur]
		if r.tid == id {
			cur++
			continue
		}
		if r.relH == nil || r.acq > w.p.Get(trace.GID(r.tid)) {
			break
		}
		w.p.Join(r.relH)
		d.ruleB++
		cur++
	}
	l.cursor[id] = cur

	if ci >= 0 {
		cs := &w.cs[ci]
		if cs.logIdx < len(l.log) {
			l.log[cs.logIdx].relH = h.Clone()
		}
		// Rule (a)'s memory: this release's H for every address the
		// critical section touched (nested ones included: each access is
		// recorded in every open section).
		for addr, k := range cs.access {
			c := d.crit[critKey{e.Obj, addr}]
			if c == nil {
				c = &critHist{}
				d.crit[critKey{e.Obj, addr}] = c
			}
			if k&accRead != 0 {
				c.r.publish(id, h)
			}
			if k&accWrite != 0 {
				c.w.publish(id, h)
			}
		}
		// Close it, keeping its map for reuse.
		closed := w.cs[ci]
		copy(w.cs[ci:w.n], w.cs[ci+1:w.n])
		w.cs[w.n-1] = closed
		w.n--
	}
	l.p.Copy(w.p)
	l.excl.publish(id, h)
	d.k.Sync(t, e)
}

func (d *Detector) access(t *clock.Thread, w *thread, e *trace.Event) {
	d.accesses++
	write := e.Op == trace.OpWrite
	id := t.ID()

	// Rule (a): a critical section of ℓ that conflicts with this access
	// has its release WCP-before it, for every lock ℓ held exclusively.
	kind := uint8(accRead)
	if write {
		kind = accWrite
	}
	for i := 0; i < w.n; i++ {
		cs := &w.cs[i]
		cs.access[e.Obj] |= kind
		if c := d.crit[critKey{cs.lock, e.Obj}]; c != nil {
			c.w.joinOthers(&w.p, id)
			if write {
				c.r.joinOthers(&w.p, id)
			}
			d.ruleA++
		}
	}

	// The history and its checks are hb's, against P_t instead of C_t:
	// C_t(u) = P_t(u), u's accesses up to it are WCP-before. Atomic
	// accesses are plain ones here: WCP keeps the front end's lock private
	// to an atomic word (its critical sections conflict, so they order).
	repeat, added := d.shadow.Get(e.Obj).Access(w.p, id, t.Epoch().Clock(), e.Site, write, false, e.Seq,
		func(tid uint32, prev *hb.HistoryEntry) { d.report(e, tid, prev) })
	if repeat {
		d.sameEpoch++ // P_t has only grown since the repeat was checked
	}
	if added {
		d.entries++
	}
}

func (d *Detector) report(e *trace.Event, tid uint32, prev *hb.HistoryEntry) {
	d.races++
	r := &d.race
	r.Addr = e.Obj
	r.Prev = finding.Access{Seq: prev.Seq, G: d.k.Thread(tid).GID(), Site: prev.Site, Write: prev.Write}
	r.Cur = finding.Access{Seq: e.Seq, G: e.G, Site: e.Site, Write: e.Op == trace.OpWrite}
	d.sink.Report(r)
}

// Finish does nothing: wcp reports as it goes.
func (d *Detector) Finish() {}

// Stats returns the detector's counters: events, accesses, races (dynamic
// reports), illformed, same_epoch, shadow_addrs, shadow_entries,
// rule_a (accesses inside critical sections with a conflicting history),
// rule_b (releases ordered by rule b), crit_histories ((lock, address)
// pairs with a rule (a) history), goroutines, locks, sync_objects and
// atomic_words.
func (d *Detector) Stats() map[string]int64 {
	c := d.k.Counters()
	return map[string]int64{
		"events":         c.Events,
		"illformed":      c.IllFormed,
		"goroutines":     c.Goroutines,
		"locks":          c.Locks,
		"sync_objects":   c.SyncObjects,
		"atomic_words":   c.AtomicWords,
		"accesses":       d.accesses,
		"races":          d.races,
		"same_epoch":     d.sameEpoch,
		"shadow_addrs":   int64(d.shadow.Len()),
		"shadow_entries": d.entries,
		"rule_a":         d.ruleA,
		"rule_b":         d.ruleB,
		"crit_histories": int64(len(d.crit)),
	}
}
