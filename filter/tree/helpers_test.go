package tree

import (
	"fmt"
	"slices"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/lockset"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// dropped runs a filter with options o over tr and returns the indexes of
// the events it dropped, and the filtered trace.
func dropped(t testing.TB, o Options, tr *trace.Trace) ([]int, *trace.Trace) {
	t.Helper()
	f := New(o)
	out := &trace.Trace{M: tr.M}
	var idx []int
	for i := range tr.Events {
		e := tr.Events[i] // a copy: the filter must not rely on keeping it
		if f.Keep(&e) {
			out.Events = append(out.Events, tr.Events[i])
		} else {
			idx = append(idx, i)
			if !e.Op.IsAccess() {
				t.Fatalf("dropped a %s event (index %d)", e.Op, i)
			}
		}
	}
	s := f.Stats()
	if s.Events != int64(len(tr.Events)) || s.Kept+s.Dropped != s.Events || s.Dropped != int64(len(idx)) {
		t.Fatalf("stats %+v for %d events, %d dropped", s, len(tr.Events), len(idx))
	}
	return idx, out
}

// detectors by name, as OptionsFor names them.
var detectorNames = []string{"hb", "fasttrack", "hybrid", "lockset"}

func newDetector(name string, s finding.Sink) detect.Detector {
	switch name {
	case "hb":
		return hb.New(s)
	case "fasttrack":
		return hb.NewFastTrack(s)
	case "hybrid":
		return lockset.NewHybrid(s)
	case "lockset":
		return lockset.New(s)
	}
	panic(name)
}

// result is what one detector reported on one trace.
type result struct {
	races []finding.Race
	col   *finding.Collector
}

func (r *result) Report(x *finding.Race) {
	r.races = append(r.races, *x)
	r.col.Report(x)
}

func runDetector(t testing.TB, name string, tr *trace.Trace) *result {
	t.Helper()
	r := &result{col: finding.NewCollector()}
	if _, err := detect.Run(tr.Iter(), newDetector(name, r)); err != nil {
		t.Fatal(err)
	}
	return r
}

// pairsByAddr is the set of distinct site pairs racing on each address.
func (r *result) pairsByAddr() map[uint64][]finding.Pair {
	m := map[uint64][]finding.Pair{}
	for _, x := range r.races {
		p := x.Pair()
		if !slices.Contains(m[x.Addr], p) {
			m[x.Addr] = append(m[x.Addr], p)
		}
	}
	for _, ps := range m {
		finding.SortPairs(ps)
	}
	return m
}

// firstRace maps each raced address to the Seq of the first access that
// raced on it (FastTrack's guarantee is about these).
func (r *result) firstRace() map[uint64]uint64 {
	m := map[uint64]uint64{}
	for _, x := range r.races {
		if s, ok := m[x.Addr]; !ok || x.Cur.Seq < s {
			m[x.Addr] = x.Cur.Seq
		}
	}
	return m
}

// labels renders the distinct pairs of r with the sites' labels, "a~b"
// with a <= b, sorted.
func labels(m *trace.Meta, r *result) []string {
	var out []string
	for _, p := range r.col.Pairs() {
		a, b := m.Site(p.A).String(), m.Site(p.B).String()
		if a > b {
			a, b = b, a
		}
		out = append(out, a+"~"+b)
	}
	slices.Sort(out)
	return out
}

// guarantee checks what Options o promises for the detectors it serves,
// comparing the full trace tr with the filtered one; it returns a
// description of the first difference, or "".
func guarantee(t testing.TB, o Options, tr, filtered *trace.Trace) string {
	t.Helper()
	serves := map[Relation][]string{
		All:           {"hb", "hybrid", "lockset"},
		HappensBefore: {"hb"},
		Hybrid:        {"hybrid"},
		Eraser:        {"lockset"},
	}[o.Relation]
	if o.Span {
		serves = nil // span redundancy keeps fasttrack's guarantee only
	}
	for _, d := range serves {
		full, filt := runDetector(t, d, tr), runDetector(t, d, filtered)
		if a, b := fmt.Sprint(full.pairsByAddr()), fmt.Sprint(filt.pairsByAddr()); a != b {
			return fmt.Sprintf("%s: pairs by address %s unfiltered, %s filtered", d, a, b)
		}
	}
	if o.Relation == All || o.Relation == HappensBefore {
		full, filt := runDetector(t, "fasttrack", tr), runDetector(t, "fasttrack", filtered)
		if a, b := fmt.Sprint(full.firstRace()), fmt.Sprint(filt.firstRace()); a != b {
			return fmt.Sprintf("fasttrack: first race per address %s unfiltered, %s filtered", a, b)
		}
		// Whatever fasttrack reports after its first races is a real race
		// of the full trace.
		all := runDetector(t, "hb", tr).col.Pairs()
		for _, p := range filt.col.Pairs() {
			if !slices.Contains(all, p) {
				return fmt.Sprintf("fasttrack: filtered pair %v not an hb pair %v", p, all)
			}
		}
	}
	return ""
}
