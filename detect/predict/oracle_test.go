package predict

// Differential tests against an oracle that shares no code with this
// package: detect/reference.PredictableRaces enumerates the correct
// reorderings of a small trace (each read seeing the write it saw), so a
// rule of buildModel that lets a read see another write, and every
// witness built on it, shows up here, where bruteRaces (which runs the
// model itself) cannot see it.

import (
	"slices"
	"testing"

	"github.com/racekit/racekit/detect/reference"
	"github.com/racekit/racekit/detect/wcp"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// subset reports the pairs of a missing from b.
func missing(a, b []finding.Pair) []finding.Pair {
	var out []finding.Pair
	for _, p := range a {
		if !slices.Contains(b, p) {
			out = append(out, p)
		}
	}
	return out
}

// TestPredictedRacesAgainstOracle: on thousands of random small traces,
//   - with no value recorded (as the Go front end records plain accesses)
//     and no BarrierPair, mcm reports exactly the oracle's races: none that
//     needs a read to see another write (precision), none fewer
//     (maximality);
//   - with some values recorded, mcm may let a read see another write of
//     its value, so it reports at least the oracle's races;
//   - rdit, on traces with no value recorded but the ad hoc flags of the
//     BarrierPair pattern, reports only races of the trace read as
//     complete: a subset of the oracle's;
//   - wcp's first race is a race of the oracle, or the trace has a
//     predictable deadlock (Kini et al., PLDI'17, Theorem 1: WCP's
//     soundness is weak, for the first race).
func TestPredictedRacesAgainstOracle(t *testing.T) {
	count := 1500
	if testing.Short() {
		count = 500
	}
	var exact, races, states, wcpFirst int
	for seed := range uint64(count) {
		for _, cfg := range []genConfig{{values: 0}, {values: 0, bps: true}, {values: 0.6}} {
			tr, _ := smallTrace(seed, cfg)
			ref := reference.PredictableRaces(tr)
			states += ref.States
			want := reference.Pairs(tr, ref.Races)
			dm, dr := NewMCM(nil, whole()), NewRDIT(nil, whole())
			mcm, rdit := runDetector(tr, dm), runDetector(tr, dr)
			for _, d := range []*Detector{dm, dr} {
				if n := d.Stats()["witness_rejected"]; n != 0 {
					t.Fatalf("seed %d %+v: %s's solver found %d reorderings its own semantics reject\n%s", seed, cfg, d.name, n, dump(tr))
				}
			}
			races += len(want)
			switch {
			case cfg.values == 0 && !cfg.bps:
				exact++
				if !slices.Equal(mcm, want) {
					t.Fatalf("seed %d %+v: mcm %v, oracle %v\n%s", seed, cfg, label(tr, mcm), label(tr, want), dump(tr))
				}
				if !slices.Equal(rdit, want) {
					t.Fatalf("seed %d %+v: rdit %v, oracle %v (no BarrierPair: rdit is mcm)\n%s", seed, cfg, label(tr, rdit), label(tr, want), dump(tr))
				}
			case cfg.values == 0:
				if x := missing(rdit, want); len(x) > 0 {
					t.Fatalf("seed %d %+v: rdit reports %v, no race of any correct reordering\n%s", seed, cfg, label(tr, x), dump(tr))
				}
				if x := missing(want, mcm); len(x) > 0 {
					t.Fatalf("seed %d %+v: mcm misses %v\n%s", seed, cfg, label(tr, x), dump(tr))
				}
			default:
				if x := missing(want, mcm); len(x) > 0 {
					t.Fatalf("seed %d %+v: mcm misses %v\n%s", seed, cfg, label(tr, x), dump(tr))
				}
			}
			var first *finding.Race
			w := wcp.New(finding.SinkFunc(func(r *finding.Race) {
				if first == nil {
					c := *r
					first = &c
				}
			}))
			for i := range tr.Events {
				w.Handle(&tr.Events[i])
			}
			w.Finish()
			if first != nil && cfg.values == 0 && !cfg.bps {
				wcpFirst++
				if !slices.Contains(want, first.Pair()) && !ref.Deadlock {
					t.Fatalf("seed %d %+v: wcp's first race %v is no race of any correct reordering, and no deadlock is\n%s",
						seed, cfg, label(tr, []finding.Pair{first.Pair()}), dump(tr))
				}
			}
		}
	}
	t.Logf("%d traces (%d compared exactly), %d oracle races, %d states, %d wcp first races checked", 3*count, exact, races, states, wcpFirst)
	if races == 0 || wcpFirst == 0 {
		t.Fatal("the sample exercises nothing")
	}
}

// TestNoPredictionThroughAFlagPublishedUnderALock is issue 29's example:
// x is written, then a flag set, under one lock; the reader reads the flag
// under the lock and reads x only if it saw the flag set. Values are not
// recorded. The reader's read of the flag must see the writer's write (it
// saw it), so the writer's critical section comes first, and x is ordered.
func TestNoPredictionThroughAFlagPublishedUnderALock(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "W", "")
	b.Fork("M", "R", "")
	b.Acq("W", "mu")
	b.Write("W", "x", "w.go:1")
	b.Write("W", "ready", "w.go:2")
	b.Rel("W", "mu")
	b.Acq("R", "mu")
	b.Read("R", "ready", "r.go:1")
	b.Rel("R", "mu")
	b.Read("R", "x", "r.go:2")
	tr := b.Trace()
	if ref := reference.PredictableRaces(tr); len(ref.Races) != 0 {
		t.Fatalf("oracle: %v", label(tr, reference.Pairs(tr, ref.Races)))
	}
	for _, d := range []*Detector{NewMCM(nil, whole()), NewRDIT(nil, whole())} {
		if got := runDetector(tr, d); len(got) != 0 {
			t.Errorf("%s predicts %v on correct code", d.name, label(tr, got))
		}
	}
	// Written without the flag's read seeing the write (the reader came
	// first), x's accesses are a race of a reordering.
	b = trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "W", "")
	b.Fork("M", "R", "")
	b.Acq("R", "mu")
	b.Read("R", "ready", "r.go:1")
	b.Rel("R", "mu")
	b.Read("R", "x", "r.go:2")
	b.Acq("W", "mu")
	b.Write("W", "x", "w.go:1")
	b.Write("W", "ready", "w.go:2")
	b.Rel("W", "mu")
	tr = b.Trace()
	want := reference.Pairs(tr, reference.PredictableRaces(tr).Races)
	if len(want) != 1 {
		t.Fatalf("oracle: %v, want the race on x", label(tr, want))
	}
	for _, d := range []*Detector{NewMCM(nil, whole()), NewRDIT(nil, whole())} {
		if got := runDetector(tr, d); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", d.name, label(tr, got), label(tr, want))
		}
	}
}
