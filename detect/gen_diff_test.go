package detect_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/lockset"
	"github.com/racekit/racekit/detect/reference"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
)

// randomConfig draws a small generator configuration: every shape, lock
// nesting, read locks, handoffs, atomics, sync objects, racy or not.
func randomConfig(seed uint64) gen.Config {
	r := rand.New(rand.NewPCG(seed, 99))
	c := gen.DefaultConfig()
	c.Seed = seed
	c.Shape = gen.Shapes()[r.IntN(len(gen.Shapes()))]
	c.Goroutines = 1 + r.IntN(7)
	c.Events = gen.MinEvents(c.Goroutines) + int64(r.IntN(1500))
	c.Locks = r.IntN(4)
	c.Vars = 4 + r.IntN(20)
	c.Nesting = 1 + r.IntN(3)
	c.RacyFraction = []float64{0, 0.1, 0.3}[r.IntN(3)]
	c.HandoffFraction = []float64{0, 0.2}[r.IntN(2)]
	c.Switch = r.Float64()
	c.Values = r.IntN(2) == 0
	return c
}

type run struct {
	col *finding.Collector
	all []finding.Race // every dynamic report, in order
}

func (r *run) Report(x *finding.Race) {
	r.col.Report(x)
	r.all = append(r.all, *x)
}

func newRun() *run { return &run{col: finding.NewCollector()} }

// firstRacePerAddr maps each raced address to the Seq of the first access
// that raced on it.
func firstRacePerAddr(rs []finding.Race) map[uint64]uint64 {
	m := map[uint64]uint64{}
	for _, r := range rs {
		if s, ok := m[r.Addr]; !ok || r.Cur.Seq < s {
			m[r.Addr] = r.Cur.Seq
		}
	}
	return m
}

// TestGeneratedTraces checks every detector against the generator's
// planted ground truth and against each other:
//   - hb reports exactly the planted pairs (and the brute-force oracle
//     agrees on the smaller traces);
//   - fasttrack races on the same addresses as hb with the same first
//     racing access on each (FastTrack's theorem);
//   - hybrid reports exactly the planted pairs (handoffs are ordered by
//     message and join edges, which hybrid keeps);
//   - lockset reports only planted pairs when the trace has no handoffs;
//   - race-free configurations give no race at all.
func TestGeneratedTraces(t *testing.T) {
	n := 4000
	if testing.Short() || raceEnabled {
		n = 600
	}
	var planted, raceFree int
	for seed := uint64(1); seed <= uint64(n); seed++ {
		cfg := randomConfig(seed)
		tr := trace.NewTrace()
		truth, err := gen.Generate(cfg, tr)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		want := truth.Pairs()
		planted += len(want)
		if len(want) == 0 {
			raceFree++
		}
		runs := map[string]*run{"hb": newRun(), "fasttrack": newRun(), "lockset": newRun(), "hybrid": newRun()}
		dets := []detect.Detector{
			hb.New(runs["hb"]), hb.NewFastTrack(runs["fasttrack"]),
			lockset.New(runs["lockset"]), lockset.NewHybrid(runs["hybrid"]),
		}
		if _, err := detect.Run(tr.Iter(), dets...); err != nil {
			t.Fatal(err)
		}
		where := fmt.Sprintf("seed %d (%+v)", seed, cfg)
		for _, d := range []string{"hb", "hybrid"} {
			if got := runs[d].col.Pairs(); !slices.Equal(got, want) {
				t.Fatalf("%s: %s pairs %v, planted %v", where, d, got, want)
			}
		}
		if len(tr.Events) <= 600 {
			if got := reference.HBPairs(tr); !slices.Equal(got, want) {
				t.Fatalf("%s: oracle pairs %v, planted %v", where, got, want)
			}
		}
		hbFirst, ftFirst := firstRacePerAddr(runs["hb"].all), firstRacePerAddr(runs["fasttrack"].all)
		if fmt.Sprint(hbFirst) != fmt.Sprint(ftFirst) {
			t.Fatalf("%s: first race per address: hb %v, fasttrack %v", where, hbFirst, ftFirst)
		}
		if truth.LocksetExact {
			for _, p := range runs["lockset"].col.Pairs() {
				if !slices.Contains(want, p) {
					t.Fatalf("%s: lockset pair %v not planted (%v)", where, p, want)
				}
			}
		}
	}
	if planted < n || raceFree < n/10 {
		t.Errorf("weak sample: %d races planted over %d traces, %d race-free", planted, n, raceFree)
	}
}
