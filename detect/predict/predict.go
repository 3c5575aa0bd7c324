// Package predict holds racekit's maximal predictive race detectors: the
// maximal causal model ("mcm", Huang, Meredith and Roşu, PLDI'14) and RDIT
// (Rajagopalan 2016, chapter 4), which extends it to incomplete traces in
// which calls into untraced code appear as BarrierPairs (MethodBegin with
// the set D of addresses the call can reach, MethodEnd).
//
// NewMCM and NewRDIT return detect.Detectors that buffer the stream in
// windows (Options), and for each window build Φ_mcm (Algorithm 4) in
// package solver: program order (Algorithm 7), fork/join and racekit's
// other must-order edges (Algorithm 8 and docs/semantics.md), locking in
// exclusive and read mode (Algorithm 9), read consistency by value
// (Algorithm 10), and, for rdit only, the BarrierPair linearization
// (Algorithms 5 and 6). mcm ignores BarrierPairs, as if the trace were
// complete. A candidate pair (a, b) of conflicting accesses is a race when
// some consistent reordered prefix leaves both enabled at once
// (Algorithm 3's Φ_mcm ∧ O_a = O_b); each race is reported once per site
// pair with finding.Predicted evidence, and comes with a Witness: the
// reordered prefix, as a schedule a controlled scheduler can follow, which
// CheckWitness validates.
//
// # The model, precisely
//
// A reordering of a trace is a sequence of its events that every program
// able to produce the trace can also produce (prefix closure and local
// determinism, thesis 4.4.1). Here that is: each goroutine runs a prefix of
// its events in order; every hard edge holds (fork before the child's
// first event; the child's last event before the join; a goroutine first
// seen without a fork after everything observed before it; every snd
// before each later rcv of the object; an Alloc after every earlier access
// to its range and before every later one; for rdit, the linearization of
// BarrierPairs whose D intersect, and of each BarrierPair with the events
// on addresses in its D); no exclusive critical section overlaps another
// critical section of its lock; and every read sees a value it may see
// (readMode: reads of known value a write of that value, reads of
// unknown value and read-modify-writes their observed write; for rdit, a
// read of known value whose word a BarrierPair reaching it may have written between the read's observed
// write and the read (one that began before the read and ended after that
// write) must see that observed write, since the value may have come from
// the hidden code, and if the read lies inside another goroutine's
// BarrierPair it runs only after every event observed before it, which
// the hidden write may have waited for). A race is a pair of conflicting
// accesses (one address, two goroutines, at least one write) both
// enabled after some reordering: each the next event of its goroutine with
// its hard predecessors done. Its own read value need not be consistent.
//
// Algorithm 5 linearizes a BarrierPair with the reads and writes of the
// addresses in D; for Go it is also linearized with the atomic, lock and
// snd/rcv events on them, because untraced code handed a mutex, a channel
// or an atomic word can synchronize through it (a Go mutex may even be
// unlocked by another goroutine). That is sound and costs maximality.
//
// RDIT's precision (thesis 4.4.1) means: a race rdit reports on a trace τ
// with BarrierPairs is a race of every program that can produce τ, where a
// BarrierPair stands for hidden events of its goroutine between
// MethodBegin and MethodEnd that touch only objects in D. The tests check
// it by hiding the calls of complete random traces (ad hoc
// synchronization through values, channels, locks and atomics inside
// them) and requiring rdit(incomplete) ⊆ mcm(complete).
//
// The hard edges for sync objects follow docs/semantics.md's release-merge
// reading: a rcv waits for every snd of its object observed before it.
// That is more order than Go's memory model asks (a receive needs only its
// matching send), so it can hide a race but never invent one: a prefix that
// contains a rcv contains every snd that could have enabled it. What it
// does not model is a snd or rcv blocking (a full channel, a WaitGroup
// whose counter went up): the observed ones ran, and a reordering only
// ever runs fewer events before each.
//
// # Cheap before expensive
//
// Before any solving, a candidate pair is dropped when the must-order
// (program order and hard edges, transitively: vector clocks over the
// window) orders it, or when both accesses hold a common lock with one of
// them in exclusive mode (both sections would be open at once), or when
// its site pair is already reported. Constraints the must-order satisfies
// are not encoded. A window's formula is built only when a candidate
// survives, and serves all its queries (the solver keeps learned
// clauses); each query has a conflict budget, and a query that exhausts it
// is not reported and is counted as "unknown".
//
// # Windows
//
// Long traces are cut into windows of Options.Window events that overlap
// by Options.Overlap events, as RVPredict does. A window is analyzed as a
// trace whose prefix (everything before it) runs as observed: locks held,
// BarrierPairs open and word values at the window's start are carried in.
// A pair is checked in the window where its later event first appears, so
// every pair of accesses at most Overlap events apart is checked, against
// every reordering of the window. Lost across windows: pairs further
// apart than that (unless they share a window), and reorderings that move
// events across a window's start. Both only lose races; a window's
// reorderings are reorderings of the whole trace.
package predict

import (
	"fmt"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/solver"
	"github.com/racekit/racekit/trace"
)

// Default window geometry and query budget.
const (
	DefaultWindow    = 10000
	DefaultConflicts = 20000
)

// Options configures a detector. The zero value gives the defaults.
type Options struct {
	// Window is the number of events analyzed together; 0 means
	// DefaultWindow. Cost grows with it (the read-consistency constraints
	// are cubic in a word's accesses within a window).
	Window int
	// Overlap is the number of events a window shares with the previous
	// one: pairs of accesses at most Overlap events apart are never lost to
	// the cut. 0 means Window/2; it is capped at Window-1.
	Overlap int
	// Conflicts bounds each race query; 0 means DefaultConflicts, negative
	// means no bound. A query out of budget is not reported (Stats:
	// "unknown").
	Conflicts int64
	// MaxTries bounds how many event pairs of one site pair are queried in
	// one window before giving that site pair up there (Stats:
	// "gave_up"); 0 means no bound.
	MaxTries int
	// Solver makes the solver of each window's formula; nil means the
	// pure-Go solver.New. A solver with a Close method is closed when its
	// window is done. (bench/predict -z3 passes solver.NewZ3 to compare.)
	Solver func() solver.Backend
}

func (o Options) normalized() Options {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.Overlap <= 0 {
		o.Overlap = o.Window / 2
	}
	if o.Overlap >= o.Window {
		o.Overlap = o.Window - 1
	}
	if o.Conflicts == 0 {
		o.Conflicts = DefaultConflicts
	}
	if o.Solver == nil {
		o.Solver = func() solver.Backend { return solver.New() }
	}
	return o
}

// Detector is the mcm or rdit detector. Create it with NewMCM or NewRDIT.
type Detector struct {
	name string
	rdit bool
	opts Options
	sink finding.Sink

	pre      *prefix
	buf      []trace.Event // the current window
	newStart int           // buf[newStart:] are events no window has checked yet
	reported map[finding.Pair]bool
	wit      []Witness

	stats map[string]int64
}

// NewMCM returns the "mcm" detector: the maximal causal model over the
// trace as if it were complete (BarrierPairs order nothing).
func NewMCM(sink finding.Sink, opts Options) *Detector { return newDetector("mcm", false, sink, opts) }

// NewRDIT returns the "rdit" detector: the maximal causal model with
// BarrierPairs (thesis chapter 4).
func NewRDIT(sink finding.Sink, opts Options) *Detector { return newDetector("rdit", true, sink, opts) }

func newDetector(name string, rdit bool, sink finding.Sink, opts Options) *Detector {
	d := &Detector{name: name, rdit: rdit, opts: opts.normalized(), sink: sink,
		pre: newPrefix(), reported: map[finding.Pair]bool{}, stats: map[string]int64{}}
	d.pre.rdit = rdit
	return d
}

var _ detect.Detector = (*Detector)(nil)
var _ detect.Stats = (*Detector)(nil)

// Handle buffers e; a full window is analyzed at once.
func (d *Detector) Handle(e *trace.Event) {
	d.stats["events"]++
	d.buf = append(d.buf, e.Clone())
	if len(d.buf) >= d.opts.Window {
		d.analyze()
		drop := len(d.buf) - d.opts.Overlap
		for i := range drop {
			d.pre.advance(&d.buf[i])
		}
		d.buf = append(d.buf[:0], d.buf[drop:]...)
		d.newStart = len(d.buf)
	}
}

// Finish analyzes the last window.
func (d *Detector) Finish() {
	if len(d.buf) > d.newStart {
		d.analyze()
	}
	for i := range d.buf {
		d.pre.advance(&d.buf[i])
	}
	d.buf = d.buf[:0]
	d.newStart = 0
}

// Witnesses returns a witness for every race reported, in report order.
func (d *Detector) Witnesses() []Witness { return d.wit }

// Stats returns the detector's counters: events, windows, candidate pairs
// and how each was settled (pruned by must-order, common lock or an
// already reported site pair; queried: sat, unsat, unknown), and the
// constraints built.
func (d *Detector) Stats() map[string]int64 {
	out := make(map[string]int64, len(d.stats))
	for k, v := range d.stats {
		out[k] = v
	}
	return out
}

func commonLock(a, b []heldLock) bool {
	for _, x := range a {
		for _, y := range b {
			if x.obj == y.obj && (!x.read || !y.read) {
				return true
			}
		}
	}
	return false
}

// analyze checks every candidate pair of the window whose later event is
// new.
func (d *Detector) analyze() {
	d.stats["windows"]++
	m := buildModel(d.buf, d.pre, d.rdit)
	d.stats["illformed"] += int64(m.illformed)
	var o *mustOrder
	var f *formula
	defer func() {
		if f == nil {
			return
		}
		if c, ok := f.s.(interface{ Close() }); ok {
			c.Close()
		}
	}()
	byAddr := map[uint64][]int32{}
	tries := map[finding.Pair]int{}
	for bi := range d.buf {
		b := &d.buf[bi]
		if !b.Op.IsAccess() {
			continue
		}
		prevs := byAddr[b.Obj]
		byAddr[b.Obj] = append(prevs, int32(bi))
		if bi < d.newStart {
			continue
		}
		// Nearest first: a close pair is the likeliest to be reorderable.
		for k := len(prevs) - 1; k >= 0; k-- {
			ai := prevs[k]
			a := &d.buf[ai]
			if !conflicting(a, b) {
				continue
			}
			d.stats["candidates"]++
			p := finding.MakePair(a.Site, b.Site)
			if d.reported[p] {
				d.stats["pruned_reported"]++
				continue
			}
			if commonLock(m.locks[ai], m.locks[bi]) {
				d.stats["pruned_lock"]++
				continue
			}
			if o == nil {
				o = newMustOrder(m)
			}
			if o.before(ai, int32(bi)) {
				d.stats["pruned_order"]++
				continue
			}
			if d.opts.MaxTries > 0 && tries[p] >= d.opts.MaxTries {
				d.stats["gave_up"]++
				continue
			}
			tries[p]++
			if f == nil {
				f = encode(m, o, d.opts.Solver)
				if d.opts.Conflicts > 0 {
					f.s.SetBudget(solver.Budget{Conflicts: d.opts.Conflicts})
				}
				d.stats["formulas"]++
				d.stats["clauses"] += f.clauses
				d.stats["illformed"] += f.empty
			}
			d.stats["queries"]++
			res, pre := f.query(m, ai, int32(bi))
			switch res {
			case solver.Sat:
				d.stats["sat"]++
				if err := d.replay(m, ai, int32(bi), pre); err != nil {
					// The solver's model and the explicit semantics
					// disagree: a predicted race must come with a witness
					// that holds, so this one is not reported.
					d.stats["witness_rejected"]++
					break
				}
				d.report(m, ai, int32(bi), pre)
			case solver.Unsat:
				d.stats["unsat"]++
			default:
				d.stats["unknown"]++
			}
		}
	}
}

// replay checks the reordered prefix pre and the racing pair (a, b) with
// the explicit semantics CheckWitness applies (sim), from the window's
// start: the locks held then are held. It returns the first violation.
func (d *Detector) replay(m *model, a, b int32, pre []int32) error {
	s := newSim(m)
	for g, id := range m.gid {
		for _, l := range d.pre.held[id] {
			if l.read {
				s.readers[l.obj]++
			} else {
				s.excl[l.obj] = int32(g) + 1
			}
		}
	}
	for _, i := range pre {
		if err := s.canRun(i); err != nil {
			return fmt.Errorf("seq %d: %v", m.ev[i].Seq, err)
		}
		s.run(i)
	}
	for _, x := range []int32{a, b} {
		if err := s.enabled(x); err != nil {
			return fmt.Errorf("racing access seq %d: %v", m.ev[x].Seq, err)
		}
	}
	return nil
}

func (d *Detector) report(m *model, a, b int32, pre []int32) {
	ea, eb := &m.ev[a], &m.ev[b]
	p := finding.MakePair(ea.Site, eb.Site)
	d.reported[p] = true
	w := Witness{Detector: d.name, Addr: ea.Obj, ObservedPrefix: d.pre.events}
	for _, i := range append(pre, a, b) {
		e := &m.ev[i]
		w.Steps = append(w.Steps, Step{G: e.G, Index: m.gIdx[i], Op: e.Op.String(), Site: e.Site, Seq: e.Seq})
	}
	d.wit = append(d.wit, w)
	d.sink.Report(&finding.Race{
		Detector: d.name,
		Evidence: finding.Predicted,
		Addr:     ea.Obj,
		Prev:     finding.Access{Seq: ea.Seq, G: ea.G, Site: ea.Site, Write: ea.IsWrite()},
		Cur:      finding.Access{Seq: eb.Seq, G: eb.G, Site: eb.Site, Write: eb.IsWrite()},
		Witness:  &w,
	})
}
