package anomaly

import (
	"testing"
	"time"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/lockset"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
)

func bigTrace(b *testing.B) *trace.Trace {
	c := gen.DefaultConfig()
	c.Events = 500_000
	tr := trace.NewTrace()
	if _, err := gen.Generate(c, tr); err != nil {
		b.Fatal(err)
	}
	return tr
}

// BenchmarkSearch500K is the search over `racekit gen -events 500k`'s trace
// (the default configuration), every built-in pattern, clips included;
// PECAN reports 447K events in 6.2 s. The hybrid detector on the same
// events is the baseline, run in the same process.
func BenchmarkSearch500K(b *testing.B) {
	tr := bigTrace(b)
	b.Run("pecan", func(b *testing.B) {
		var res *Result
		for i := 0; i < b.N; i++ {
			res = Find(tr, Builtin(), Options{})
		}
		b.ReportMetric(float64(len(tr.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		b.ReportMetric(float64(res.Stats["anomalies"]), "anomalies")
		b.ReportMetric(float64(res.Stats["schedules"]), "schedules")
		steps := 0
		for _, a := range res.Anomalies {
			steps += len(a.Clip.Steps)
		}
		b.ReportMetric(float64(steps), "clip-steps")
	})
	b.Run("hybrid", func(b *testing.B) {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			if _, err := detect.Run(tr.Iter(), lockset.NewHybrid(finding.NewCollector())); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(tr.Events))*float64(b.N)/time.Since(start).Seconds(), "events/s")
	})
}
