// Package deadlock predicts resource deadlocks from one recorded run: the
// lock-order cycles of iGoodlock (Joshi, Park, Sen, Naik: "A Randomized
// Dynamic Program Analysis Technique for Detecting Real Deadlocks", PLDI'09,
// section 3), with the refinements a Go trace allows.
//
// A lock dependency (section 3.1) is recorded at every acquire of a lock l
// by a goroutine t that holds a non-empty set H of locks: (t, H, l), with
// the sites where each lock of H was taken and where l is requested. A
// cycle of length m (section 3.2) is a chain of dependencies
// (t₁,H₁,l₁) … (t_m,H_m,l_m) in which
//
//   - the goroutines are distinct, and so are the requested locks;
//   - each requested lock is held by the next dependency, lᵢ ∈ Hᵢ₊₁, and
//     l_m ∈ H₁: each goroutine waits for the next;
//   - no two hold a lock in common (a guard lock: Hᵢ ∩ Hⱼ = ∅), counting
//     only locks held exclusively by one of them, since two read-mode
//     holders do not exclude each other;
//   - a link blocks: lᵢ is requested in write mode, or held in write mode
//     by the next (a reader does not wait for a reader; Go's RWMutex makes
//     a Lock wait for every RLock holder, so a writer waiting for readers
//     counts);
//   - no two requests are ordered by happens-before without lock edges
//     (fork, join, channels, WaitGroups, atomics): both requests of an
//     ordered pair cannot be pending at once, so Go's ordering rules out
//     what iGoodlock's thread-creation-only order would keep.
//
// Go's RWMutex adds one more (RecursiveRead): a goroutine that read-locks
// a lock it already holds in read mode, while another goroutine's Lock of
// it is unordered with the second RLock. A pending Lock excludes new
// readers, so a Lock that arrives between the two RLocks deadlocks both;
// sync's documentation forbids recursive read locking for this reason.
//
// A lock held across a channel operation adds another (LockChannel): a
// goroutine A holds a lock exclusively while it blocks in a channel
// operation (a receive, or a send on an unbuffered channel), and the
// goroutine B whose operation completed A's took that lock earlier in its
// own order, unordered with A's operation. If A takes the lock first, B
// waits for it before it reaches the operation A waits for: a deadlock of
// a lock and a channel, which no lock-order cycle shows.
//
// Cycles are potential deadlocks: the recorded run did not deadlock, and
// another interleaving may. Data and control flow are not modelled (a
// reordering may change what a goroutine does), so a reported cycle can be
// infeasible; DeadlockFuzzer-style directed scheduling is what confirms
// one. The search bounds the cycle length (Options.MaxLength); a
// dependency (goroutine, held locks and sites, lock and site) is kept once
// per distinct clock, up to maxInstances (iGoodlock keeps one per
// abstraction, which loses the instance that is concurrent when another
// is ordered).
package deadlock

import (
	"slices"
	"sort"

	"github.com/racekit/racekit/detect/clock"
	"github.com/racekit/racekit/detect/vc"
	"github.com/racekit/racekit/trace"
)

// Held is a lock held at a dependency, with where it was taken.
type Held struct {
	Lock  uint64
	Read  bool
	Site  trace.SiteID // the acquire that took it
	Seq   uint64
	Stack []trace.Site // its stack then, innermost first (Options.Stack)
}

// Dep is a lock dependency: goroutine G, holding Held, requests Lock.
type Dep struct {
	G     trace.GID
	Held  []Held
	Lock  uint64
	Read  bool         // requested in read mode
	Site  trace.SiteID // the request
	Seq   uint64       // the request's event
	Stack []trace.Site // the request's stack, innermost first (Options.Stack)
	// Chan: the request is a channel operation on channel Lock (a send
	// if Send), not a lock's (LockChannel's waiter).
	Chan, Send bool
	// Then is, for LockChannel's lock requester, the site of its channel
	// operation after the request, which the waiter waits for.
	Then trace.SiteID

	epoch vc.Epoch
	clock vc.VectorClock
}

// holds reports whether d holds lock, and whether exclusively.
func (d *Dep) holds(lock uint64) (held, write bool) {
	for _, h := range d.Held {
		if h.Lock == lock {
			held = true
			write = write || !h.Read
		}
	}
	return held, write
}

// Cycle is a potential deadlock: Deps[i] waits for a lock Deps[i+1] holds,
// and the last for one the first holds.
type Cycle struct {
	Kind CycleKind
	Deps []Dep
}

// CycleKind says what waits for what.
type CycleKind uint8

const (
	// LockOrder is iGoodlock's cycle.
	LockOrder CycleKind = iota
	// RecursiveRead is Go's RWMutex read-write-read: Deps[0] holds the
	// lock in read mode and read-locks it again; Deps[1], another
	// goroutine, write-locks it unordered with that second RLock. A
	// pending Lock makes new RLocks wait (sync.RWMutex: "a blocked Lock
	// call excludes new readers"), so if the Lock comes between the two
	// RLocks, the writer waits for the reader and the reader for the
	// writer.
	RecursiveRead
	// LockChannel is a lock held across a channel operation: Deps[0]
	// holds Deps[1].Lock and waits in a channel operation on Deps[0].Lock
	// (Chan set); Deps[1], unordered with it, requests that lock before
	// its own operation on the channel (at Then), the one that completes
	// Deps[0]'s.
	LockChannel
)

// Options bound the search.
type Options struct {
	// MaxLength is the longest cycle searched (default 4; iGoodlock's
	// evaluation found none longer than 2 in real programs).
	MaxLength int
	// MaxCycles stops the search after this many cycles (default 1000).
	MaxCycles int
	// Stack, if set, gives goroutine g's stack at the event being
	// handled, innermost first: the stack of each acquire is kept.
	Stack func(g trace.GID) []trace.Site
}

// Detector records dependencies as events arrive and finds the cycles at
// Finish. It implements detect.Detector and detect.Stats.
type Detector struct {
	opt   Options
	k     clock.Tracker
	taken map[trace.GID][]Held // per goroutine: its holds, with sites
	deps  []Dep
	seen  map[string][]int // per dependency key: its instances kept
	// writers: per lock, its write-mode acquires (Held empty), one per
	// goroutine, site and clock, up to maxInstances per goroutine and site.
	writers map[uint64][]Dep
	wseen   map[string][]int
	cycles  []Cycle
	stats   map[string]int64

	// For LockChannel: each goroutine's latest acquire of each lock, the
	// channel operations begun and not completed by channel, and the
	// (waiter site, lock, requester site, operation site) already reported.
	lastAcq  map[trace.GID]map[uint64]acquire
	chanOps  map[uint64][]chanOp
	inChan   map[trace.GID][]uint64
	lcReport map[[4]uint64]bool
}

// acquire is an acquire kept for LockChannel: where, and its epoch.
type acquire struct {
	site  trace.SiteID
	seq   uint64
	epoch vc.Epoch
	stack []trace.Site
}

// chanOp is a channel operation begun and not completed. held and clock
// are set when its goroutine held locks exclusively then.
type chanOp struct {
	g     trace.GID
	send  bool
	site  trace.SiteID
	seq   uint64
	held  []Held
	stack []trace.Site
	epoch vc.Epoch
	clock vc.VectorClock
}

// New returns a detector.
func New(opt Options) *Detector {
	if opt.MaxLength <= 0 {
		opt.MaxLength = 4
	}
	if opt.MaxCycles <= 0 {
		opt.MaxCycles = 1000
	}
	return &Detector{opt: opt, k: clock.New(clock.NoLockEdges), taken: map[trace.GID][]Held{}, seen: map[string][]int{}, writers: map[uint64][]Dep{}, wseen: map[string][]int{}, stats: map[string]int64{},
		lastAcq: map[trace.GID]map[uint64]acquire{}, chanOps: map[uint64][]chanOp{}, inChan: map[trace.GID][]uint64{}, lcReport: map[[4]uint64]bool{}}
}

// Handle processes one event.
func (d *Detector) Handle(e *trace.Event) {
	t := d.k.Running(e)
	if t == nil {
		t = d.k.Start(e.G)
	}
	atomicLock := e.Obj&trace.AtomicLockBit != 0 // the front end's lock around an atomic op
	switch {
	case e.Op.IsAccess():
		return
	case atomicLock:
	case e.Op == trace.OpAcquire:
		held := d.taken[e.G]
		h := Held{Lock: e.Obj, Read: e.ReadLock(), Site: e.Site, Seq: e.Seq}
		if d.opt.Stack != nil {
			h.Stack = d.opt.Stack(e.G)
		}
		if len(held) > 0 {
			d.addDep(t, e, held, h.Stack)
		}
		if !h.Read {
			d.addWriter(t, e, h.Stack)
		}
		d.taken[e.G] = append(held, h)
		la := d.lastAcq[e.G]
		if la == nil {
			la = map[uint64]acquire{}
			d.lastAcq[e.G] = la
		}
		la[e.Obj] = acquire{site: e.Site, seq: e.Seq, epoch: t.Epoch(), stack: h.Stack}
	case e.Flags&trace.FlagMessage != 0 && (e.Op == trace.OpSyncRelease || e.Op == trace.OpSyncAcquire):
		d.chanEvent(t, e)
	case e.Op == trace.OpRelease:
		if !d.release(e.G, e.Obj) {
			// A Mutex unlocked by another goroutine than the one that
			// locked it (a semaphore: Go allows it): the holder no longer
			// holds it.
			for g := range d.taken {
				if d.release(g, e.Obj) {
					break
				}
			}
		}
	}
	d.k.Sync(t, e)
}

// release drops lock from goroutine g's holds, reporting whether g held it.
func (d *Detector) release(g trace.GID, lock uint64) bool {
	held := d.taken[g]
	for i := len(held) - 1; i >= 0; i-- {
		if held[i].Lock == lock {
			d.taken[g] = slices.Delete(held, i, i+1)
			return true
		}
	}
	return false
}

func (d *Detector) addDep(t *clock.Thread, e *trace.Event, held []Held, stack []trace.Site) {
	d.stats["acquires_nested"]++
	key := make([]byte, 0, 64)
	key = appendU(key, uint64(e.G), e.Obj, uint64(e.Site), b2u(e.ReadLock()))
	for _, h := range held {
		key = appendU(key, h.Lock, uint64(h.Site), b2u(h.Read))
	}
	keep, full := keepInstance(d.seen, d.deps, string(key), t.Clock())
	if full {
		d.stats["instances_dropped"]++
	}
	if !keep {
		return
	}
	d.deps = append(d.deps, Dep{
		G: e.G, Held: slices.Clone(held), Lock: e.Obj, Read: e.ReadLock(), Site: e.Site, Seq: e.Seq, Stack: stack,
		epoch: t.Epoch(), clock: t.Clock().Clone(),
	})
}

// chanEvent follows channel operations for LockChannel: a begin is matched
// against the other direction's operations pending on the channel (the one
// that completes it is among them, or begins later and is matched then);
// a completion ends the goroutine's pending operations.
func (d *Detector) chanEvent(t *clock.Thread, e *trace.Event) {
	m := trace.ChanMsg(e.Value)
	c := e.Obj &^ 1 // events on c+1 belong to channel c
	switch m.Kind() {
	case trace.MsgSend, trace.MsgRecv:
	case trace.MsgClose:
		return
	default: // a completion: what the goroutine had begun is done
		for _, ch := range d.inChan[e.G] {
			ops := d.chanOps[ch]
			ops = slices.DeleteFunc(ops, func(o chanOp) bool { return o.g == e.G })
			if len(ops) == 0 {
				delete(d.chanOps, ch)
			} else {
				d.chanOps[ch] = ops
			}
		}
		d.inChan[e.G] = d.inChan[e.G][:0]
		return
	}
	op := chanOp{g: e.G, send: m.Kind() == trace.MsgSend, site: e.Site, seq: e.Seq}
	// A send into a buffer does not wait; a receive may (an empty buffer).
	if held := exclusive(d.taken[e.G]); len(held) > 0 && (!op.send || m.Cap() == 0) {
		op.held, op.epoch, op.clock = held, t.Epoch(), t.Clock().Clone()
		if d.opt.Stack != nil {
			op.stack = d.opt.Stack(e.G)
		}
	}
	for _, o := range d.chanOps[c] {
		if o.g == e.G || o.send == op.send {
			continue
		}
		d.lockChannel(c, &o, op.g, op.site)
		d.lockChannel(c, &op, o.g, o.site)
	}
	d.chanOps[c] = append(d.chanOps[c], op)
	d.inChan[e.G] = append(d.inChan[e.G], c)
}

// lockChannel reports waiter's locks that goroutine g, whose operation at
// site on channel c completes waiter's, took before it, unordered with
// waiter's operation.
func (d *Detector) lockChannel(c uint64, waiter *chanOp, g trace.GID, site trace.SiteID) {
	for _, h := range waiter.held {
		a, ok := d.lastAcq[g][h.Lock]
		if !ok || a.epoch.Leq(waiter.clock) {
			continue // never taken by g, or taken before waiter's operation could begin
		}
		key := [4]uint64{uint64(waiter.site), h.Lock, uint64(a.site), uint64(site)}
		if d.lcReport[key] {
			continue
		}
		d.lcReport[key] = true
		d.cycles = append(d.cycles, Cycle{Kind: LockChannel, Deps: []Dep{
			{G: waiter.g, Held: waiter.held, Lock: c, Chan: true, Send: waiter.send, Site: waiter.site, Seq: waiter.seq, Stack: waiter.stack},
			{G: g, Lock: h.Lock, Site: a.site, Seq: a.seq, Stack: a.stack, Then: site},
		}})
		d.stats["lock_channel"]++
	}
}

// exclusive returns the locks of held held in write mode.
func exclusive(held []Held) []Held {
	var out []Held
	for _, h := range held {
		if !h.Read {
			out = append(out, h)
		}
	}
	return out
}

// addWriter keeps a write-mode acquire for the recursive-read check.
func (d *Detector) addWriter(t *clock.Thread, e *trace.Event, stack []trace.Site) {
	key := string(appendU(nil, uint64(e.G), e.Obj, uint64(e.Site)))
	ws := d.writers[e.Obj]
	if keep, _ := keepInstance(d.wseen, ws, key, t.Clock()); !keep {
		return
	}
	d.writers[e.Obj] = append(ws, Dep{G: e.G, Lock: e.Obj, Site: e.Site, Seq: e.Seq, Stack: stack,
		epoch: t.Epoch(), clock: t.Clock().Clone()})
}

// recursiveReads reports each second RLock of a lock its goroutine holds
// in read mode that some other goroutine's Lock of it is unordered with
// (the first such writer).
func (d *Detector) recursiveReads() {
	for i := range d.deps {
		r := &d.deps[i]
		if held, write := r.holds(r.Lock); !r.Read || !held || write {
			continue
		}
		for j := range d.writers[r.Lock] {
			w := &d.writers[r.Lock][j]
			if w.G == r.G || r.epoch.Leq(w.clock) || w.epoch.Leq(r.clock) {
				continue
			}
			d.cycles = append(d.cycles, Cycle{Kind: RecursiveRead, Deps: []Dep{*r, *w}})
			d.stats["recursive_reads"]++
			break
		}
	}
}

// keepInstance says whether an instance of key at clock c is kept in
// list, and if so records it as list's next element in seen: one instance
// per key and ordering (a later one with the same clock orders and is
// ordered by exactly what the kept one is), up to maxInstances (full:
// dropped for that bound).
func keepInstance(seen map[string][]int, list []Dep, key string, c vc.VectorClock) (keep, full bool) {
	last := seen[key]
	if len(last) > 0 && slices.Equal(list[last[len(last)-1]].clock, c) {
		return false, false
	}
	if len(last) >= maxInstances {
		return false, true
	}
	seen[key] = append(last, len(list))
	return true, false
}

func appendU(b []byte, xs ...uint64) []byte {
	for _, x := range xs {
		for i := 0; i < 8; i++ {
			b = append(b, byte(x>>(8*i)))
		}
	}
	return b
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// maxInstances bounds the instances of one dependency (goroutine, held
// locks and sites, lock and site) kept with different clocks: a loop that
// synchronizes between its nested acquires would add one per iteration.
const maxInstances = 8

// Finish searches the cycles.
func (d *Detector) Finish() {
	d.stats["dependencies"] = int64(len(d.deps))
	// holders[l]: the dependencies that hold l.
	holders := map[uint64][]int{}
	for i := range d.deps {
		for _, h := range d.deps[i].Held {
			if len(holders[h.Lock]) == 0 || holders[h.Lock][len(holders[h.Lock])-1] != i {
				holders[h.Lock] = append(holders[h.Lock], i)
			}
		}
	}
	chain := make([]int, 0, d.opt.MaxLength)
	var extend func() bool
	extend = func() bool {
		last := &d.deps[chain[len(chain)-1]]
		for _, j := range holders[last.Lock] {
			if j < chain[0] {
				continue // each cycle once, from its least dependency
			}
			next := &d.deps[j]
			if !d.blocks(last, next) || !d.compatible(chain, next) {
				continue
			}
			d.stats["chain_steps"]++
			first := &d.deps[chain[0]]
			chain = append(chain, j)
			if len(chain) >= 2 && d.blocks(next, first) {
				d.report(chain)
				if len(d.cycles) >= d.opt.MaxCycles {
					return false
				}
			}
			if len(chain) < d.opt.MaxLength && !extend() {
				return false
			}
			chain = chain[:len(chain)-1]
		}
		return true
	}
	for i := range d.deps {
		chain = append(chain[:0], i)
		if !extend() {
			d.stats["truncated"] = 1
			break
		}
	}
	d.recursiveReads()
	d.stats["cycles"] = int64(len(d.cycles))
}

// blocks says whether a's request waits for b: b holds a's lock, and one
// of them wants it exclusively.
func (d *Detector) blocks(a, b *Dep) bool {
	held, write := b.holds(a.Lock)
	return held && (write || !a.Read)
}

// compatible says whether next can join chain: another goroutine, another
// requested lock, no guard lock in common, no happens-before between the
// requests.
func (d *Detector) compatible(chain []int, next *Dep) bool {
	for _, i := range chain {
		c := &d.deps[i]
		if c.G == next.G || c.Lock == next.Lock {
			return false
		}
		for _, h := range c.Held {
			if held, write := next.holds(h.Lock); held && (write || !h.Read) {
				return false // a guard lock
			}
		}
		if c.epoch.Leq(next.clock) || next.epoch.Leq(c.clock) {
			return false // ordered requests
		}
	}
	return true
}

// report keeps a cycle found by the search (chain's order: each waits for
// the next).
func (d *Detector) report(chain []int) {
	c := Cycle{}
	for _, i := range chain {
		c.Deps = append(c.Deps, d.deps[i])
	}
	d.cycles = append(d.cycles, c)
}

// Cycles returns the cycles found, ordered by their requests' sites.
func (d *Detector) Cycles() []Cycle {
	out := slices.Clone(d.cycles)
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Deps[0].Seq < out[j].Deps[0].Seq
	})
	return out
}

// Stats returns counters: nested acquires seen, dependencies kept, search
// steps, cycles, and whether the search stopped at MaxCycles.
func (d *Detector) Stats() map[string]int64 {
	out := map[string]int64{}
	for k, v := range d.stats {
		out[k] = v
	}
	c := d.k.Counters()
	out["illformed"] = c.IllFormed
	return out
}
