package tree

import (
	"testing"

	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
)

// benchTrace is a generated trace of 1M events whose goroutines loop over
// few variables with rare synchronization: long spans with repetition, the
// case TREE is for.
func benchTrace(b *testing.B) *trace.Trace {
	c := gen.DefaultConfig()
	c.Events = 1_000_000
	c.Vars = 16
	c.Locals = 2
	c.LockFraction = 0.02
	c.SyncFraction = 0.005
	c.AtomicFraction = 0.005
	c.FuncFraction = 0
	tr := trace.NewTrace()
	if _, err := gen.Generate(c, tr); err != nil {
		b.Fatal(err)
	}
	return tr
}

// BenchmarkFastTrack runs fasttrack alone, TREE (fasttrack's options) in
// front of it, and TREE alone, side by side on the same trace, reporting
// events/s (and TREE's share of dropped events).
func BenchmarkFastTrack(b *testing.B) {
	tr := benchTrace(b)
	run := func(b *testing.B, filter, detect bool) {
		var drops int64
		for b.Loop() {
			d := hb.NewFastTrack(nil)
			f := New(OptionsFor("fasttrack"))
			for i := range tr.Events {
				e := &tr.Events[i]
				if filter && !f.Keep(e) {
					continue
				}
				if detect {
					d.Handle(e)
				}
			}
			drops = f.Stats().Dropped
		}
		b.ReportMetric(float64(len(tr.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		if filter {
			b.ReportMetric(100*float64(drops)/float64(len(tr.Events)), "%dropped")
		}
	}
	b.Run("fasttrack", func(b *testing.B) { run(b, false, true) })
	b.Run("tree+fasttrack", func(b *testing.B) { run(b, true, true) })
	b.Run("tree", func(b *testing.B) { run(b, true, false) })
}
