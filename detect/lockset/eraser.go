package lockset

import (
	"github.com/racekit/racekit/detect/clock"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// Name is the Eraser detector's name in findings.
const Name = "lockset"

// Eraser states of an address (Savage et al., Figure 4).
const (
	virgin         uint8 = iota // never accessed
	exclusive                   // accessed by one goroutine only: no refinement, no warning
	shared                      // read by a second goroutine, no write since: refine, no warning
	sharedModified              // written while shared: refine, warn when C(v) is empty
)

// eshadow is Eraser's state for one address.
type eshadow struct {
	state    uint8
	reported bool
	owner    trace.GID // the goroutine of the exclusive state
	cand     uint32    // C(v), interned; topSet until the address is shared
	last     finding.Access
	other    finding.Access // the latest access by a goroutine other than last.G
}

// Eraser is the lockset detector with Eraser's ownership state machine.
// An address starts Virgin; its first access makes it Exclusive to that
// goroutine (initialization needs no lock); an access by another goroutine
// makes it Shared (a read) or SharedModified (a write), and a write while
// Shared makes it SharedModified. From Shared on, each access refines the
// candidate set C(v): a read intersects it with the locks held in any mode,
// a write with the locks held in write mode. Eraser warns, once per address,
// when C(v) is empty in SharedModified.
//
// Fork, join and message edges are ignored: that is the source of its false
// alarms (a hand-off through a channel is reported), which is why its
// findings are finding.Potential.
type Eraser struct {
	tr       tracker
	sink     finding.Sink
	idx      map[uint64]int32
	shadow   []eshadow
	accesses int64
	warnings int64
	race     finding.Race
}

// New returns an Eraser detector reporting to sink.
func New(sink finding.Sink) *Eraser {
	return &Eraser{
		tr:   newTracker(clock.NoEdges),
		sink: sink,
		idx:  make(map[uint64]int32),
	}
}

// Handle processes one event.
func (d *Eraser) Handle(e *trace.Event) {
	g := d.tr.step(e)
	if e.Op == trace.OpAlloc {
		clearRange(d.idx, e, func(i int32) { d.shadow[i] = eshadow{cand: topSet} })
		return
	}
	if !e.Op.IsAccess() {
		return
	}
	ls := d.tr.lockset(g)
	d.accesses++
	i, ok := d.idx[e.Obj]
	if !ok {
		i = int32(len(d.shadow))
		d.idx[e.Obj] = i
		d.shadow = append(d.shadow, eshadow{cand: topSet})
	}
	s := &d.shadow[i]
	w := e.IsWrite()
	cur := finding.Access{Seq: e.Seq, G: e.G, Site: e.Site, Write: w}

	switch s.state {
	case virgin:
		s.state, s.owner = exclusive, e.G
	case exclusive:
		if e.G != s.owner {
			s.state = shared
			if w {
				s.state = sharedModified
			}
			s.cand = d.tr.ls.meet(s.cand, d.tr.ls.proj(ls, w))
		}
	case shared:
		if w {
			s.state = sharedModified
		}
		s.cand = d.tr.ls.meet(s.cand, d.tr.ls.proj(ls, w))
	case sharedModified:
		s.cand = d.tr.ls.meet(s.cand, d.tr.ls.proj(ls, w))
	}

	if s.state == sharedModified && s.cand == emptySet && !s.reported {
		s.reported = true
		d.warnings++
		prev := s.last
		if prev.G == e.G {
			prev = s.other
		}
		d.race = finding.Race{Detector: Name, Evidence: finding.Potential, Addr: e.Obj, Prev: prev, Cur: cur}
		d.sink.Report(&d.race)
	}

	// In the exclusive state every access is the owner's: other stays
	// unset until a second goroutine shows up.
	if s.state != exclusive && s.last.G != e.G {
		s.other = s.last
	}
	s.last = cur
}

// Finish does nothing: Eraser reports as it goes.
func (d *Eraser) Finish() {}

// Stats returns the counters: events, accesses, addresses (shadow words),
// warnings (addresses reported), locksets (interned sets), goroutines,
// untraced (goroutines first seen without a fork) and illformed.
func (d *Eraser) Stats() map[string]int64 {
	m := map[string]int64{
		"accesses":  d.accesses,
		"addresses": int64(len(d.shadow)),
		"warnings":  d.warnings,
	}
	d.tr.stats(m)
	return m
}
