package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// coldRace is §3.4's scenario: T1 makes work hot, then T2's first call of
// work writes X and T3's first call of report reads it, unordered; a second
// race, on Y, sits in T1's hot calls (every call of work writes Y and T3
// writes it once at the end).
func coldRace() *trace.Trace {
	b := trace.NewBuilder()
	b.Fork("T1", "T2", "main.go:1")
	b.Fork("T1", "T3", "main.go:2")
	for i := 0; i < 200; i++ {
		b.Enter("T1", "work")
		b.Write("T1", "local1", "work.go:5")
		b.Exit("T1", "work")
	}
	b.Enter("T2", "work")
	b.Write("T2", "X", "work.go:5")
	b.Exit("T2", "work")
	b.Enter("T3", "report")
	b.Read("T3", "X", "report.go:9")
	b.Exit("T3", "report")
	return b.Trace()
}

func TestAnalyze(t *testing.T) {
	tr := coldRace()
	r, err := analyze("cold", tr, config{seeds: 3, perMillion: 3, rareCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.accesses != 202 || len(r.races) != 1 {
		t.Fatalf("accesses %d, races %v", r.accesses, r.races)
	}
	// 202 accesses: 1 race occurring once is rare by both rules
	// (1·10^6 < 3·202 fails: not rare per million; count 1 < 3: rare).
	if r.races[0].rare || !r.races[0].rareN {
		t.Fatalf("race classified %+v", r.races[0])
	}
	tl := r.sampler["tl-ad"]
	// TL-Ad logs T1's calls 0-9 and 100-109 of work, and both cold calls.
	if tl.logged != 22 || tl.found != 1 || tl.invented != 0 || tl.foundRN != 1 {
		t.Fatalf("tl-ad %+v", tl)
	}
	// GS-Ad: T1 (born in untraced code) has its own key, and T2 and T3
	// were forked at different go statements: the same 22 as TL-Ad.
	if gs := r.sampler["gs-ad"]; gs.logged != 22 || gs.found != 1 || gs.invented != 0 {
		t.Fatalf("gs-ad %+v", gs)
	}
	// TP-Ad: T1's calls from untraced code run on one slot of the roots'
	// pool, one after another, and T2 and T3 each on the first slot of
	// their go statement's: the same 22.
	if tp := r.sampler["tp-ad"]; tp.logged != 22 || tp.found != 1 || tp.invented != 0 {
		t.Fatalf("tp-ad %+v", tp)
	}
	g := r.sampler["g-ad"]
	if g.found != 0 || g.invented != 0 {
		t.Fatalf("g-ad %+v", g)
	}
	for name, sr := range r.sampler {
		if sr.invented != 0 {
			t.Errorf("%s invented %d races", name, sr.invented)
		}
	}
}

// Two runs of one subject average; subjects aggregate by plain mean and by
// access-weighted mean.
func TestRender(t *testing.T) {
	tr := coldRace()
	cfg := config{seeds: 2, perMillion: 3, rareCount: 3}
	a, _ := analyze("cold", tr, cfg)
	b, _ := analyze("cold", tr, cfg)
	subs := bySubject([]runResult{a, b})
	if len(subs) != 1 || subs[0].runs != 2 || subs[0].accesses != 202 || subs[0].esr["tl-ad"] != 22.0/202 || subs[0].det["tl-ad"] != 1 {
		t.Fatalf("subject %+v", subs[0])
	}
	var out bytes.Buffer
	render(&out, cfg, []runResult{a, b})
	s := out.String()
	for _, want := range []string{"| TL-Ad |", "| GS-Ad |", "| TP-Ad |", "10.9%", "NOT met (pooled detection 100.0%, weighted ESR 10.9%)", "Samplers meeting both halves (pooled detection ≥ 70%, weighted ESR ≤ 5%): none."} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

// The online comparison: per subject, sampled runs' mean accesses over the
// full runs', races of the full runs' union found, and races found only
// by sampled runs counted apart.
func TestOnlineTable(t *testing.T) {
	pa, pb, pc := finding.MakePair(1, 2), finding.MakePair(3, 4), finding.MakePair(5, 6)
	full := []runResult{
		{subject: "s", accesses: 1000, races: []race{{pair: pa}}},
		{subject: "s", accesses: 3000, races: []race{{pair: pa}, {pair: pb}}},
		{subject: "quiet", accesses: 500},
	}
	on := []onlineRun{
		{subject: "s", accesses: 100, pairs: []finding.Pair{pa, pc}},
		{subject: "s", accesses: 300},
		{subject: "quiet", accesses: 50},
	}
	var b bytes.Buffer
	onlineTable(&b, "tl-ad loops", full, on)
	out := b.String()
	for _, want := range []string{
		"| s | 2 | 2 | 2000 | 200 | 10.0% | 2 | 1 | 1 |",
		"| quiet | 1 | 1 | 500 | 50 | 10.0% | 0 | 0 | 0 |",
		"weighted ESR 10.0%, mean ESR 10.0%; detection 50.0% pooled (1 of 2 races), 50.0% mean of the 1 subjects with races; 1 races found only in sampled runs.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
