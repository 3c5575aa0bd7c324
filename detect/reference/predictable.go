package reference

import (
	"fmt"
	"sort"
	"strings"

	"github.com/racekit/racekit/trace"
)

// Predictable is what PredictableRaces finds on a trace.
type Predictable struct {
	// Races are the pairs of conflicting accesses that some correct
	// reordering leaves both enabled, by event index, A < B.
	Races []Race
	// Deadlock reports whether some correct reordering reaches a state
	// where goroutines wait in a cycle, each for a lock the next holds
	// exclusively (a writer waiting for read-mode holders is not counted).
	Deadlock bool
	// States counts the distinct states enumerated.
	States int
}

// PredictableRaces enumerates, by brute force, every correct reordering of
// a small trace and returns the races they expose. It is the oracle the
// predictive detectors (mcm, rdit, wcp) are checked against, and it shares
// no code with them.
//
// A correct reordering (the maximal causal model of Huang et al. with the
// one conservative reading available when values are not recorded: every
// read sees the same write as in the trace) is a sequence of the trace's
// events in which:
//
//   - each goroutine runs a prefix of its own events, in order;
//   - a goroutine's first event comes after its Fork; a goroutine first seen
//     without a Fork (born in untraced code) starts after every event
//     observed before its first one;
//   - a Join comes after the joined goroutine's last event before it;
//   - a SyncAcquire (receive, Wait, ...) comes after every SyncRelease of its
//     object observed before it (docs/semantics.md's release-merge reading);
//   - an Alloc comes after every earlier access to its range and before
//     every later one;
//   - no exclusive critical section overlaps another critical section of
//     its lock (read-mode sections may overlap each other);
//   - every read (plain, atomic load, read-modify-write) sees the write it
//     saw in the trace (plain and atomic writes, read-modify-writes, Allocs
//     of its address), or no write if it saw none.
//
// MethodBegin/MethodEnd order nothing (the trace is taken as complete). A
// race is a pair of plain accesses to one address by two goroutines, at
// least one a write, that are both their goroutine's next event, with their
// Fork, birth, Join, SyncAcquire and Alloc predecessors run, in some state
// reachable by a correct reordering: their own values need not be
// consistent. Exponential: for traces of a few dozen events.
func PredictableRaces(t *trace.Trace) Predictable {
	o := newOracle(t)
	o.visit(o.initial())
	var out Predictable
	for r := range o.races {
		out.Races = append(out.Races, r)
	}
	sort.Slice(out.Races, func(i, j int) bool {
		a, b := out.Races[i], out.Races[j]
		if a.A != b.A {
			return a.A < b.A
		}
		return a.B < b.B
	})
	out.Deadlock = o.deadlock
	out.States = len(o.seen)
	return out
}

type oracle struct {
	evs   []trace.Event
	gs    []trace.GID // goroutines, in order of first event
	byG   [][]int     // per goroutine: its events
	g     []int       // per event: its goroutine's index
	local []int       // per event: its index among its goroutine's events
	// hard lists, per event, the events that must have run before it is
	// enabled (fork, untraced birth, join, sync, alloc edges).
	hard [][]int
	// rf is, per read, the write it saw (-1: none); -2 for a non-read.
	rf       []int
	races    map[Race]bool
	deadlock bool
	seen     map[string]bool
}

// state is a point of a reordering: how many events each goroutine ran,
// the last write of each address, the holders of each lock.
type state struct {
	pos     []int
	last    map[uint64]int
	excl    map[uint64]int // lock → goroutine index holding it exclusively
	readers map[uint64]int // lock → number of read-mode holders
}

func isRead(op trace.Op) bool {
	return op == trace.OpRead || op == trace.OpAtomicLoad || op == trace.OpAtomicRMW
}

func isWrite(op trace.Op) bool {
	return op == trace.OpWrite || op == trace.OpAtomicStore || op == trace.OpAtomicRMW
}

// written returns the addresses event e writes: its own, or an Alloc's
// range restricted to the addresses the trace accesses.
func (o *oracle) written(e *trace.Event, addrs []uint64) []uint64 {
	if isWrite(e.Op) {
		return []uint64{e.Obj}
	}
	if lo, hi, ok := e.AllocRange(); ok {
		var out []uint64
		for _, a := range addrs {
			if a >= lo && a < hi {
				out = append(out, a)
			}
		}
		return out
	}
	return nil
}

func newOracle(t *trace.Trace) *oracle {
	evs := t.Events
	o := &oracle{evs: evs, g: make([]int, len(evs)), local: make([]int, len(evs)), hard: make([][]int, len(evs)),
		rf: make([]int, len(evs)), races: map[Race]bool{}, seen: map[string]bool{}}
	idx := map[trace.GID]int{}
	forked := map[trace.GID]bool{}
	lastOf := map[trace.GID]int{}
	var addrs []uint64
	seenAddr := map[uint64]bool{}
	for i := range evs {
		if e := &evs[i]; (e.Op.IsAccess() || e.Op.IsAtomic()) && !seenAddr[e.Obj] {
			seenAddr[e.Obj] = true
			addrs = append(addrs, e.Obj)
		}
	}
	lastWrite := map[uint64]int{}
	for i := range evs {
		e := &evs[i]
		gi, ok := idx[e.G]
		if !ok {
			gi = len(o.gs)
			idx[e.G] = gi
			o.gs = append(o.gs, e.G)
			o.byG = append(o.byG, nil)
			if !forked[e.G] {
				for _, l := range lastOf {
					o.hard[i] = append(o.hard[i], l)
				}
			}
		}
		o.g[i] = gi
		o.local[i] = len(o.byG[gi])
		o.byG[gi] = append(o.byG[gi], i)
		switch e.Op {
		case trace.OpFork:
			forked[e.Child()] = true
		case trace.OpJoin:
			if l, ok := lastOf[e.Child()]; ok {
				o.hard[i] = append(o.hard[i], l)
			}
		case trace.OpSyncAcquire:
			for j := 0; j < i; j++ {
				if evs[j].Op == trace.OpSyncRelease && evs[j].Obj == e.Obj && evs[j].G != e.G {
					o.hard[i] = append(o.hard[i], j)
				}
			}
		}
		lastOf[e.G] = i
		o.rf[i] = -2
		if isRead(e.Op) {
			o.rf[i] = -1
			if w, ok := lastWrite[e.Obj]; ok {
				o.rf[i] = w
			}
		}
		for _, a := range o.written(e, addrs) {
			lastWrite[a] = i
		}
	}
	// Fork edges, now that every goroutine's first event is known.
	for i := range evs {
		if e := &evs[i]; e.Op == trace.OpFork {
			if c, ok := idx[e.Child()]; ok && o.byG[c][0] > i {
				f := o.byG[c][0]
				o.hard[f] = append(o.hard[f], i)
			}
		}
	}
	// Alloc edges: linearized with every access of another goroutine to
	// its range.
	for i := range evs {
		lo, hi, ok := evs[i].AllocRange()
		if !ok {
			continue
		}
		for j := range evs {
			x := &evs[j]
			if !(x.Op.IsAccess() || x.Op.IsAtomic()) || x.Obj < lo || x.Obj >= hi || x.G == evs[i].G {
				continue
			}
			if j < i {
				o.hard[i] = append(o.hard[i], j)
			} else {
				o.hard[j] = append(o.hard[j], i)
			}
		}
	}
	return o
}

func (o *oracle) initial() *state {
	return &state{pos: make([]int, len(o.gs)), last: map[uint64]int{}, excl: map[uint64]int{}, readers: map[uint64]int{}}
}

func (s *state) clone() *state {
	c := &state{pos: append([]int(nil), s.pos...), last: map[uint64]int{}, excl: map[uint64]int{}, readers: map[uint64]int{}}
	for k, v := range s.last {
		c.last[k] = v
	}
	for k, v := range s.excl {
		c.excl[k] = v
	}
	for k, v := range s.readers {
		c.readers[k] = v
	}
	return c
}

func (s *state) key() string {
	var b strings.Builder
	fmt.Fprint(&b, s.pos)
	keys := make([]uint64, 0, len(s.last))
	for k := range s.last {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		fmt.Fprintf(&b, " %d:%d", k, s.last[k])
	}
	return b.String()
}

func (o *oracle) ran(s *state, i int) bool { return o.local[i] < s.pos[o.g[i]] }

// next returns goroutine g's next event, or -1.
func (o *oracle) next(s *state, g int) int {
	if s.pos[g] < len(o.byG[g]) {
		return o.byG[g][s.pos[g]]
	}
	return -1
}

// enabled reports whether event i's hard predecessors all ran.
func (o *oracle) enabled(s *state, i int) bool {
	for _, p := range o.hard[i] {
		if !o.ran(s, p) {
			return false
		}
	}
	return true
}

// lockFree reports whether acquire i could take its lock now.
func (o *oracle) lockFree(s *state, i int) bool {
	e := &o.evs[i]
	if _, ok := s.excl[e.Obj]; ok {
		return false
	}
	return e.ReadLock() || s.readers[e.Obj] == 0
}

// canRun reports whether event i, its goroutine's next, may run now.
func (o *oracle) canRun(s *state, i int) bool {
	if !o.enabled(s, i) {
		return false
	}
	e := &o.evs[i]
	if e.Op == trace.OpAcquire && !o.lockFree(s, i) {
		return false
	}
	if w := o.rf[i]; w != -2 {
		got, ok := s.last[e.Obj]
		if !ok {
			got = -1
		}
		if got != w {
			return false
		}
	}
	return true
}

func (o *oracle) run(s *state, i int) {
	e := &o.evs[i]
	s.pos[o.g[i]]++
	switch e.Op {
	case trace.OpAcquire:
		if e.ReadLock() {
			s.readers[e.Obj]++
		} else {
			s.excl[e.Obj] = o.g[i]
		}
	case trace.OpRelease:
		if e.ReadLock() {
			if s.readers[e.Obj] > 0 {
				s.readers[e.Obj]--
			}
		} else if h, ok := s.excl[e.Obj]; ok && h == o.g[i] {
			delete(s.excl, e.Obj)
		}
	}
	if isWrite(e.Op) {
		s.last[e.Obj] = i
	} else if lo, hi, ok := e.AllocRange(); ok {
		for j := range o.evs {
			if x := &o.evs[j]; (x.Op.IsAccess() || x.Op.IsAtomic()) && x.Obj >= lo && x.Obj < hi {
				s.last[x.Obj] = i
			}
		}
	}
}

func (o *oracle) visit(s *state) {
	k := s.key()
	if o.seen[k] {
		return
	}
	o.seen[k] = true
	G := len(o.gs)
	for g1 := range G {
		a := o.next(s, g1)
		if a < 0 || !o.evs[a].Op.IsAccess() || !o.enabled(s, a) {
			continue
		}
		for g2 := g1 + 1; g2 < G; g2++ {
			b := o.next(s, g2)
			if b < 0 || !o.evs[b].Op.IsAccess() || !o.enabled(s, b) {
				continue
			}
			ea, eb := &o.evs[a], &o.evs[b]
			if ea.Obj != eb.Obj || (ea.Op != trace.OpWrite && eb.Op != trace.OpWrite) {
				continue
			}
			o.races[Race{A: min(a, b), B: max(a, b), Addr: ea.Obj}] = true
		}
	}
	if !o.deadlock && o.lockCycle(s) {
		o.deadlock = true
	}
	for g := range G {
		i := o.next(s, g)
		if i < 0 || !o.canRun(s, i) {
			continue
		}
		c := s.clone()
		o.run(c, i)
		o.visit(c)
	}
}

// lockCycle reports whether, in s, some goroutines wait in a cycle: each
// one's next event an enabled acquire of a lock that the next one holds.
func (o *oracle) lockCycle(s *state) bool {
	waitsFor := map[int]int{} // goroutine → the holder it waits for
	for g := range o.gs {
		i := o.next(s, g)
		if i < 0 || o.evs[i].Op != trace.OpAcquire || !o.enabled(s, i) {
			continue
		}
		if h, ok := s.excl[o.evs[i].Obj]; ok && h != g {
			waitsFor[g] = h
		}
	}
	for start := range waitsFor {
		g, steps := start, 0
		for steps <= len(waitsFor) {
			h, ok := waitsFor[g]
			if !ok {
				break
			}
			if h == start {
				return true
			}
			g = h
			steps++
		}
	}
	return false
}
