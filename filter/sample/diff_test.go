package sample_test

import (
	"math/rand/v2"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/filter"
	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
)

// genConfig draws a generated trace with many function calls: few
// functions, nested, so that functions get hot and the back-offs and
// random choices drop accesses; every shape, locks, handoffs, atomics and
// sync objects, racy variables with repeats.
func genConfig(seed uint64, events int64) gen.Config {
	r := rand.New(rand.NewPCG(seed, 3))
	c := gen.DefaultConfig()
	c.Seed = seed
	c.Shape = gen.Shapes()[r.IntN(len(gen.Shapes()))]
	c.Goroutines = 2 + r.IntN(6)
	c.Events = gen.MinEvents(c.Goroutines) + events
	c.Locks = r.IntN(4)
	c.Vars = 4 + r.IntN(24)
	c.RacyFraction = []float64{0.1, 0.3, 0.5}[r.IntN(3)]
	c.HandoffFraction = []float64{0, 0.2}[r.IntN(2)]
	c.RepeatFraction = []float64{0.02, 0.2}[r.IntN(2)]
	c.Funcs = 1 + r.IntN(6)
	c.FuncDepth = 1 + r.IntN(3)
	c.FuncFraction = []float64{0.05, 0.2, 0.4}[r.IntN(3)]
	c.Switch = r.Float64()
	return c
}

func genTrace(t testing.TB, seed uint64, events int64) *trace.Trace {
	t.Helper()
	tr := trace.NewTrace()
	if _, err := gen.Generate(genConfig(seed, events), tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

func pairsOf(t testing.TB, r trace.Reader) map[finding.Pair]bool {
	t.Helper()
	c := finding.NewCollector()
	if _, err := detect.Run(r, hb.New(c)); err != nil {
		t.Fatal(err)
	}
	m := map[finding.Pair]bool{}
	for _, p := range c.Pairs() {
		m[p] = true
	}
	return m
}

// The contract of §3.2: sampling memory accesses while keeping every
// synchronization event may lose races but never invents one. On many
// generated traces, every site pair hb reports on a sampler's output is one
// hb reports on the full trace, for every sampler and several seeds.
func TestSamplingNeverInventsRaces(t *testing.T) {
	traces := 300
	if testing.Short() {
		traces = 60
	}
	var lost, kept, dropped int64
	for i := 0; i < traces; i++ {
		seed := uint64(i + 1)
		tr := genTrace(t, seed, int64(200+rand.New(rand.NewPCG(seed, 4)).IntN(2500)))
		full := pairsOf(t, tr.Iter())
		for _, name := range sample.Names() {
			for s := int64(0); s < 2; s++ {
				f := mustNew(t, name, s+int64(seed))
				r := filter.NewReader(tr.Iter(), f)
				got := pairsOf(t, r)
				for p := range got {
					if !full[p] {
						t.Fatalf("trace %d (%+v), %s seed %d: race %v not in the full trace", i, genConfig(seed, 0), name, s, p)
					}
				}
				lost += int64(len(full) - len(got))
				kept += int64(len(got))
				dropped += r.DroppedAccesses()
				if r.Dropped() != r.DroppedAccesses() {
					t.Fatalf("%s dropped %d events of which only %d accesses", name, r.Dropped(), r.DroppedAccesses())
				}
			}
		}
	}
	// Not vacuous: the samplers dropped accesses, lost races and kept some.
	if lost == 0 || kept == 0 || dropped == 0 {
		t.Fatalf("races lost %d, kept %d; accesses dropped %d", lost, kept, dropped)
	}
	t.Logf("over %d traces × %d samplers × 2 seeds: %d races kept, %d lost, %d accesses dropped", traces, len(sample.Names()), kept, lost, dropped)
}
