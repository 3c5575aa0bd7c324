package gen

// Deliberately simple reference checkers for small traces (up to a few
// thousand events): quadratic, map-based, no cleverness, so that they are
// easy to trust. The generator's tests compare its Truth against them.

import (
	"fmt"
	"slices"

	"github.com/racekit/racekit/detect/reference"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// hbRacePairs and locksetPairs are the shared brute-force oracles of
// package reference, applied to a bare event slice.
func hbRacePairs(evs []trace.Event) []finding.Pair {
	return reference.HBPairs(&trace.Trace{Events: evs})
}

func locksetPairs(evs []trace.Event) []finding.Pair {
	return reference.LocksetPairs(&trace.Trace{Events: evs})
}

// heldLocks replays acquires and releases and returns, for each event, the
// locks its goroutine holds at that moment (true: write mode); nil for
// events other than accesses.
func heldLocks(evs []trace.Event) []map[uint64]bool {
	held := map[trace.GID]map[uint64]bool{}
	out := make([]map[uint64]bool, len(evs))
	for i := range evs {
		e := &evs[i]
		h := held[e.G]
		if h == nil {
			h = map[uint64]bool{}
			held[e.G] = h
		}
		switch e.Op {
		case trace.OpAcquire:
			h[e.Obj] = !e.ReadLock()
		case trace.OpRelease:
			delete(h, e.Obj)
		}
		if !e.Op.IsAccess() {
			continue
		}
		snap := make(map[uint64]bool, len(h))
		for k, v := range h {
			snap[k] = v
		}
		out[i] = snap
	}
	return out
}

// checkWellFormed returns the first way tr breaks the generator's
// well-formedness contract for cfg (normalized), or nil.
func checkWellFormed(cfg Config, tr *trace.Trace) error {
	m := tr.M
	evs := tr.Events
	if int64(len(evs)) != cfg.Events {
		return fmt.Errorf("%d events, want exactly %d", len(evs), cfg.Events)
	}
	type gstat struct {
		begun, ended, joined bool
		forker               trace.GID
		forked               bool
		scopes               []trace.Event // open acquires and enters
		locks                int
		funcs                int
	}
	gs := map[trace.GID]*gstat{}
	get := func(g trace.GID) *gstat {
		if gs[g] == nil {
			gs[g] = &gstat{}
		}
		return gs[g]
	}
	writer := map[uint64]trace.GID{} // lock -> write-mode holder
	readers := map[uint64]int{}      // lock -> read-mode holders
	values := map[uint64]uint64{}    // object -> last value written
	for i := range evs {
		e := &evs[i]
		at := func(format string, args ...any) error {
			return fmt.Errorf("event %d (G%d %s obj %#x site %d): %s", i, e.G, e.Op, e.Obj, e.Site, fmt.Sprintf(format, args...))
		}
		if e.Seq != uint64(i) {
			return at("Seq %d, want %d", e.Seq, i)
		}
		if err := e.Validate(); err != nil {
			return at("%v", err)
		}
		if !m.GoroutineDefined(e.G) {
			return at("goroutine not defined")
		}
		if e.Op.HasValue() {
			if cfg.Values == (e.Flags&trace.FlagValueUnknown != 0) {
				return at("value-unknown flag %v with Values %v", e.Flags&trace.FlagValueUnknown != 0, cfg.Values)
			}
			if cfg.Values {
				if e.Op == trace.OpWrite || e.Op == trace.OpAtomicStore || e.Op == trace.OpAtomicRMW {
					values[e.Obj] = e.Value
				} else if e.Value != values[e.Obj] {
					return at("read value %d, last written %d", e.Value, values[e.Obj])
				}
			}
		}
		s := get(e.G)
		if e.Op == trace.OpBegin {
			if s.begun {
				return at("second Begin")
			}
			if e.G != 0 && !s.forked {
				return at("Begin before Fork")
			}
			s.begun = true
			continue
		}
		if !s.begun || s.ended {
			return at("event outside Begin..End")
		}
		switch e.Op {
		case trace.OpFork:
			c := get(e.Child())
			if c.forked || e.Child() == 0 {
				return at("goroutine forked twice")
			}
			if !m.GoroutineDefined(e.Child()) {
				return at("child not defined")
			}
			if g := m.Goroutine(e.Child()); g.Parent != e.G || g.Site != e.Site {
				return at("child defined with parent %d site %d", g.Parent, g.Site)
			}
			c.forked, c.forker = true, e.G
		case trace.OpJoin:
			c := get(e.Child())
			if !c.ended || c.joined || c.forker != e.G {
				return at("join of a child not ended (%v), already joined (%v) or not forked by the joiner", c.ended, c.joined)
			}
			c.joined = true
		case trace.OpEnd:
			if len(s.scopes) != 0 {
				return at("End with %d locks or frames open", len(s.scopes))
			}
			s.ended = true
		case trace.OpAcquire:
			if writer[e.Obj] == e.G+1 || slices.ContainsFunc(s.scopes, func(x trace.Event) bool { return x.Op == trace.OpAcquire && x.Obj == e.Obj }) {
				return at("lock acquired twice by one goroutine")
			}
			if writer[e.Obj] != 0 || (!e.ReadLock() && readers[e.Obj] > 0) {
				return at("lock not free (writer G%d, %d readers)", writer[e.Obj]-1, readers[e.Obj])
			}
			if e.ReadLock() {
				readers[e.Obj]++
			} else {
				writer[e.Obj] = e.G + 1
			}
			s.scopes = append(s.scopes, *e)
			if s.locks++; s.locks > cfg.Nesting {
				return at("%d locks held, Nesting %d", s.locks, cfg.Nesting)
			}
		case trace.OpRelease, trace.OpFuncExit:
			if len(s.scopes) == 0 {
				return at("nothing open to close")
			}
			top := s.scopes[len(s.scopes)-1]
			want := trace.OpAcquire
			if e.Op == trace.OpFuncExit {
				want = trace.OpFuncEnter
			}
			if top.Op != want || top.Obj != e.Obj || top.Flags != e.Flags {
				return at("closes %s %#x flags %d, innermost open is %s %#x flags %d", e.Op, e.Obj, e.Flags, top.Op, top.Obj, top.Flags)
			}
			s.scopes = s.scopes[:len(s.scopes)-1]
			if e.Op == trace.OpFuncExit {
				s.funcs--
				break
			}
			s.locks--
			if e.ReadLock() {
				readers[e.Obj]--
			} else {
				writer[e.Obj] = 0
			}
		case trace.OpFuncEnter:
			s.scopes = append(s.scopes, *e)
			if s.funcs++; s.funcs > cfg.FuncDepth {
				return at("%d frames open, FuncDepth %d", s.funcs, cfg.FuncDepth)
			}
		}
	}
	for g := range trace.GID(len(m.Goroutines)) {
		s := get(g)
		if !s.begun || !s.ended || (g != 0 && !s.joined) {
			return fmt.Errorf("G%d: begun %v, ended %v, joined %v at the end of the trace", g, s.begun, s.ended, s.joined)
		}
	}
	if len(m.Goroutines) != cfg.Goroutines {
		return fmt.Errorf("%d goroutines defined, want %d", len(m.Goroutines), cfg.Goroutines)
	}
	return nil
}

// checkSites checks the generator's metadata: sites are distinct, every
// event but Begin and End has one, and every object an event names has a
// name.
func checkSites(tr *trace.Trace) error {
	m := tr.M
	sites := map[trace.Site]trace.SiteID{}
	for id, s := range m.Sites[1:] {
		if prev, dup := sites[s]; dup {
			return fmt.Errorf("sites %d and %d are both %v", prev, id+1, s)
		}
		sites[s] = trace.SiteID(id + 1)
	}
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.Op != trace.OpBegin && e.Op != trace.OpEnd && (e.Site == trace.NoSite || int(e.Site) >= len(m.Sites)) {
			return fmt.Errorf("event %d (%s): site %d not in 1..%d", i, e.Op, e.Site, len(m.Sites)-1)
		}
		named := e.Op != trace.OpBegin && e.Op != trace.OpEnd && e.Op != trace.OpFork && e.Op != trace.OpJoin
		if named && m.NameOf(e.Obj) == "" {
			return fmt.Errorf("event %d (%s): object %#x has no name", i, e.Op, e.Obj)
		}
	}
	return nil
}

// orderWriter wraps an in-memory trace and checks that every definition
// comes before the first event that uses it.
type orderWriter struct {
	*trace.Trace
	err error
}

func (w *orderWriter) WriteEvent(e *trace.Event) error {
	fail := func(format string, args ...any) {
		if w.err == nil {
			w.err = fmt.Errorf("event %d (%s): %s", e.Seq, e.Op, fmt.Sprintf(format, args...))
		}
	}
	m := w.M
	if !m.GoroutineDefined(e.G) {
		fail("goroutine %d not yet defined", e.G)
	}
	if e.Op == trace.OpFork && !m.GoroutineDefined(e.Child()) {
		fail("child %d not yet defined", e.Child())
	}
	if int(e.Site) >= len(m.Sites) {
		fail("site %d not yet defined", e.Site)
	}
	if e.Op != trace.OpFork && e.Op != trace.OpJoin && e.Op != trace.OpBegin && e.Op != trace.OpEnd && m.NameOf(e.Obj) == "" {
		fail("object %#x not yet named", e.Obj)
	}
	return w.Trace.WriteEvent(e)
}
