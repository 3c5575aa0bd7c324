package predict

import (
	"testing"
	"time"

	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
)

func genTrace(tb testing.TB, events int64) (*trace.Trace, *gen.Truth) {
	tb.Helper()
	cfg := gen.DefaultConfig()
	cfg.Events = events
	tr := trace.NewTrace()
	truth, err := gen.Generate(cfg, tr)
	if err != nil {
		tb.Fatal(err)
	}
	return tr, truth
}

// BenchmarkWholeTrace is whole-trace prediction with the default windows
// on a gen trace (racekit gen's default configuration: 8 goroutines, values
// recorded), against hb over the same events in the same run. The size is
// 100k events under -short, else 1M (the target: within 60 s).
func BenchmarkWholeTrace(b *testing.B) {
	n := int64(1_000_000)
	if testing.Short() {
		n = 100_000
	}
	tr, truth := genTrace(b, n)
	run := func(b *testing.B, mk func(finding.Sink) interface {
		Handle(*trace.Event)
		Finish()
	}) {
		var races int
		start := time.Now()
		for range b.N {
			c := finding.NewCollector()
			d := mk(c)
			for i := range tr.Events {
				d.Handle(&tr.Events[i])
			}
			d.Finish()
			races = c.Len()
		}
		b.ReportMetric(float64(n)*float64(b.N)/time.Since(start).Seconds(), "events/s")
		b.ReportMetric(float64(races), "races")
	}
	b.Run("hb", func(b *testing.B) {
		run(b, func(s finding.Sink) interface {
			Handle(*trace.Event)
			Finish()
		} {
			return hb.New(s)
		})
	})
	b.Run("mcm", func(b *testing.B) {
		run(b, func(s finding.Sink) interface {
			Handle(*trace.Event)
			Finish()
		} {
			return NewMCM(s, Options{})
		})
	})
	b.Logf("planted races: %d", len(truth.Races))
}
