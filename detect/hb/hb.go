// Package hb holds racekit's precise happens-before race detectors: they
// report a race only when two conflicting accesses by different goroutines
// are unordered by the happens-before relation of docs/semantics.md
// (program order, locks, fork/join, sync objects, atomics, and the rule for
// goroutines born in untraced code), so every finding is Observed evidence.
// Atomics get the edges Go's race detector gives them (clock.GoAtomics),
// and the accesses the Go front end records inside atomic operations race
// with plain accesses only.
//
// Two detectors share that relation:
//
//   - New returns the "hb" Detector, DJIT+-style: full vector clocks, and per
//     address the latest epoch of every (goroutine, site, kind). It reports
//     every distinct racing site pair of the trace, the same set a
//     brute-force pairwise check gives.
//   - NewFastTrack returns the "fasttrack" detector (Flanagan and Freund,
//     PLDI'09): per address one write epoch and a read epoch that becomes a
//     vector clock only while reads are shared. It is the fast one; it finds
//     the same racing addresses as hb, and on each the same first racing
//     access, but not necessarily every site pair.
//
// Both consume events in trace order (detect.Detector), never panic on an
// ill-formed stream, and count what they did (detect.Stats). The relation
// itself (goroutine, lock, sync-object and atomic clocks, fork/join, the
// untraced-goroutine rule, the ill-formed events tolerated) is a
// clock.Tracker with every edge (clock.AllEdges); vector clocks and epochs
// come from package vc and the shadow memory from package shadow. What is
// here is the access half: per-address state and the race checks.
package hb

import (
	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/clock"
	"github.com/racekit/racekit/detect/shadow"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// Detector is the exact happens-before detector ("hb"): DJIT+ thread, lock
// and sync clocks, with a History per address (the latest access of each
// goroutine, site and kind), which is enough to report every distinct
// racing site pair.
type Detector struct {
	k      clock.Tracker
	sink   finding.Sink
	shadow shadow.Mem[History]
	race   finding.Race // reused report buffer

	accesses, races, entries, sameEpoch int64
}

var (
	_ detect.Detector  = (*Detector)(nil)
	_ detect.Stats     = (*Detector)(nil)
	_ detect.Forgetter = (*Detector)(nil)
)

// Forget drops every address's history (detect.Forgetter); the clocks
// stay.
func (d *Detector) Forget() { d.shadow = shadow.Mem[History]{} }

// New returns an hb detector reporting into sink (nil discards findings).
func New(sink finding.Sink) *Detector { return newDetector(sink, true) }

// NewLockedAtomics is New with atomics as the predictive detectors take
// them (clock.Tracker without GoAtomics: the word's private lock orders
// every atomic operation on it before the next, stores join the word's
// clock): the happens-before relation that WCP weakens, for checks that
// WCP ⊇ HB.
func NewLockedAtomics(sink finding.Sink) *Detector {
	d := newDetector(sink, true)
	d.k = clock.New(clock.AllEdges)
	d.k.Recycle()
	return d
}

// newDetector is New; recycle false keeps one clock ID per goroutine (the
// tests' baseline).
func newDetector(sink finding.Sink, recycle bool) *Detector {
	if sink == nil {
		sink = finding.SinkFunc(func(*finding.Race) {})
	}
	d := &Detector{
		k:    clock.New(clock.AllEdges),
		sink: sink,
		race: finding.Race{Detector: "hb", Evidence: finding.Observed},
	}
	d.k.GoAtomics() // atomics as Go's race detector orders them
	// A goroutine that took over the ID of one that ended shares its
	// group in a History: every access of the old one is ordered before
	// the new one's (package clock, "Recycled IDs"), as a goroutine's
	// earlier accesses are before its later ones.
	if recycle {
		d.k.Recycle()
	}
	return d
}

// Handle processes one event.
func (d *Detector) Handle(e *trace.Event) {
	t := d.k.Running(e)
	if t == nil {
		t = d.k.Start(e.G)
	}
	switch e.Op {
	case trace.OpRead, trace.OpWrite:
		d.access(t, e)
	case trace.OpAlloc:
		if lo, hi, ok := e.AllocRange(); ok {
			d.shadow.Clear(lo, hi)
		}
		d.k.Sync(t, e) // a channel's message state (clock.Tracker.Sync)
	default:
		d.k.Sync(t, e)
	}
}

// Finish does nothing: hb reports as it goes.
func (d *Detector) Finish() {}

func (d *Detector) access(t *clock.Thread, e *trace.Event) {
	d.accesses++
	repeat, added := d.shadow.Get(e.Obj).Access(t.Clock(), t.ID(), t.Epoch().Clock(), e.Site, e.Op == trace.OpWrite, t.AtomicAccess(e.Obj), e.Seq,
		func(tid uint32, prev *HistoryEntry) { d.report(e, tid, prev) })
	if repeat {
		d.sameEpoch++
	}
	if added {
		d.entries++
	}
}

func (d *Detector) report(e *trace.Event, tid uint32, prev *HistoryEntry) {
	d.races++
	r := &d.race
	r.Addr = e.Obj
	r.Prev = finding.Access{Seq: prev.Seq, G: d.k.GIDAt(tid, prev.Clock), Site: prev.Site, Write: prev.Write}
	r.Cur = finding.Access{Seq: e.Seq, G: e.G, Site: e.Site, Write: e.Op == trace.OpWrite}
	d.sink.Report(r)
}

// Stats returns the detector's counters: events, accesses, races (dynamic
// reports), illformed (events tolerated, see docs/semantics.md),
// same_epoch (accesses skipped as repeats within an epoch), shadow_addrs,
// shadow_entries ((goroutine, site, kind) histories kept), goroutines,
// locks, sync_objects and atomic_words.
func (d *Detector) Stats() map[string]int64 {
	m := map[string]int64{
		"accesses":       d.accesses,
		"races":          d.races,
		"same_epoch":     d.sameEpoch,
		"shadow_addrs":   int64(d.shadow.Len()),
		"shadow_entries": d.entries,
	}
	counters(&d.k, m)
	return m
}

// counters adds the synchronization counters of both detectors to m.
func counters(k *clock.Tracker, m map[string]int64) {
	c := k.Counters()
	m["events"] = c.Events
	m["illformed"] = c.IllFormed
	m["goroutines"] = c.Goroutines
	m["clock_ids"] = c.IDs
	m["ids_recycled"] = c.Recycled
	m["joins_approximated"] = c.ApproxJoins
	m["ids_recycled_unordered"] = c.ForcedRecycles
	m["ids_preempted"] = c.Preempted
	m["chan_msgs_folded"] = c.ChanFolds
	m["locks"] = c.Locks
	m["sync_objects"] = c.SyncObjects
	m["atomic_words"] = c.AtomicWords
}
