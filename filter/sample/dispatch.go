package sample

import "github.com/racekit/racekit/trace"

// Dispatcher is the dispatch check of one program under one Policy
// (LiteRace §3.3, Figure 3): Enter(g, fn) decides whether goroutine g's
// call of function fn is sampled. It holds the counters of every
// (goroutine, function) or every function, and a random stream per
// goroutine. It is not safe for concurrent use: the offline Filter calls it
// in trace order, and a runtime would call it where it orders events.
type Dispatcher struct {
	p         Policy
	seed      int64
	threshold uint64 // PerCall: Threshold(p.Prob)
	gs        table[dgor]
	global    map[uint64]*Counter
	sites     map[trace.SiteID]map[uint64]*Counter // PerSite: per go statement, per function
	pools     map[slotKey][]map[uint64]*Counter    // PerSlot: the free slots of each pool, last freed last
}

// slotKey names a PerSlot pool: the go statement of its goroutines, or the
// pool of goroutines born in untraced code.
type slotKey struct {
	site trace.SiteID
	root bool
}

// dgor is one goroutine's dispatch state.
type dgor struct {
	// PerGoroutine: per function. PerSite: those of the goroutine's go
	// statement, or its own when it was born in untraced code. PerSlot:
	// those of the slot it holds.
	counters map[uint64]*Counter
	rng      Rand // PerCall
	seeded   bool
	// PerSite, PerSlot: the go statement that created the goroutine
	// (Fork), and whether its counters are chosen (at its first check).
	site          trace.SiteID
	forked, keyed bool
	// PerSlot: whether counters is a slot taken from its pool.
	held bool
}

// NewDispatcher returns the dispatch check of policy p; seed drives the
// random samplers.
func NewDispatcher(p Policy, seed int64) *Dispatcher {
	d := &Dispatcher{p: p, seed: seed, threshold: Threshold(p.Prob)}
	switch p.Scope {
	case Global:
		d.global = make(map[uint64]*Counter)
	case PerSite:
		d.sites = make(map[trace.SiteID]map[uint64]*Counter)
	case PerSlot:
		d.pools = make(map[slotKey][]map[uint64]*Counter)
	}
	return d
}

// Fork records that goroutine child was created by the go statement at
// site (a Fork event). Only PerSite and PerSlot samplers use it; it must come before
// child's first Enter, and is ignored after it.
func (d *Dispatcher) Fork(child trace.GID, site trace.SiteID) {
	if d.p.Scope != PerSite && d.p.Scope != PerSlot {
		return
	}
	s := d.gs.get(child)
	if !s.keyed {
		s.site, s.forked = site, true
	}
}

// Policy returns the dispatcher's policy.
func (d *Dispatcher) Policy() Policy { return d.p }

// Enter counts one call of function fn by goroutine g and reports whether
// it is sampled.
func (d *Dispatcher) Enter(g trace.GID, fn uint64) bool {
	switch d.p.Scope {
	case Global:
		c := d.global[fn]
		if c == nil {
			c = new(Counter)
			d.global[fn] = c
		}
		return c.Next(&d.p.Schedule)
	case PerCall:
		s := d.gs.get(g)
		if !s.seeded {
			s.rng, s.seeded = NewRand(d.seed, g), true
		}
		return s.rng.Below(d.threshold)
	case PerSite:
		s := d.gs.get(g)
		if !s.keyed {
			if s.forked {
				s.counters = d.sites[s.site]
				if s.counters == nil {
					s.counters = make(map[uint64]*Counter)
					d.sites[s.site] = s.counters
				}
			} else {
				s.counters = make(map[uint64]*Counter) // a root: its own
			}
			s.keyed = true
		}
		c := s.counters[fn]
		if c == nil {
			c = new(Counter)
			s.counters[fn] = c
		}
		return c.Next(&d.p.Schedule)
	case PerSlot:
		s := d.gs.get(g)
		if !s.held {
			d.take(s)
		}
		c := s.counters[fn]
		if c == nil {
			c = new(Counter)
			s.counters[fn] = c
		}
		ok := c.Next(&d.p.Schedule)
		if fn == RootFunc && !s.forked {
			d.release(s) // a root's frameless accesses: one call of its own
		}
		return ok
	}
	s := d.gs.get(g)
	c := s.counters[fn]
	if c == nil {
		if s.counters == nil {
			s.counters = make(map[uint64]*Counter)
		}
		c = new(Counter)
		s.counters[fn] = c
	}
	return c.Next(&d.p.Schedule)
}

// take gives goroutine state s a slot of its pool: the last one freed, or
// a new one.
func (d *Dispatcher) take(s *dgor) {
	k := slotKey{site: s.site, root: !s.forked}
	if free := d.pools[k]; len(free) > 0 {
		s.counters = free[len(free)-1]
		d.pools[k] = free[:len(free)-1]
	} else {
		s.counters = make(map[uint64]*Counter)
	}
	s.held, s.keyed = true, true
}

// release gives s's slot back to its pool.
func (d *Dispatcher) release(s *dgor) {
	if !s.held {
		return
	}
	k := slotKey{site: s.site, root: !s.forked}
	d.pools[k] = append(d.pools[k], s.counters)
	s.counters, s.held = nil, false
}

// Return records that goroutine g returned from its outermost traced frame
// to untraced code. A PerSlot sampler frees the slot of a goroutine born
// in untraced code then: each callback (a test function, an HTTP handler
// call) is one task of the untraced code's pool.
func (d *Dispatcher) Return(g trace.GID) {
	if d.p.Scope != PerSlot {
		return
	}
	if s := d.gs.get(g); !s.forked {
		d.release(s)
	}
}

// Forget drops goroutine g's state once it has ended. (GIDs are not reused
// within a trace; a goroutine seen again after Forget starts afresh.) A
// PerSite sampler's counters of a go statement outlive its goroutines; a
// PerSlot sampler's slot goes back to its pool.
func (d *Dispatcher) Forget(g trace.GID) {
	if d.p.Scope == PerSlot {
		d.release(d.gs.get(g))
	}
	d.gs.del(g)
}

// table maps dense goroutine IDs to state: a slice for the IDs a trace
// assigns in order of appearance, a map for any stray huge ID, so that an
// ill-formed trace cannot make it allocate a giant slice.
type table[T any] struct {
	dense  []*T
	sparse map[trace.GID]*T
}

// maxDense bounds the slice part of a table.
const maxDense = 1 << 20

func (t *table[T]) get(g trace.GID) *T {
	if int(g) < len(t.dense) {
		if s := t.dense[g]; s != nil {
			return s
		}
		s := new(T)
		t.dense[g] = s
		return s
	}
	if g < maxDense {
		for int(g) >= len(t.dense) {
			t.dense = append(t.dense, nil)
		}
		s := new(T)
		t.dense[g] = s
		return s
	}
	if s := t.sparse[g]; s != nil {
		return s
	}
	if t.sparse == nil {
		t.sparse = make(map[trace.GID]*T)
	}
	s := new(T)
	t.sparse[g] = s
	return s
}

func (t *table[T]) del(g trace.GID) {
	if int(g) < len(t.dense) {
		t.dense[g] = nil
		return
	}
	delete(t.sparse, g)
}
