package sample_test

import (
	"errors"
	"io"
	"testing"

	"github.com/racekit/racekit/filter"
	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
)

// BenchmarkFilter measures each sampler's Keep over a generated trace of
// 200k events with frequent calls, beside the baseline of the same reader
// with a filter that keeps everything: the difference is the dispatch
// check and frame tracking per event.
func BenchmarkFilter(b *testing.B) {
	c := gen.DefaultConfig()
	c.Events = 200_000
	c.FuncFraction = 0.3
	tr := trace.NewTrace()
	if _, err := gen.Generate(c, tr); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, mk func() filter.Filter) {
		var e trace.Event
		for b.Loop() {
			r := filter.NewReader(tr.Iter(), mk())
			for {
				if err := r.Next(&e); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(len(tr.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	}
	b.Run("baseline-keep-all", func(b *testing.B) {
		run(b, func() filter.Filter { return filter.Func(func(*trace.Event) bool { return true }) })
	})
	for _, name := range sample.Names() {
		b.Run(name, func(b *testing.B) {
			run(b, func() filter.Filter {
				f, err := sample.New(name, 1)
				if err != nil {
					b.Fatal(err)
				}
				return f
			})
		})
	}
}
