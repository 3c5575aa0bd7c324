package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/predict"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// TestAccountBarrierPairs is the Account case study of the RDIT thesis
// (section 4.5) end to end. testdata/src/account waits for its two
// depositing goroutines through package liveness (the part of Java's
// native Thread.isAlive). TestPrograms traces everything: hb reports only
// the true race, on the bank's total. Here liveness is excluded from
// tracing, so its synchronization is missing from the trace, and each
// call into it is a BarrierPair whose D holds the Thread's words. Then,
// as Figure 4.7 shows, hb reports the four false alarms of the thesis
// besides the race, mcm (the maximal causal model without BarrierPairs)
// the same five, and rdit only the race.
func TestAccountBarrierPairs(t *testing.T) {
	dir := t.TempDir()
	code, out := runRacekit(t, "run", "--keep-trace", dir, "--exclude", "racekit.test/e2e/account/liveness", "./account")
	if code != 66 {
		t.Fatalf("racekit run: exit %d, want 66 (races)\n%s", code, out)
	}
	if !strings.Contains(out, "WARNING: DATA RACE") {
		t.Fatalf("unexpected output\n%s", out)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.rkt"))
	if len(paths) != 1 {
		t.Fatalf("kept traces %v", paths)
	}
	lines := accountLines(t)
	f, err := tracefile.Open(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hbc, mcmc, rditc := finding.NewCollector(), finding.NewCollector(), finding.NewCollector()
	bps := &barrierCount{}
	if _, err := detect.Run(f, bps, hb.New(hbc), predict.NewMCM(mcmc, predict.Options{}), predict.NewRDIT(rditc, predict.Options{})); err != nil {
		t.Fatal(err)
	}
	// The BarrierPairs: the two Exit calls and main's polls, each with a D
	// that reaches the Thread (its one word).
	if bps.begins < 3 || bps.begins != bps.ends || bps.emptyD > 0 {
		t.Errorf("BarrierPairs: %d begins, %d ends, %d with an empty D", bps.begins, bps.ends, bps.emptyD)
	}
	name := func(c *finding.Collector) []string {
		var ps []string
		for _, p := range c.Pairs() {
			a, b := lines.name(f.Meta(), p.A), lines.name(f.Meta(), p.B)
			if b < a {
				a, b = b, a
			}
			ps = append(ps, a+"-"+b)
		}
		slices.Sort(ps)
		return slices.Compact(ps)
	}
	// The thesis' lines: x1 (4), y by T1 (5), x2 (7), y by T2 (8), main's
	// reads of x1 (16), x2 (17), y (19).
	wantHB := []string{"16-4", "17-7", "19-5", "19-8", "5-8"}
	if got := name(hbc); !slices.Equal(got, wantHB) {
		t.Errorf("hb: %v, want the true race 5-8 and the four false alarms %v", got, wantHB)
	}
	if got := name(mcmc); !slices.Equal(got, wantHB) {
		t.Errorf("mcm: %v, want %v (without BarrierPairs nothing orders main's reads)", got, wantHB)
	}
	if got := name(rditc); !slices.Equal(got, []string{"5-8"}) {
		t.Errorf("rdit: %v, want only the true race 5-8", got)
	}
}

// barrierCount counts a trace's BarrierPairs.
type barrierCount struct{ begins, ends, emptyD int }

func (c *barrierCount) Handle(e *trace.Event) {
	switch e.Op {
	case trace.OpMethodBegin:
		c.begins++
		if len(e.Addrs) == 0 {
			c.emptyD++
		}
	case trace.OpMethodEnd:
		c.ends++
	}
}

func (c *barrierCount) Finish() {}

// thesisLines maps the account program's source lines to the thesis'
// line numbers, from its "thesis line N" comments and the "race: y"
// lines (5 and 8, in that order).
type thesisLines map[int]string

func accountLines(t *testing.T) thesisLines {
	data, err := os.ReadFile("testdata/src/account/main.go")
	if err != nil {
		t.Fatal(err)
	}
	m := thesisLines{}
	ys := []string{"5", "8"}
	for i, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.Contains(l, "// race: y"):
			m[i+1], ys = ys[0], ys[1:]
		case strings.Contains(l, "thesis line "):
			m[i+1] = strings.Fields(l[strings.Index(l, "thesis line ")+len("thesis line "):])[0]
		}
	}
	if len(m) != 7 {
		t.Fatalf("found %d of the 7 thesis lines: %v", len(m), m)
	}
	return m
}

func (l thesisLines) name(m *trace.Meta, id trace.SiteID) string {
	s := m.Site(id)
	if n, ok := l[s.Line]; ok && strings.HasSuffix(s.File, "account/main.go") {
		return n
	}
	return fmt.Sprintf("%s:%d", filepath.Base(s.File), s.Line)
}
