package hb_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// detector is what both detectors of the package are.
type detector interface {
	detect.Detector
	detect.Stats
}

// flavour names one of the two detectors and builds it.
type flavour struct {
	name string
	make func(finding.Sink) detector
}

var (
	hbFlavour = flavour{"hb", func(s finding.Sink) detector { return hb.New(s) }}
	ftFlavour = flavour{"fasttrack", func(s finding.Sink) detector { return hb.NewFastTrack(s) }}
	flavours  = []flavour{hbFlavour, ftFlavour}
)

// result is what one detector reported on one trace.
type result struct {
	races []finding.Race // every dynamic report, in order
	c     *finding.Collector
	stats map[string]int64
}

func run(t testing.TB, f flavour, tr *trace.Trace) result {
	t.Helper()
	var r result
	r.c = finding.NewCollector()
	d := f.make(finding.SinkFunc(func(x *finding.Race) {
		r.races = append(r.races, *x)
		r.c.Report(x)
	}))
	if _, err := detect.Run(tr.Iter(), d); err != nil {
		t.Fatalf("%s: %v", f.name, err)
	}
	r.stats = d.Stats()
	for _, x := range r.races {
		if x.Detector != f.name || x.Evidence != finding.Observed {
			t.Errorf("%s reported %q with evidence %v", f.name, x.Detector, x.Evidence)
		}
	}
	return r
}

// labels renders site pairs as "a~b" with a <= b, sorted, so expectations
// read in the trace's own site labels.
func labels(m *trace.Meta, ps []finding.Pair) []string {
	out := []string{}
	for _, p := range ps {
		a, b := m.Site(p.A).String(), m.Site(p.B).String()
		if a > b {
			a, b = b, a
		}
		out = append(out, a+"~"+b)
	}
	slices.Sort(out)
	return out
}

func norm(want []string) []string {
	out := []string{}
	for _, w := range want {
		a, b, _ := strings.Cut(w, "~")
		if a > b {
			a, b = b, a
		}
		out = append(out, a+"~"+b)
	}
	slices.Sort(out)
	return out
}

// expect runs both detectors on tr and checks that each reports exactly the
// site pairs want ("a~b", in site labels). It returns the results, hb's
// first.
func expect(t *testing.T, tr *trace.Trace, want ...string) (hbRes, ftRes result) {
	t.Helper()
	return expectEach(t, tr, want, want)
}

// expectEach is expect with a separate expectation per detector.
func expectEach(t *testing.T, tr *trace.Trace, hbWant, ftWant []string) (hbRes, ftRes result) {
	t.Helper()
	hbRes, ftRes = run(t, hbFlavour, tr), run(t, ftFlavour, tr)
	for _, c := range []struct {
		f    flavour
		r    result
		want []string
	}{{hbFlavour, hbRes, hbWant}, {ftFlavour, ftRes, ftWant}} {
		if got, want := labels(tr.M, c.r.c.Pairs()), norm(c.want); !slices.Equal(got, want) {
			t.Errorf("%s: races %v, want %v", c.f.name, got, want)
		}
	}
	return hbRes, ftRes
}

// forked starts a builder whose main goroutine M forks each of gs.
func forked(gs ...string) *trace.Builder {
	b := trace.NewBuilder()
	b.Begin("M")
	for _, g := range gs {
		b.Fork("M", g, "go "+g)
	}
	return b
}

// access is the finding.Access of event i of tr.
func access(tr *trace.Trace, i int) finding.Access {
	e := &tr.Events[i]
	return finding.Access{Seq: e.Seq, G: e.G, Site: e.Site, Write: e.IsWrite()}
}

// checkOnly checks that r holds exactly one distinct race, between events
// prev and cur of tr.
func checkOnly(t *testing.T, name string, r result, tr *trace.Trace, prev, cur int) {
	t.Helper()
	gs := r.c.Groups()
	if len(gs) != 1 {
		t.Fatalf("%s: %d distinct races, want 1", name, len(gs))
	}
	g := gs[0]
	if g.Addr != tr.Events[cur].Obj || g.Prev != access(tr, prev) || g.Cur != access(tr, cur) {
		t.Errorf("%s: race %+v, want addr %#x prev %+v cur %+v", name, g.Race,
			tr.Events[cur].Obj, access(tr, prev), access(tr, cur))
	}
}
