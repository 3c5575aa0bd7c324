package anomaly

import (
	"math"
	"sort"

	"github.com/racekit/racekit/trace"
)

// Schedule generation (§6). PECAN transforms the original trace by moving
// events: Algorithm 3 moves the events that depend on v_i after v_j and
// the outermost lock (OML) block of v_i right before v_j; Algorithm 4 moves
// the events of v_x..v_j that depend on v_x after v_k; everything past the
// violation point is removed. We obtain the same schedules by replaying the
// original trace in its own order (so that everything not moved keeps its
// place, the paper's second tactic) while holding back the goroutines of
// the anomaly's events at hold points, and stopping at the last anomaly
// event (the third tactic):
//
//   - a goroutine whose next anomaly event is E[n] stops at its hold point
//     until E[0..n-1] have run; the hold point is the OML node of E[n] (the
//     acquire of the outermost lock it holds there, if taken after the
//     goroutine's previous anomaly event), else E[n] itself; this is how
//     the paper keeps a moved unlock with its lock (§6.1, Figure 5);
//   - for consecutive steps (data races) E[n] runs only once E[n+1]'s
//     goroutine stands at E[n+1] ready to run, and E[n+1] runs right after.
//     Algorithm 3 lets E[n+1]'s goroutine arrive first and moves the OML
//     block of E[n] right before it (strategy secondFirst); when that
//     deadlocks we also try the mirror image (firstFirst).
//
// An event runs only when its partial-order predecessors have run (read off
// the clock snapshots) and its lock is free. When nothing can run the
// attempt fails: for nested locking §6.2's Theorem 1 says this only happens
// for false anomalies.
type strategy uint8

const (
	secondFirst strategy = iota
	firstFirst
)

type scheduler struct {
	m       *Model
	P       []int32 // anomaly events, in pattern order
	gP, pP  []int32 // their goroutines and positions
	H       []int32 // hold points (positions)
	consec  bool
	strat   strategy
	next    []int32 // per goroutine: position of its next event
	pending []int32 // per goroutine: its next anomaly step, -1 if none
	deps    []int32 // per goroutine: snapshot whose predecessors are known to have run, -1
	locks   map[uint64]*lockHolders
	done    int
	out     []int32
}

type lockHolders struct {
	writer  int32 // goroutine holding it exclusively, -1
	readers int32
}

// generate returns a schedule (event indices) that runs the events P in
// order (back to back when consecutive), or false.
func (m *Model) generate(P []int32, consecutive bool) ([]int32, bool) {
	strats := []strategy{secondFirst}
	if consecutive {
		strats = append(strats, firstFirst)
	}
	for _, st := range strats {
		if s, ok := m.scheduleWith(P, consecutive, st); ok {
			return s, true
		}
	}
	return nil, false
}

func (m *Model) scheduleWith(P []int32, consecutive bool, st strategy) ([]int32, bool) {
	k := len(P)
	s := &scheduler{m: m, P: P, consec: consecutive, strat: st,
		gP: make([]int32, k), pP: make([]int32, k), H: make([]int32, k),
		next: make([]int32, len(m.gs)), pending: make([]int32, len(m.gs)), deps: make([]int32, len(m.gs)),
		locks: map[uint64]*lockHolders{}}
	for g := range s.pending {
		s.pending[g] = -1
		s.deps[g] = -1
	}
	for n, e := range P {
		g := m.g[e]
		s.gP[n], s.pP[n] = g, m.pos[e]
		prev := int32(-1)
		for j := n - 1; j >= 0; j-- {
			if s.gP[j] == g {
				prev = s.pP[j]
				if prev >= s.pP[n] {
					return nil, false // same-goroutine steps out of program order
				}
				break
			}
		}
		if prev < 0 && s.pending[g] < 0 {
			s.pending[g] = int32(n)
		}
		s.H[n] = s.pP[n]
		if o := m.oml[e]; o >= 0 && o > prev {
			s.H[n] = o
		}
	}
	N := int32(len(m.Events))
	lagging := make([]bool, len(m.gs))
	var lag []int32
	// Until the first goroutine of the anomaly reaches its hold point,
	// the replay runs the trace in its own order: start there.
	F := m.prefix().clean
	for g, n := range s.pending {
		if n >= 0 {
			F = min(F, m.gs[g].ev[s.H[n]])
		}
	}
	cursor := m.fastForward(s, F)
	for s.done < k {
		if s.consec && s.done > 0 && len(s.out) > 0 && s.out[len(s.out)-1] == P[s.done-1] {
			// E[done] must follow E[done-1] immediately.
			g := s.gP[s.done]
			if s.next[g] != s.pP[s.done] || !s.runnable(g) {
				return nil, false
			}
			s.emit(g)
			continue
		}
		best, bestIdx := int32(-1), int32(math.MaxInt32)
		for _, g := range lag {
			if ev := s.m.gs[g].ev; int(s.next[g]) < len(ev) && ev[s.next[g]] < bestIdx && s.runnable(g) {
				best, bestIdx = g, ev[s.next[g]]
			}
		}
		for cursor < N {
			g := m.g[cursor]
			if m.pos[cursor] < s.next[g] || lagging[g] {
				cursor++
				continue
			}
			break
		}
		if cursor < N && cursor < bestIdx {
			g := m.g[cursor]
			if s.runnable(g) {
				s.emit(g)
				continue
			}
			lagging[g] = true
			lag = append(lag, g)
			cursor++
			continue
		}
		if best < 0 {
			return nil, false // nothing can run: deadlock under this strategy
		}
		s.emit(best)
		if ev := m.gs[best].ev; int(s.next[best]) >= len(ev) || ev[s.next[best]] >= cursor {
			lagging[best] = false
			for i, g := range lag {
				if g == best {
					lag = append(lag[:i], lag[i+1:]...)
					break
				}
			}
		}
	}
	return s.out, true
}

// arrived reports whether the goroutine of step n stands at E[n] with its
// predecessors run.
func (s *scheduler) arrived(n int) bool {
	g := s.gP[n]
	return s.next[g] == s.pP[n] && s.depsRun(g)
}

func (s *scheduler) runnable(g int32) bool {
	m := s.m
	ev := m.gs[g].ev
	p := s.next[g]
	if int(p) >= len(ev) {
		return false
	}
	e := ev[p]
	k := len(s.P)
	if n := int(s.pending[g]); n >= 0 && p >= s.H[n] {
		if p == s.pP[n] {
			if n != s.done {
				return false
			}
			if s.consec && n+1 < k && s.gP[n+1] != g && !s.arrived(n+1) {
				return false
			}
		} else if !s.gate(n) {
			return false
		}
	}
	if !s.depsRun(g) {
		return false
	}
	if ev := &m.Events[e]; ev.Op == trace.OpAcquire {
		if l := s.locks[ev.Obj]; l != nil && (l.writer >= 0 || (!ev.ReadLock() && l.readers > 0)) {
			return false
		}
	}
	return true
}

// gate says whether the goroutine of step n may enter its hold window
// [H[n], E[n]).
func (s *scheduler) gate(n int) bool {
	k := len(s.P)
	if !s.consec {
		return n <= s.done
	}
	if s.strat == secondFirst {
		return n == k-1 || s.arrived(n+1)
	}
	return n == 0 || (s.done == n-1 && s.arrived(n-1))
}

// depsRun reports whether every partial-order predecessor of g's next
// event has run: for each other goroutine u, the events of u at or below
// the event's clock entry for u. Checked once per clock snapshot: the
// answer only changes from false to true.
func (s *scheduler) depsRun(g int32) bool {
	m := s.m
	e := m.gs[g].ev[s.next[g]]
	sn := m.snap[e]
	if s.deps[g] == sn {
		return true
	}
	c := m.gs[g].snaps[sn]
	for u := range m.gs {
		if int32(u) == g {
			continue
		}
		cu := c.Get(trace.GID(m.gs[u].tid))
		if cu == 0 {
			continue
		}
		ev := m.gs[u].ev
		if n := s.next[u]; int(n) < len(ev) && m.lt[ev[n]] <= cu {
			return false
		}
	}
	s.deps[g] = sn
	return true
}

func (s *scheduler) emit(g int32) {
	m := s.m
	e := m.gs[g].ev[s.next[g]]
	s.out = append(s.out, e)
	s.next[g]++
	if ev := &m.Events[e]; ev.Op == trace.OpAcquire || ev.Op == trace.OpRelease {
		s.lockEffect(g, ev)
	}
	if s.done < len(s.P) && e == s.P[s.done] {
		s.done++
		// g's next anomaly step, if any.
		s.pending[g] = -1
		for n := s.done; n < len(s.P); n++ {
			if s.gP[n] == g {
				s.pending[g] = int32(n)
				break
			}
		}
	}
}

// tracePrefix is what the replay of the trace in its own order, with no
// goroutine held, goes through: it runs events 0, 1, ... until clean (the
// whole trace if it never blocks), with the scheduler's lock table every
// ckEvery events, so that a schedule can start at any event up to clean
// without replaying what comes before.
type tracePrefix struct {
	clean int32
	cks   [][]lockState // cks[i]: the locks held before event i*ckEvery
}

type lockState struct {
	lock uint64
	lockHolders
}

const ckEvery = 1024

// prefix computes the trace prefix once per model.
func (m *Model) prefix() *tracePrefix {
	m.prefixOnce.Do(func() {
		tp := &tracePrefix{}
		s := &scheduler{m: m, next: make([]int32, len(m.gs)), pending: make([]int32, len(m.gs)), deps: make([]int32, len(m.gs)),
			locks: map[uint64]*lockHolders{}}
		for g := range s.pending {
			s.pending[g] = -1
			s.deps[g] = -1
		}
		N := int32(len(m.Events))
		i := int32(0)
		for ; i < N; i++ {
			if i%ckEvery == 0 {
				tp.cks = append(tp.cks, s.lockTable())
			}
			if !s.runnable(m.g[i]) {
				break
			}
			s.emit(m.g[i])
			s.out = s.out[:0]
		}
		tp.clean = i
		m.tracePrefix = tp
	})
	return m.tracePrefix
}

func (s *scheduler) lockTable() []lockState {
	var t []lockState
	for l, h := range s.locks {
		if h.writer >= 0 || h.readers > 0 {
			t = append(t, lockState{l, *h})
		}
	}
	sort.Slice(t, func(i, j int) bool { return t[i].lock < t[j].lock })
	return t
}

// fastForward puts s in the state the replay reaches after running
// events 0..F-1 in trace order (F <= the clean prefix, before any hold
// point) and returns F.
func (m *Model) fastForward(s *scheduler, F int32) int32 {
	if F <= 0 {
		return 0
	}
	tp := m.prefix()
	ck := F / ckEvery
	if int(ck) >= len(tp.cks) {
		ck = int32(len(tp.cks) - 1)
	}
	for _, l := range tp.cks[ck] {
		h := l.lockHolders
		s.locks[l.lock] = &h
	}
	for g := range m.gs {
		ev := m.gs[g].ev
		s.next[g] = int32(sort.Search(len(ev), func(i int) bool { return ev[i] >= F }))
	}
	// The lock table from the checkpoint to F; the events themselves are
	// added to out below.
	for i := ck * ckEvery; i < F; i++ {
		ev := &m.Events[i]
		if ev.Op == trace.OpAcquire || ev.Op == trace.OpRelease {
			s.lockEffect(m.g[i], ev)
		}
	}
	s.out = make([]int32, F, F+1024)
	for i := range s.out {
		s.out[i] = int32(i)
	}
	return F
}

// lockEffect applies g's acquire or release ev to the lock table.
func (s *scheduler) lockEffect(g int32, ev *trace.Event) {
	l := s.locks[ev.Obj]
	if l == nil {
		l = &lockHolders{writer: -1}
		s.locks[ev.Obj] = l
	}
	switch {
	case ev.Op == trace.OpAcquire && ev.ReadLock():
		l.readers++
	case ev.Op == trace.OpAcquire:
		l.writer = g
	case ev.ReadLock() && l.readers > 0:
		l.readers--
	case l.writer == g:
		l.writer = -1
	case l.readers > 0:
		l.readers--
	}
}
