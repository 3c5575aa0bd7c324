package predict

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/wcp"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// hide turns a complete trace into what RDIT sees when the calls are into
// untraced code: it returns full, the complete run (with the call markers,
// which mcm ignores, kept so that a goroutine born untraced is first seen
// at the same place in both), and part, in which the synchronization inside each call
// (locks, snd/rcv, atomics) and most of its accesses are gone, and whose
// MethodBegin lists in D every object the hidden events touched (besides
// the generator's random ones). Accesses left inside are callbacks: the
// observed Between events of thesis 4.2.
func hide(tr *trace.Trace, calls [][]int, seed uint64) (full, part *trace.Trace) {
	r := rand.New(rand.NewPCG(seed, 7))
	drop := map[int]bool{}
	extra := map[int][]uint64{}
	for _, c := range calls {
		for _, i := range c[1:] {
			e := &tr.Events[i]
			if !e.Op.IsAccess() || r.IntN(10) < 7 {
				drop[i] = true
				if !slices.Contains(extra[c[0]], e.Obj) {
					extra[c[0]] = append(extra[c[0]], e.Obj)
				}
			}
		}
	}
	full, part = &trace.Trace{M: tr.M}, &trace.Trace{M: tr.M}
	for i, e := range tr.Events {
		full.Events = append(full.Events, e)
		if drop[i] {
			continue
		}
		if e.Op == trace.OpMethodBegin {
			e = e.Clone()
			for _, a := range extra[i] {
				if !slices.Contains(e.Addrs, a) {
					e.Addrs = append(e.Addrs, a)
				}
			}
		}
		part.Events = append(part.Events, e)
	}
	return full, part
}

func hbPairs(tr *trace.Trace) []finding.Pair {
	c := finding.NewCollector()
	d := hb.New(c)
	for i := range tr.Events {
		d.Handle(&tr.Events[i])
	}
	d.Finish()
	return c.Pairs()
}

// TestRDITIsPreciseOnIncompleteTraces checks RDIT's guarantee (thesis 4.4.1):
// every race it reports on a trace with BarrierPairs is a race of every
// program that could have produced that trace, that is, of every complete
// trace that yields it when each call's inner events (touching only
// objects in its D) are hidden. The test draws one such complete trace per
// case (the one the incomplete trace was cut from, with its ad hoc
// synchronization through values, locks, channels and atomics inside the
// calls) and checks rdit(incomplete) ⊆ mcm(complete), by site pair; it
// also counts the false alarms mcm and hb raise on the incomplete trace,
// which RDIT exists to avoid.
func TestRDITIsPreciseOnIncompleteTraces(t *testing.T) {
	count := 800
	if testing.Short() {
		count = 300
	}
	var cases, rditTrue, truth, mcmFalse, hbFalse int
	for seed := range uint64(count) {
		tr, calls := smallTrace(seed, genConfig{values: 0.8, bps: true, hideable: true})
		if len(calls) == 0 {
			continue
		}
		cases++
		full, part := hide(tr, calls, seed)
		want := runDetector(full, NewMCM(nil, whole()))
		rd := NewRDIT(nil, whole())
		got := runDetector(part, rd)
		for _, p := range got {
			if !slices.Contains(want, p) {
				t.Fatalf("seed %d: rdit reports %v, not a race of the complete trace\ncomplete:\n%s\nincomplete:\n%s",
					seed, label(tr, []finding.Pair{p}), dump(full), dump(part))
			}
		}
		checkWitnesses(t, seed, part, rd)
		rditTrue += len(got)
		truth += len(want)
		for _, p := range runDetector(part, NewMCM(nil, whole())) {
			if !slices.Contains(want, p) {
				mcmFalse++
			}
		}
		for _, p := range hbPairs(part) {
			if !slices.Contains(want, p) {
				hbFalse++
			}
		}
	}
	t.Logf("%d incomplete traces: %d true races in the complete ones; rdit finds %d with no false alarm; mcm raises %d false alarms, hb %d",
		cases, truth, rditTrue, mcmFalse, hbFalse)
	if cases == 0 || mcmFalse == 0 || rditTrue == 0 {
		t.Fatal("the sample exercises nothing")
	}
}

// TestRDITEqualsMCMWithoutBarrierPairs: on a trace without BarrierPairs the
// two models are one.
func TestRDITEqualsMCMWithoutBarrierPairs(t *testing.T) {
	count := 300
	if testing.Short() {
		count = 100
	}
	for seed := range uint64(count) {
		tr, _ := smallTrace(seed, genConfig{values: 0.5})
		m, r := runDetector(tr, NewMCM(nil, whole())), runDetector(tr, NewRDIT(nil, whole()))
		if !slices.Equal(m, r) {
			t.Fatalf("seed %d: mcm %v, rdit %v\n%s", seed, label(tr, m), label(tr, r), dump(tr))
		}
	}
}

// TestMCMContainsHBAndWCP: on complete traces with every value known, mcm
// reports every race hb reports that is predictable at all, and wcp's
// first race (the one WCP's soundness theorem covers) unless the trace has
// a predictable deadlock instead. An hb race need not be an mcm race when
// an earlier race feeds a read on its path (a read that must see a racy
// write that only comes after one of the accesses); the test checks that
// explanation for each such pair against the brute force.
func TestMCMContainsHBAndWCP(t *testing.T) {
	count := 400
	if testing.Short() {
		count = 200
	}
	var hbRaces, hbMissed, wcpChecked int
	for seed := range uint64(count) {
		tr, _ := smallTrace(seed, genConfig{values: 1})
		got := runDetector(tr, NewMCM(nil, whole()))
		hp := hbPairs(tr)
		hbRaces += len(hp)
		ref, _ := bruteRaces(buildModel(tr.Events, newPrefix(), false))
		exact := sitePairs(tr.Events, ref)
		if !slices.Equal(got, exact) {
			t.Fatalf("seed %d: mcm %v, brute force %v", seed, label(tr, got), label(tr, exact))
		}
		for _, p := range hp {
			if !slices.Contains(got, p) {
				hbMissed++
				if !hbRaceNeedsRacyRead(tr, p) {
					t.Fatalf("seed %d: hb race %v missed by mcm with no racy read before it\n%s", seed, label(tr, []finding.Pair{p}), dump(tr))
				}
			}
		}
		var first *finding.Race
		wd := wcp.New(finding.SinkFunc(func(r *finding.Race) {
			if first == nil || r.Cur.Seq < first.Cur.Seq || (r.Cur.Seq == first.Cur.Seq && r.Prev.Seq > first.Prev.Seq) {
				c := *r
				first = &c
			}
		}))
		for i := range tr.Events {
			wd.Handle(&tr.Events[i])
		}
		wd.Finish()
		if first != nil {
			wcpChecked++
			if !slices.Contains(got, first.Pair()) && !deadlockable(tr) {
				t.Fatalf("seed %d: wcp's first race %v not reported by mcm\n%s", seed, label(tr, []finding.Pair{first.Pair()}), dump(tr))
			}
		}
	}
	t.Logf("%d traces: hb %d races, %d of them not mcm races (each after a racy read); wcp first race checked on %d traces",
		count, hbRaces, hbMissed, wcpChecked)
}

// hbRaceNeedsRacyRead reports whether some read with a known value in the
// trace reads from a write that happens-before does not order before it:
// the only way an hb race can fail to be predictable.
func hbRaceNeedsRacyRead(tr *trace.Trace, _ finding.Pair) bool {
	// A racy read is a read whose observed write races with it under hb:
	// find reads that are one side of an hb race with the last write.
	hp := hbPairs(tr)
	last := map[uint64]int{}
	for i, e := range tr.Events {
		switch e.Op {
		case trace.OpWrite:
			last[e.Obj] = i
		case trace.OpRead:
			if w, ok := last[e.Obj]; ok && e.ValueKnown() && slices.Contains(hp, finding.MakePair(tr.Events[w].Site, e.Site)) {
				return true
			}
		}
	}
	return false
}

// deadlockable reports whether some reordering of tr (under the model)
// reaches a state where goroutines wait for each other's locks in a cycle.
func deadlockable(tr *trace.Trace) bool {
	m := buildModel(tr.Events, newPrefix(), false)
	seen := map[string]bool{}
	found := false
	var visit func(s *sim)
	visit = func(s *sim) {
		k := s.key()
		if seen[k] || found {
			return
		}
		seen[k] = true
		waits := map[int32]int32{}
		for g := range int32(len(m.byG)) {
			i := s.next(g)
			if i < 0 || m.ev[i].Op != trace.OpAcquire || s.enabled(i) != nil {
				continue
			}
			if h := s.excl[m.ev[i].Obj]; h != 0 && h-1 != g {
				waits[g] = h - 1
			}
		}
		for g := range waits {
			x, ok := g, true
			for range len(waits) + 1 {
				if x, ok = waits[x]; !ok {
					break
				}
			}
			if ok {
				found = true
			}
		}
		for g := range int32(len(m.byG)) {
			if i := s.next(g); i >= 0 && s.canRun(i) == nil {
				c := s.clone()
				c.run(i)
				visit(c)
			}
		}
	}
	visit(newSim(m))
	return found
}
