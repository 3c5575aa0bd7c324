// Package hb holds racekit's precise happens-before race detectors: they
// report a race only when two conflicting accesses by different goroutines
// are unordered by the happens-before relation of docs/semantics.md
// (program order, locks, fork/join, sync objects, atomics, and the rule for
// goroutines born in untraced code), so every finding is Observed evidence.
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
// and sync clocks, with shadow state that keeps, per address, the latest
// access of each (goroutine, site, kind). That is enough to report every
// distinct racing site pair: if the latest such access is ordered before
// the current one, so are all earlier ones of the same goroutine; if an
// earlier one races with it, so does the latest.
//
// The histories of an address are grouped by goroutine, each group with
// the clocks of its latest write and read (the address's DJIT+ clocks
// W_x(u) and R_x(u)), so an access whose predecessors are all ordered
// before it costs one comparison per goroutine, not one per site.
type Detector struct {
	k      clock.Tracker
	sink   finding.Sink
	shadow shadow.Mem[hbShadow]
	race   finding.Race // reused report buffer

	accesses, races, entries, sameEpoch int64
}

// hbShadow is one address's access history, with the goroutine, epoch,
// site and kind of the latest access (valid once groups is not empty), so
// that a repeat is recognized without touching the groups.
type hbShadow struct {
	groups    []hbGroup
	lastTid   uint32
	lastClock uint32
	lastSite  trace.SiteID
	lastWrite bool
}

// hbGroup is the history of one goroutine on an address. Its clocks only
// grow, so maxW and maxR are those of its latest write and read.
type hbGroup struct {
	tid        uint32
	maxW, maxR uint32
	entries    []hbEntry
}

// hbEntry is the latest access of one (site, kind) of a goroutine to an
// address: its clock in the goroutine's epoch and its Seq, for reports.
type hbEntry struct {
	clock uint32
	site  trace.SiteID
	write bool
	seq   uint64
}

var (
	_ detect.Detector = (*Detector)(nil)
	_ detect.Stats    = (*Detector)(nil)
)

// New returns an hb detector reporting into sink (nil discards findings).
func New(sink finding.Sink) *Detector {
	if sink == nil {
		sink = finding.SinkFunc(func(*finding.Race) {})
	}
	return &Detector{
		k:    clock.New(clock.AllEdges),
		sink: sink,
		race: finding.Race{Detector: "hb", Evidence: finding.Observed},
	}
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
	default:
		d.k.Sync(t, e)
	}
}

// Finish does nothing: hb reports as it goes.
func (d *Detector) Finish() {}

func (d *Detector) access(t *clock.Thread, e *trace.Event) {
	d.accesses++
	s := d.shadow.Get(e.Obj)
	write := e.Op == trace.OpWrite
	now := t.Epoch().Clock()

	// Repeating the access that last touched this address, in the same
	// epoch: the clock of t has only grown since that access was checked,
	// so it can only race with a subset of what that one raced with, and
	// for later accesses the two are interchangeable (same epoch, same
	// site), so the entry keeps the first one's Seq.
	if len(s.groups) > 0 && s.lastTid == t.ID() && s.lastClock == now && s.lastSite == e.Site && s.lastWrite == write {
		d.sameEpoch++
		return
	}

	own := -1
	c := t.Clock()
	for i := range s.groups {
		g := &s.groups[i]
		if g.tid == t.ID() {
			own = i
			continue
		}
		seen := c.Get(trace.GID(g.tid)) // C_t(u): u's accesses up to it are ordered before
		if g.maxW <= seen && (!write || g.maxR <= seen) {
			continue
		}
		for j := range g.entries {
			if en := &g.entries[j]; (en.write || write) && en.clock > seen {
				d.report(e, g.tid, en)
			}
		}
	}

	if own < 0 {
		own = len(s.groups)
		s.groups = append(s.groups, hbGroup{tid: t.ID()})
	}
	g := &s.groups[own]
	if write {
		g.maxW = now
	} else {
		g.maxR = now
	}
	k := -1
	for j := range g.entries {
		if en := &g.entries[j]; en.site == e.Site && en.write == write {
			k = j
			break
		}
	}
	if k < 0 {
		k = len(g.entries)
		g.entries = append(g.entries, hbEntry{site: e.Site, write: write})
		d.entries++
	}
	g.entries[k].clock, g.entries[k].seq = now, e.Seq
	s.lastTid, s.lastClock, s.lastSite, s.lastWrite = t.ID(), now, e.Site, write
}

func (d *Detector) report(e *trace.Event, tid uint32, prev *hbEntry) {
	d.races++
	r := &d.race
	r.Addr = e.Obj
	r.Prev = finding.Access{Seq: prev.seq, G: d.k.Thread(tid).GID(), Site: prev.site, Write: prev.write}
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
	m["locks"] = c.Locks
	m["sync_objects"] = c.SyncObjects
	m["atomic_words"] = c.AtomicWords
}
