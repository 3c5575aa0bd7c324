package predict

import (
	"fmt"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// Witness and Step are finding's: a predicted race carries its witness
// (finding.Race.Witness) to every renderer, and hatch follows it.
type (
	Witness = finding.Witness
	Step    = finding.Step
)

// sim executes a model step by step under the model's semantics: the
// explicit, one-schedule-at-a-time reading of what the solver encodes.
// CheckWitness replays witnesses with it, and the tests enumerate every
// reordering of small traces with it.
type sim struct {
	m       *model
	readOf  []int32 // per event: index into m.reads, -1 for none
	pos     []int32 // per dense goroutine: how many of its events ran
	last    map[memKey]int32
	excl    map[uint64]int32 // lock → dense goroutine + 1 holding it exclusively
	readers map[uint64]int32
}

func newSim(m *model) *sim {
	s := &sim{m: m, readOf: make([]int32, len(m.ev)), pos: make([]int32, len(m.byG)),
		last: map[memKey]int32{}, excl: map[uint64]int32{}, readers: map[uint64]int32{}}
	for i := range s.readOf {
		s.readOf[i] = -1
	}
	for j, r := range m.reads {
		s.readOf[r.ev] = int32(j)
	}
	return s
}

func (s *sim) clone() *sim {
	c := *s
	c.pos = append([]int32(nil), s.pos...)
	c.last = make(map[memKey]int32, len(s.last))
	for k, v := range s.last {
		c.last[k] = v
	}
	c.excl = make(map[uint64]int32, len(s.excl))
	for k, v := range s.excl {
		c.excl[k] = v
	}
	c.readers = make(map[uint64]int32, len(s.readers))
	for k, v := range s.readers {
		c.readers[k] = v
	}
	return &c
}

func (s *sim) done(i int32) bool { return s.m.local[i] < s.pos[s.m.g[i]] }

// next returns the next event of dense goroutine g, or -1.
func (s *sim) next(g int32) int32 {
	if evs := s.m.byG[g]; int(s.pos[g]) < len(evs) {
		return evs[s.pos[g]]
	}
	return -1
}

// enabled reports whether i is its goroutine's next event and every hard
// predecessor of it ran: what a racing access needs.
func (s *sim) enabled(i int32) error {
	if s.next(s.m.g[i]) != i {
		return fmt.Errorf("program order: not the goroutine's next event")
	}
	for _, p := range s.m.preds[i] {
		if !s.done(p) {
			return fmt.Errorf("must follow event seq %d, which has not run", s.m.ev[p].Seq)
		}
	}
	return nil
}

// canRun reports whether i may run next: enabled, the lock free, the value
// it read available.
func (s *sim) canRun(i int32) error {
	if err := s.enabled(i); err != nil {
		return err
	}
	e := &s.m.ev[i]
	switch e.Op {
	case trace.OpAcquire:
		if h := s.excl[e.Obj]; h != 0 {
			return fmt.Errorf("lock held by %s", s.gname(h-1))
		}
		if !e.ReadLock() && s.readers[e.Obj] > 0 {
			return fmt.Errorf("lock held in read mode")
		}
	}
	if j := s.readOf[i]; j >= 0 {
		r := &s.m.reads[j]
		for _, p := range r.after {
			if !s.done(p) {
				return fmt.Errorf("read must follow event seq %d (hidden code may have fed it), which has not run", s.m.ev[p].Seq)
			}
		}
		w, ok := s.last[r.key]
		if !ok {
			w = -1
		}
		switch r.mode {
		case readValue:
			x := s.m.init[r.key]
			if ok {
				x = s.m.wval[w]
			}
			if !x.compatible(r.v) {
				return fmt.Errorf("read of value %d would see another value", r.v)
			}
		case readWriter:
			if w != r.writer {
				return fmt.Errorf("read would see another write than in the trace")
			}
		}
	}
	return nil
}

func (s *sim) gname(g int32) string { return fmt.Sprintf("G%d", s.m.gid[g]) }

// run executes i (which canRun).
func (s *sim) run(i int32) {
	m := s.m
	e := &m.ev[i]
	s.pos[m.g[i]]++
	switch e.Op {
	case trace.OpAcquire:
		if e.ReadLock() {
			s.readers[e.Obj]++
		} else {
			s.excl[e.Obj] = m.g[i] + 1
		}
	case trace.OpRelease:
		if e.ReadLock() {
			if s.readers[e.Obj] > 0 {
				s.readers[e.Obj]--
			}
		} else if s.excl[e.Obj] == m.g[i]+1 {
			delete(s.excl, e.Obj)
		}
	}
	if k, ok := writeKey(e); ok {
		s.last[k] = i
	}
	if e.Op == trace.OpAlloc {
		// An alloc writes zero to every word of its range that the model
		// knows (buildModel lists it among their writes).
		if lo, hi, ok := e.AllocRange(); ok {
			for k := range m.writes {
				if k.addr >= lo && k.addr < hi {
					s.last[k] = i
				}
			}
		}
	}
}

// conflicting reports whether a and b are a candidate race: accesses to one
// address by different goroutines, at least one a write.
func conflicting(a, b *trace.Event) bool {
	return a.Op.IsAccess() && b.Op.IsAccess() && a.G != b.G && a.Obj == b.Obj &&
		(a.Op == trace.OpWrite || b.Op == trace.OpWrite)
}

// CheckWitness validates w against tr under the model of w.Detector: the
// schedule keeps program order (each goroutine runs a prefix of its
// events, in order), every hard edge (fork, join, snd before later rcv,
// goroutines born untraced after everything before them, allocs, and for
// rdit the BarrierPair linearization), lock semantics (exclusive and read
// mode), and read consistency (every read of a known value sees a write of
// that value, reads of unknown value and read-modify-writes their
// observed write); and its last two steps are conflicting accesses of two
// goroutines, both enabled after the steps before them. It returns nil
// for a valid witness and an error naming the first bad step otherwise.
func CheckWitness(tr *trace.Trace, w *Witness) error {
	if w.Detector != "mcm" && w.Detector != "rdit" {
		return fmt.Errorf("witness: unknown detector %q", w.Detector)
	}
	if w.ObservedPrefix < 0 || w.ObservedPrefix > len(tr.Events) {
		return fmt.Errorf("witness: observed prefix %d out of range (trace has %d events)", w.ObservedPrefix, len(tr.Events))
	}
	if len(w.Steps) < 2 {
		return fmt.Errorf("witness: %d steps, want at least the two racing accesses", len(w.Steps))
	}
	m := buildModel(tr.Events, newPrefix(), w.Detector == "rdit")
	s := newSim(m)
	dense := map[trace.GID]int32{}
	for g, id := range m.gid {
		dense[id] = int32(g)
	}
	for i := 0; i < w.ObservedPrefix; i++ {
		if err := s.canRun(int32(i)); err != nil {
			return fmt.Errorf("witness: observed event %d (seq %d): %v", i, tr.Events[i].Seq, err)
		}
		s.run(int32(i))
	}
	resolve := func(k int, st Step) (int32, error) {
		g, ok := dense[st.G]
		if !ok || st.Index < 0 || st.Index >= len(m.byG[g]) {
			return -1, fmt.Errorf("witness: step %d: goroutine %d has no event %d", k, st.G, st.Index)
		}
		i := m.byG[g][st.Index]
		e := &m.ev[i]
		if e.Op.String() != st.Op || e.Site != st.Site {
			return -1, fmt.Errorf("witness: step %d: event %d of goroutine %d is %s at site %d, not %s at site %d",
				k, st.Index, st.G, e.Op, e.Site, st.Op, st.Site)
		}
		return i, nil
	}
	n := len(w.Steps)
	for k, st := range w.Steps[:n-2] {
		i, err := resolve(k, st)
		if err != nil {
			return err
		}
		if err := s.canRun(i); err != nil {
			return fmt.Errorf("witness: step %d (G%d event %d, seq %d): %v", k, st.G, st.Index, m.ev[i].Seq, err)
		}
		s.run(i)
	}
	a, err := resolve(n-2, w.Steps[n-2])
	if err != nil {
		return err
	}
	b, err := resolve(n-1, w.Steps[n-1])
	if err != nil {
		return err
	}
	if !conflicting(&m.ev[a], &m.ev[b]) || m.ev[a].Obj != w.Addr {
		return fmt.Errorf("witness: the last two steps (seq %d, %d) are not conflicting accesses to %#x", m.ev[a].Seq, m.ev[b].Seq, w.Addr)
	}
	for _, x := range []int32{a, b} {
		if err := s.enabled(x); err != nil {
			return fmt.Errorf("witness: racing access seq %d is not enabled: %v", m.ev[x].Seq, err)
		}
	}
	return nil
}
