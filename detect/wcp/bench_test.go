package wcp_test

import (
	"sync"
	"testing"

	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/wcp"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
)

// benchTrace is one generated trace (gen.DefaultConfig, 2^19 events) for
// every detector of the benchmark, so their numbers compare.
var benchTrace = sync.OnceValue(func() *trace.Trace {
	cfg := gen.DefaultConfig()
	cfg.Events = 1 << 19
	tr := trace.NewTrace()
	if _, err := gen.Generate(cfg, tr); err != nil {
		panic(err)
	}
	return tr
})

type handler interface{ Handle(e *trace.Event) }

// BenchmarkDetectors runs wcp beside its baseline fasttrack (and hb) on
// the same trace in one process, feeding events to Handle directly;
// events/s is the number to compare.
func BenchmarkDetectors(b *testing.B) {
	tr := benchTrace()
	nop := finding.SinkFunc(func(*finding.Race) {})
	for _, c := range []struct {
		name string
		make func() handler
	}{
		{"fasttrack", func() handler { return hb.NewFastTrack(nop) }},
		{"hb", func() handler { return hb.New(nop) }},
		{"wcp", func() handler { return wcp.New(nop) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := c.make()
				for i := range tr.Events {
					d.Handle(&tr.Events[i])
				}
			}
			b.ReportMetric(float64(len(tr.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
