package lockset

import (
	"github.com/racekit/racekit/detect/clock"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// HybridName is the hybrid detector's name in findings.
const HybridName = "hybrid"

// hentry is the latest access to one address with a given key (goroutine,
// by its clock.Thread.ID; site; kind; lockset): its clock in its goroutine
// and its Seq.
// The kind is the list it is in (hshadow). It is kept to 24 bytes: the scan
// of a busy address is bound by memory.
type hentry struct {
	g     uint32
	site  trace.SiteID
	ls    uint32
	clock uint32
	seq   uint64
}

// hshadow is hybrid's state for one address: the latest access of each key,
// writes and reads apart so that a read scans only the writes.
type hshadow struct {
	w, r []hentry
}

// Hybrid is O'Callahan and Choi's hybrid detector as RaceFuzzer's phase 1
// uses it: two accesses race iff they are by different goroutines, to the
// same address, at least one is a write, they hold no common lock (a lock
// protects the pair when both hold it and at least one in write mode), and
// neither happens before the other under the relation built from fork/join,
// messages (snd/rcv), atomics and the untraced-goroutine rule, with no edge
// for locks.
//
// It reports every distinct racing site pair of the trace. Per address it
// keeps, for each (goroutine, site, kind, lockset), the latest access: if
// that one is ordered before the current access, so is every earlier access
// with the same key, and otherwise it races with the current access exactly
// when they would, so the latest one stands for them all. Each access is
// compared with every kept entry it conflicts with and each racing entry is
// reported (finding.Collector deduplicates by site pair). Entries are never
// dropped: memory grows with the distinct keys per address.
type Hybrid struct {
	tr       tracker
	sink     finding.Sink
	idx      map[uint64]int32
	shadow   []hshadow
	accesses int64
	entries  int64
	checks   int64
	races    int64
	race     finding.Race
}

// NewHybrid returns a hybrid detector reporting to sink.
func NewHybrid(sink finding.Sink) *Hybrid { return newHybrid(sink, true) }

// newHybrid is NewHybrid; recycle false keeps one clock ID per goroutine
// (the tests' baseline).
func newHybrid(sink finding.Sink, recycle bool) *Hybrid {
	d := &Hybrid{
		tr:   newTracker(clock.NoLockEdges),
		sink: sink,
		idx:  make(map[uint64]int32),
	}
	// An entry of a goroutine that ended stands for the accesses of the
	// goroutine that took over its ID too, ordered after it (package
	// clock, "Recycled IDs"), as for a goroutine's own later accesses.
	if recycle {
		d.tr.k.Recycle()
	}
	return d
}

// Handle processes one event.
func (d *Hybrid) Handle(e *trace.Event) {
	g := d.tr.step(e)
	if e.Op == trace.OpAlloc {
		clearRange(d.idx, e, func(i int32) { d.shadow[i] = hshadow{} })
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
		d.shadow = append(d.shadow, hshadow{})
	}
	s := &d.shadow[i]
	w := e.IsWrite()
	d.check(e, g, ls, s.w, true)
	own := &s.r
	if w {
		d.check(e, g, ls, s.r, false)
		own = &s.w
	}
	// Replace the entry of this access's key, or add one.
	t, now := g.ID(), g.Epoch().Clock()
	for j := range *own {
		p := &(*own)[j]
		if p.g == t && p.site == e.Site && p.ls == ls {
			p.clock, p.seq = now, e.Seq
			return
		}
	}
	d.entries++
	*own = append(*own, hentry{g: t, site: e.Site, ls: ls, clock: now, seq: e.Seq})
}

// check reports every entry of es that races with access e by g holding
// lockset ls: another goroutine's, unordered before e, sharing no
// protecting lock. Each entry of es conflicts with e (es holds writes, or e
// is a write); write says which.
func (d *Hybrid) check(e *trace.Event, g *clock.Thread, ls uint32, es []hentry, write bool) {
	t, c := g.ID(), g.Clock()
	n := 0
	for j := range es {
		p := &es[j]
		if p.g == t {
			continue
		}
		n++
		if p.clock <= c.Get(trace.GID(p.g)) || d.tr.ls.protects(p.ls, ls) {
			continue
		}
		d.races++
		d.race = finding.Race{
			Detector: HybridName,
			Evidence: finding.Potential,
			Addr:     e.Obj,
			Prev:     finding.Access{Seq: p.seq, G: d.tr.k.GIDAt(p.g, p.clock), Site: p.site, Write: write},
			Cur:      finding.Access{Seq: e.Seq, G: e.G, Site: e.Site, Write: e.IsWrite()},
		}
		d.sink.Report(&d.race)
	}
	d.checks += int64(n)
}

// Finish does nothing: Hybrid reports as it goes.
func (d *Hybrid) Finish() {}

// Stats returns the counters: events, accesses, addresses, entries (shadow
// entries kept), checks (conflicting pairs compared), races (dynamic pairs
// reported, before deduplication by site pair), locksets, syncobjs and
// atomics (clocks kept), goroutines, untraced and illformed.
func (d *Hybrid) Stats() map[string]int64 {
	m := map[string]int64{
		"accesses":  d.accesses,
		"addresses": int64(len(d.shadow)),
		"entries":   d.entries,
		"checks":    d.checks,
		"races":     d.races,
	}
	d.tr.stats(m)
	return m
}
