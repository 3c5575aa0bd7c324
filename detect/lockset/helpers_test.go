package lockset

import (
	"reflect"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// runEraser runs Eraser over tr and returns the detector and its findings.
func runEraser(t *testing.T, tr *trace.Trace) (*Eraser, *finding.Collector) {
	t.Helper()
	c := finding.NewCollector()
	d := New(c)
	if _, err := detect.Run(tr.Iter(), d); err != nil {
		t.Fatal(err)
	}
	return d, c
}

// runHybrid runs Hybrid over tr and returns the detector and its findings.
func runHybrid(t *testing.T, tr *trace.Trace) (*Hybrid, *finding.Collector) {
	t.Helper()
	c := finding.NewCollector()
	d := NewHybrid(c)
	if _, err := detect.Run(tr.Iter(), d); err != nil {
		t.Fatal(err)
	}
	return d, c
}

// pairs turns site labels into the sorted pairs a Collector returns.
func pairs(b *trace.Builder, labels ...[2]string) []finding.Pair {
	ps := []finding.Pair{}
	for _, l := range labels {
		ps = append(ps, finding.MakePair(b.Site(l[0]), b.Site(l[1])))
	}
	finding.SortPairs(ps)
	return ps
}

// wantPairs fails unless c found exactly the pairs want.
func wantPairs(t *testing.T, b *trace.Builder, c *finding.Collector, want []finding.Pair) {
	t.Helper()
	got := c.Pairs()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pairs = %s, want %s", fmtPairs(b, got), fmtPairs(b, want))
	}
}

func fmtPairs(b *trace.Builder, ps []finding.Pair) string {
	m := b.Trace().M
	s := "{"
	for i, p := range ps {
		if i > 0 {
			s += " "
		}
		s += "(" + m.Site(p.A).String() + "," + m.Site(p.B).String() + ")"
	}
	return s + "}"
}

// wantStat fails unless the detector's counter name is want.
func wantStat(t *testing.T, d detect.Stats, name string, want int64) {
	t.Helper()
	if got := d.Stats()[name]; got != want {
		t.Errorf("stat %s = %d, want %d", name, got, want)
	}
}
