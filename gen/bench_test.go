package gen

import (
	"testing"

	"github.com/racekit/racekit/trace"
)

// countWriter is the cheapest possible trace.Writer: it counts events, so
// that the benchmark measures the generator alone.
type countWriter struct{ events, defs int64 }

func (w *countWriter) DefineSite(trace.SiteID, trace.Site) error { w.defs++; return nil }
func (w *countWriter) DefineGoroutine(trace.Goroutine) error     { w.defs++; return nil }
func (w *countWriter) DefineName(uint64, string) error           { w.defs++; return nil }
func (w *countWriter) WriteEvent(*trace.Event) error             { w.events++; return nil }
func (w *countWriter) Close() error                              { return nil }

// BenchmarkGenerate generates one trace of b.N events (setup included), so
// ns/op and allocs/op are per event.
func BenchmarkGenerate(b *testing.B) {
	cases := []struct {
		name string
		edit func(*Config)
	}{
		{"default", func(*Config) {}},
		{"tree-64g", func(c *Config) { c.Shape, c.Goroutines = Tree, 64 }},
		{"waves-1000g-handoff", func(c *Config) {
			c.Shape, c.Goroutines, c.HandoffFraction, c.Vars = Waves, 1000, 0.2, 1000
		}},
		{"novalues-noswitch", func(c *Config) { c.Values, c.Switch = false, 0.05 }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			cfg := DefaultConfig()
			tc.edit(&cfg)
			cfg.Events = max(int64(b.N), MinEvents(cfg.Goroutines))
			b.ReportAllocs()
			b.ResetTimer()
			var w countWriter
			if _, err := Generate(cfg, &w); err != nil {
				b.Fatal(err)
			}
			if w.events != cfg.Events {
				b.Fatalf("%d events, want %d", w.events, cfg.Events)
			}
			b.ReportMetric(float64(w.events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
