package sched

import (
	"fmt"
	"slices"
	"testing"
)

// overtake is a check that random scheduling almost never sees fail: g0.1
// reads a flag at its first point, g0.2 sets it after n points of its own
// (a long sleep, a slow monitor). The check fails (ERROR) only when g0.2
// runs all n points first: 2^-n of random schedules.
func overtake(n int) []*simG {
	long := &simG{name: "g0.2"}
	for i := 0; i < n; i++ {
		long.steps = append(long.steps, simStep{kind: KindAtomic, obj: 0x900, site: fmt.Sprintf("m%d", i)})
	}
	long.steps = append(long.steps, simStep{kind: KindAtomic, obj: objY, site: "set", do: set("flag", 1)})
	check := &simG{name: "g0.1", steps: []simStep{
		{kind: KindAtomic, obj: objY, site: "check", do: func(v map[string]int) int {
			if v["flag"] == 1 {
				return -1
			}
			return 1 + 1 // past the ERROR
		}},
		{kind: KindOther, site: "wait", err: "ERROR"},
	}}
	return []*simG{check, long}
}

// A goroutine held at a delay point lets the others run ahead, so the
// check that random scheduling (nearly) never fails fails in some runs.
func TestDelayFuzzerOvertakes(t *testing.T) {
	const runs, n = 400, 12
	delayed, random := 0, 0
	for seed := uint64(0); seed < runs; seed++ {
		if len(simulate(NewDelayFuzzer(seed), overtake(n)).errors) > 0 {
			delayed++
		}
		if len(simulate(NewRandom(seed), overtake(n)).errors) > 0 {
			random++
		}
	}
	t.Logf("check overtaken by %d points: %d of %d runs (random: %d)", n, delayed, runs, random)
	if delayed < runs/50 {
		t.Errorf("DelayFuzzer made the overtake happen in %d of %d runs, want at least %d", delayed, runs, runs/50)
	}
	if random > 1 {
		t.Errorf("random scheduling overtook in %d of %d runs; the subject expects 2^-%d", random, runs, n)
	}
}

// The same seed gives the same schedule (replay needs no recording), and
// the seeds do not all give one.
func TestDelayFuzzerDeterministic(t *testing.T) {
	digests := map[string]bool{}
	for seed := uint64(0); seed < 20; seed++ {
		a := simulate(NewDelayFuzzer(seed), figure2(6))
		b := simulate(NewDelayFuzzer(seed), figure2(6))
		if d := DiffSteps(a.steps, b.steps); d != "" {
			t.Fatalf("seed %d: two runs differ: %s", seed, d)
		}
		digests[fmt.Sprint(a.order)] = true
	}
	if len(digests) < 5 {
		t.Errorf("20 seeds gave %d schedules", len(digests))
	}
}

// The contract rt relies on (Pauser): a point WouldPause names is held
// when Next meets it, so rt offers the earliest timer when such points are
// all that could proceed, and Next fires it; once nothing else can go on
// the goroutine is released, and is not held again at the same point.
func TestDelayFuzzerPausesAsAnnounced(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		s := NewDelayFuzzer(seed)
		var p Point
		found := false
		for n := 0; n < 200 && !found; n++ {
			p = Point{G: "g0", N: n, Kind: KindAtomic, Obj: objX, Site: "a.go:3", Enabled: true}
			found = s.WouldPause(p)
		}
		if !found {
			t.Fatalf("seed %d (one in %d): no delay point among 200", seed, s.Every())
		}
		timer := Point{G: TimerG, Kind: KindTimer, Site: "a.go:9", Enabled: true}
		if i := s.Next([]Point{p, timer}); i != 1 {
			t.Fatalf("seed %d: Next chose %v at a delay point with a timer offered, want the timer", seed, []Point{p, timer}[i])
		}
		if got := s.Postponed(); len(got) > 0 && !slices.Equal(got, []string{"g0"}) {
			t.Fatalf("seed %d: postponed %v, want g0 at most", seed, got)
		}
		if i := s.Next([]Point{p}); i != 0 {
			t.Fatalf("seed %d: Next chose %d with only the held goroutine enabled", seed, i)
		}
		if s.WouldPause(p) || len(s.Postponed()) != 0 {
			t.Fatalf("seed %d: released at %v, still delayed there", seed, p)
		}
		for _, k := range []Kind{KindBegin, KindEnd, KindTimer, KindResume} {
			q := p
			q.Kind = k
			q.N++
			for q.N < 400 && !s.delays(Point{G: q.G, N: q.N, Kind: KindAtomic, Enabled: true}) {
				q.N++
			}
			if s.WouldPause(q) {
				t.Errorf("seed %d: a %s point is a delay point", seed, k)
			}
		}
	}
}
