// Package finding is the model of what racekit reports: races between two
// accesses, with the evidence behind each, deduplicated by site pair.
//
// Detectors emit Race values into a Sink; a Collector groups them by the
// unordered pair of sites (as the race detector and the seed papers count
// "distinct races") and keeps the first occurrence of each with a count.
// Renderers (package report) read the collected groups.
package finding

import (
	"sort"

	"github.com/racekit/racekit/trace"
)

// Evidence says how much a finding is worth.
type Evidence uint8

const (
	// Observed: the two accesses were concurrent in the recorded run
	// (precise detectors: hb, fasttrack).
	Observed Evidence = iota + 1
	// Predicted: a feasible reordering of the recorded run makes them
	// concurrent (maximal causal model, RDIT, WCP).
	Predicted
	// Confirmed: a controlled re-execution made the race happen.
	Confirmed
	// Potential: an imprecise analysis flags it (lockset, hybrid, static,
	// PECAN before confirmation); it may be a false alarm.
	Potential
)

var evidenceNames = [...]string{"", "observed", "predicted", "confirmed", "potential"}

func (e Evidence) String() string {
	if int(e) < len(evidenceNames) && e != 0 {
		return evidenceNames[e]
	}
	return "unknown"
}

// Access is one side of a race.
type Access struct {
	Seq   uint64 // the event's Seq in the trace
	G     trace.GID
	Site  trace.SiteID
	Write bool
}

// Kind is "write" or "read".
func (a Access) Kind() string {
	if a.Write {
		return "write"
	}
	return "read"
}

// Race is a pair of conflicting accesses to one address by two goroutines
// that the reporting detector could not order. Prev came first in the trace.
type Race struct {
	Detector string
	Evidence Evidence
	Addr     uint64
	Prev     Access
	Cur      Access
	// Witness is, for a predicted race, the reordering that shows it (a
	// schedule a controlled run can follow); nil otherwise. It is shared,
	// never modified: a Sink may keep the pointer.
	Witness *Witness
}

// Pair is an unordered pair of sites: the identity of a distinct race.
type Pair struct{ A, B trace.SiteID } // A <= B

// MakePair orders two sites into a Pair.
func MakePair(a, b trace.SiteID) Pair {
	if a > b {
		a, b = b, a
	}
	return Pair{a, b}
}

// Pair returns the race's site pair.
func (r *Race) Pair() Pair { return MakePair(r.Prev.Site, r.Cur.Site) }

// Sink receives races as a detector finds them. Report must not retain r.
type Sink interface {
	Report(r *Race)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(r *Race)

func (f SinkFunc) Report(r *Race) { f(r) }

// Group is one distinct race: its first occurrence and how many dynamic
// races had the same site pair.
type Group struct {
	Race
	Count int
}

// Collector is a Sink that deduplicates by site pair. It is not safe for
// concurrent use.
type Collector struct {
	index  map[Pair]int
	groups []Group
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector { return &Collector{index: make(map[Pair]int)} }

// Report adds r to its group.
func (c *Collector) Report(r *Race) {
	p := r.Pair()
	if i, ok := c.index[p]; ok {
		c.groups[i].Count++
		return
	}
	c.index[p] = len(c.groups)
	c.groups = append(c.groups, Group{Race: *r, Count: 1})
}

// Len is the number of distinct races.
func (c *Collector) Len() int { return len(c.groups) }

// Groups returns the distinct races in order of first detection.
func (c *Collector) Groups() []Group { return c.groups }

// Pairs returns the distinct site pairs, sorted.
func (c *Collector) Pairs() []Pair {
	ps := make([]Pair, 0, len(c.groups))
	for _, g := range c.groups {
		ps = append(ps, g.Pair())
	}
	SortPairs(ps)
	return ps
}

// SortPairs sorts pairs by (A, B).
func SortPairs(ps []Pair) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].A != ps[j].A {
			return ps[i].A < ps[j].A
		}
		return ps[i].B < ps[j].B
	})
}
