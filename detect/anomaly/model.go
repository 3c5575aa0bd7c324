package anomaly

import (
	"sort"
	"sync"

	"github.com/racekit/racekit/detect/clock"
	"github.com/racekit/racekit/detect/vc"
	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/trace"
)

// Model is the trace with PECAN's per-event attributes (§4.1) computed
// offline, and the compact encoding of the partial and temporal order
// graph (§5.1): indices by goroutine, address and atomic region, and the
// partial order relation kept only at thread-communication events.
//
// Events are identified by their index in Events (an "event index"); a
// goroutine's own events are numbered 0, 1, 2, ... (its "position").
type Model struct {
	Meta   *trace.Meta
	Events []trace.Event

	g      []int32  // dense goroutine of each event (order of first appearance)
	pos    []int32  // position of each event in its goroutine
	ls     []uint32 // interned lockset held when the event executes (before its effect)
	oml    []int32  // position of the acquire of the outermost lock held, -1 if none
	region []int32  // atomic region (outermost), 0 = none
	lt     []uint32 // the goroutine's own clock entry at the event
	snap   []int32  // index of the goroutine's clock snapshot in effect at the event

	gs      []gor
	sets    locksets
	regions []region // by ID; regions[0] is "none"

	byAddr map[uint64][]int32 // data accesses per address, trace order
	addrs  []uint64           // addresses with at least one access, sorted

	omitOnce sync.Once
	omit     []bool // compactable ops (omittable)
	siteOnce sync.Once
	siteStr  [][2]string // clip strings per site (siteStrings)

	prefixOnce  sync.Once
	tracePrefix *tracePrefix // see prefix
}

type gor struct {
	gid    trace.GID
	tid    uint32           // the clock.Tracker's ID, which indexes vector clocks
	ev     []int32          // event indices in program order
	snaps  []vc.VectorClock // C_t after each change by an incoming edge
	name   string           // stable creation-order name
	parent int32            // dense parent, -1 if none
}

type region struct {
	g           int32
	first, last int32   // event indices
	acc         []int32 // data accesses in it, program order
}

// Options tune how attributes are computed and how much the search tries.
type Options struct {
	// AtomicFunc says whether invocations of the named function are atomic
	// regions. PECAN takes synchronized methods (§4.1); Go has none, so by
	// default (nil) only critical sections and explicit RegionBegin/End
	// annotations are regions: making every traced function atomic would
	// make each goroutine's whole body one region (its entry function) and
	// flag every pair of its accesses.
	AtomicFunc func(name string) bool
	// Attempts bounds how many dynamic instances of one distinct anomaly
	// (pattern and source-line combination) are tried when their generated
	// schedule is infeasible; 0 means 4.
	Attempts int
	// KeepInfeasible also reports anomalies for which no feasible clip was
	// generated (Clip.Feasible false); by default they are pruned, which
	// §6.2's Theorem 1 justifies for nested locking.
	KeepInfeasible bool
	// PrefixCap, when positive, stops expanding a prefix of sites (the
	// first steps of a pattern) once it has led to that many full
	// candidates, counting those the partial order rules out: the search
	// then runs without its order pruning (see Find), and misses
	// anomalies (on the 500K-event benchmark trace, a cap of 4 finds 11
	// of the 53, in about half the time). 0: no cap.
	PrefixCap int
	// Budget bounds the search steps (partial candidate tuples) the
	// generic search examines per pattern; 0 means 20 million.
	// Exceeding it is counted in Stats (budget_exhausted) and the
	// pattern's search stops there. Bindings pruned by the partial order
	// do not count.
	Budget int64
	// SiteEvents bounds how many events of one site the search binds to a
	// pattern step in one enumeration (one goroutine's accesses to a
	// variable, or one region's accesses): every event of a site is a
	// candidate (§5.2), and beyond the first SiteEvents the search still
	// tries an event whose lockset differs from every one tried at that
	// site, so that a statement run both under a lock and outside it is
	// tried outside it. The events left out are counted in Stats
	// (site_events_skipped). 0 means DefaultSiteEvents; negative, no
	// bound.
	SiteEvents int

	// Clips chooses full or compact clips (see Clip); by default
	// (ClipAuto) a clip is full up to FullClipSteps events.
	Clips ClipMode

	noPrune bool // tests: search without the order pruning (see generic)
}

// atomicFunc applies Options.AtomicFunc to a FuncEnter event: the function
// is its object's name in a written trace (enter(pkg.F)); a recorded trace
// leaves function objects unnamed and gives the name as the entry site's
// function.
func atomicFunc(f func(string) bool, m *trace.Meta, e *trace.Event) bool {
	if n := m.NameOf(e.Obj); n != "" && f(n) {
		return true
	}
	fn := m.Site(e.Site).Func
	return fn != "" && f(fn)
}

// DefaultSiteEvents is Options.SiteEvents's default.
const DefaultSiteEvents = 8

// boundary reports whether op ends the current atomic region: PECAN's
// fork, join, wait and notify (§4.1), in Go goroutine creation/joining and
// the message ops (channel, WaitGroup, Once, Cond). Begin and End bound the
// goroutine anyway. Atomics do not block, like Java volatiles, and do not
// split regions.
func boundary(op trace.Op) bool {
	switch op {
	case trace.OpFork, trace.OpJoin, trace.OpSyncRelease, trace.OpSyncAcquire, trace.OpBegin, trace.OpEnd:
		return true
	}
	return false
}

type hold struct {
	lock uint64
	read bool
	pos  int32
}

type gstate struct {
	held      []hold
	ls        uint32
	userDepth int // open RegionBegin
	funcStack []bool
	funcDepth int // open atomic functions
	cur       int32
}

func (s *gstate) active() bool { return len(s.held) > 0 || s.userDepth > 0 || s.funcDepth > 0 }

// NewModel reads every event of tr into memory and computes the
// attributes. It never fails on ill-formed input: releases of locks not
// held, unbalanced regions and the like are tolerated like detect/clock
// does.
func NewModel(tr *trace.Trace, opt Options) *Model {
	n := len(tr.Events)
	m := &Model{
		Meta: tr.M, Events: tr.Events,
		g: make([]int32, n), pos: make([]int32, n), ls: make([]uint32, n), oml: make([]int32, n),
		region: make([]int32, n), lt: make([]uint32, n), snap: make([]int32, n),
		sets: newLocksets(), regions: []region{{g: -1}}, byAddr: map[uint64][]int32{},
	}
	k := clock.New(clock.NoLockEdges)
	dense := map[trace.GID]int32{}
	var st []gstate
	for i := range tr.Events {
		e := &tr.Events[i]
		gi, ok := dense[e.G]
		if !ok {
			gi = int32(len(m.gs))
			dense[e.G] = gi
			m.gs = append(m.gs, gor{gid: e.G, parent: -1})
			st = append(st, gstate{})
		}
		t := k.Running(e)
		if t == nil {
			t = k.Start(e.G)
		}
		gr := &m.gs[gi]
		s := &st[gi]
		gr.tid = t.ID()
		if len(gr.ev) == 0 {
			gr.snaps = append(gr.snaps, t.Clock().Clone())
		}
		m.g[i] = gi
		m.pos[i] = int32(len(gr.ev))
		gr.ev = append(gr.ev, int32(i))
		m.ls[i] = s.ls
		m.oml[i] = -1
		if len(s.held) > 0 {
			m.oml[i] = s.held[0].pos
		}
		m.lt[i] = t.Epoch().Clock()
		m.snap[i] = int32(len(gr.snaps) - 1)

		// Atomic regions: the region opens with the first construct and
		// is kept while any is open (outermost wins); a boundary event
		// belongs to none and splits the region around it.
		wasActive := s.active() || e.Op == trace.OpAcquire
		switch e.Op {
		case trace.OpRegionBegin:
			s.userDepth++
		case trace.OpFuncEnter:
			at := opt.AtomicFunc != nil && atomicFunc(opt.AtomicFunc, tr.M, e)
			s.funcStack = append(s.funcStack, at)
			if at {
				s.funcDepth++
			}
		}
		switch {
		case boundary(e.Op):
			s.cur = 0
		case s.active() || wasActive:
			if s.cur == 0 {
				s.cur = int32(len(m.regions))
				m.regions = append(m.regions, region{g: gi, first: int32(i)})
			}
			m.region[i] = s.cur
			r := &m.regions[s.cur]
			r.last = int32(i)
			if e.Op.IsAccess() {
				r.acc = append(r.acc, int32(i))
			}
		}
		switch e.Op {
		case trace.OpRegionEnd:
			if s.userDepth > 0 {
				s.userDepth--
			}
		case trace.OpFuncExit:
			if l := len(s.funcStack); l > 0 {
				if s.funcStack[l-1] {
					s.funcDepth--
				}
				s.funcStack = s.funcStack[:l-1]
			}
		}
		if !s.active() && e.Op != trace.OpAcquire {
			s.cur = 0
		}

		if e.Op.IsAccess() {
			if _, ok := m.byAddr[e.Obj]; !ok {
				m.addrs = append(m.addrs, e.Obj)
			}
			m.byAddr[e.Obj] = append(m.byAddr[e.Obj], int32(i))
			continue
		}
		k.Sync(t, e)
		switch e.Op {
		case trace.OpAcquire:
			s.held = append(s.held, hold{e.Obj, e.ReadLock(), m.pos[i]})
			s.ls = m.sets.of(s.held)
		case trace.OpRelease:
			j := findHold(s.held, e.Obj, e.ReadLock())
			if j < 0 {
				j = findHold(s.held, e.Obj, !e.ReadLock())
			}
			if j >= 0 {
				s.held = append(s.held[:j], s.held[j+1:]...)
				s.ls = m.sets.of(s.held)
			}
			if !s.active() {
				s.cur = 0
			}
		case trace.OpFork:
			if c := trace.GID(e.Obj); c != e.G {
				if _, seen := dense[c]; !seen && e.Obj <= 0xFFFFFFFF {
					ci := int32(len(m.gs))
					dense[c] = ci
					m.gs = append(m.gs, gor{gid: c, parent: gi})
					st = append(st, gstate{})
				}
			}
		case trace.OpSyncAcquire, trace.OpAtomicLoad, trace.OpAtomicRMW, trace.OpJoin:
			c := t.Clock()
			if last := gr.snaps[len(gr.snaps)-1]; !sameClock(last, c) {
				gr.snaps = append(gr.snaps, c.Clone())
			}
			// The acquiring event itself comes after the edge's source.
			m.snap[i] = int32(len(gr.snaps) - 1)
		}
	}
	// Stable names by creation order (PECAN §7), the names the controlled
	// scheduler gives the goroutines of a re-execution.
	names := sched.Names(tr)
	for i := range m.gs {
		m.gs[i].name = names[m.gs[i].gid]
	}
	sort.Slice(m.addrs, func(a, b int) bool { return m.addrs[a] < m.addrs[b] })
	return m
}

func findHold(h []hold, lock uint64, read bool) int {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].lock == lock && h[i].read == read {
			return i
		}
	}
	return -1
}

func sameClock(a, b vc.VectorClock) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// por reports the partial order relation e_a → e_b (Definition 1, with Go's
// communication edges: fork/join, snd→rcv, atomic store/RMW → load/RMW, the
// untraced-goroutine rule; no lock edges): program order within a
// goroutine, else a path through communication events, read off the
// clock snapshot of b.
func (m *Model) por(a, b int32) bool {
	if a == b {
		return true
	}
	if a > b {
		return false
	}
	ga, gb := m.g[a], m.g[b]
	if ga == gb {
		return true
	}
	c := m.gs[gb].snaps[m.snap[b]]
	return m.lt[a] <= c.Get(trace.GID(m.gs[ga].tid))
}

// ordered reports whether a and b are ordered either way.
func (m *Model) ordered(a, b int32) bool {
	if a > b {
		a, b = b, a
	}
	return m.por(a, b)
}

// protects reports whether the locksets held at a and b share a lock held
// in write mode by at least one of them (the hybrid lockset condition).
func (m *Model) protects(a, b int32) bool { return m.sets.protects(m.ls[a], m.ls[b]) }

// independent is Algorithm 1's mutation condition: no common lock and no
// partial order. (The paper prints l(i) ∩ l(j) ≠ ∅, a typo: §4.2 defines
// independence by an empty intersection.)
func (m *Model) independent(a, b int32) bool { return !m.protects(a, b) && !m.ordered(a, b) }

func (m *Model) isWrite(i int32) bool { return m.Events[i].Op == trace.OpWrite }

// Regions returns the number of atomic regions found (for stats and tests).
func (m *Model) Regions() int { return len(m.regions) - 1 }
