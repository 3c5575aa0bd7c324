package hb

import (
	"github.com/racekit/racekit/detect/vc"
	"github.com/racekit/racekit/trace"
)

// History is one address's access history for a detector that reports
// every distinct racing site pair against a vector clock: hb with the
// happens-before clock, wcp with its weaker one. Per goroutine it keeps
// the latest clock of each (site, kind) of access (if the latest is
// ordered before the current access, so are all earlier ones of the same
// goroutine; if an earlier one races with it, so does the latest), and the
// clocks of the goroutine's latest write and read (the address's DJIT+
// clocks W_x(u) and R_x(u)), so an access whose predecessors are all
// ordered before it costs one comparison per goroutine, not one per site.
// An atomic access (the one the Go front end records inside an atomic
// operation) is checked against the plain ones only.
// It also remembers the goroutine, epoch, site and kind of the latest
// access, so that a repeat is recognized without touching the groups. The
// zero History is empty.
type History struct {
	groups    []historyGroup
	lastTid   uint32
	lastClock uint32
	lastSite  trace.SiteID
	lastWrite bool
}

// historyGroup is the history of one goroutine on an address. Its clocks
// only grow, so maxW and maxR are those of its latest write and read.
type historyGroup struct {
	tid        uint32
	maxW, maxR uint32
	entries    []HistoryEntry
}

// HistoryEntry is the latest access of one (site, kind) of a goroutine to
// an address: its clock in the goroutine's epoch and its Seq, for reports.
// Atomic marks the access inside an atomic operation (a site is one or the
// other): two atomic accesses never race, as in Go's race detector.
type HistoryEntry struct {
	Clock  uint32
	Site   trace.SiteID
	Write  bool
	Atomic bool
	Seq    uint64
}

// Access checks an access by goroutine tid at its clock value now against
// the history, with c what the goroutine knows of every other (c(u) covers
// u's accesses ordered before this one), calls race for each earlier entry
// it races with, and records it. A repeat of the latest access in the same
// epoch is neither checked nor recorded: the goroutine's clock has only
// grown since that access was checked, so it races with a subset of what
// that one raced with, and for later accesses the two are interchangeable
// (same epoch, same site), so the entry keeps the first one's Seq. Access
// reports whether the access was such a repeat, and whether it added an
// entry.
func (h *History) Access(c vc.VectorClock, tid, now uint32, site trace.SiteID, write, atomic bool, seq uint64,
	race func(tid uint32, prev *HistoryEntry)) (repeat, added bool) {
	if len(h.groups) > 0 && h.lastTid == tid && h.lastClock == now && h.lastSite == site && h.lastWrite == write {
		return true, false
	}
	own := -1
	for i := range h.groups {
		g := &h.groups[i]
		if g.tid == tid {
			own = i
			continue
		}
		seen := c.Get(trace.GID(g.tid))
		if g.maxW <= seen && (!write || g.maxR <= seen) {
			continue
		}
		for j := range g.entries {
			if en := &g.entries[j]; (en.Write || write) && !(en.Atomic && atomic) && en.Clock > seen {
				race(g.tid, en)
			}
		}
	}
	if own < 0 {
		own = len(h.groups)
		h.groups = append(h.groups, historyGroup{tid: tid})
	}
	g := &h.groups[own]
	if write {
		g.maxW = now
	} else {
		g.maxR = now
	}
	k := -1
	for j := range g.entries {
		if en := &g.entries[j]; en.Site == site && en.Write == write {
			k = j
			break
		}
	}
	if k < 0 {
		k = len(g.entries)
		g.entries = append(g.entries, HistoryEntry{Site: site, Write: write, Atomic: atomic})
		added = true
	}
	g.entries[k].Clock, g.entries[k].Seq = now, seq
	h.lastTid, h.lastClock, h.lastSite, h.lastWrite = tid, now, site, write
	return false, added
}
