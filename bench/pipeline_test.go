// Package bench holds racekit's cross-package benchmarks: the whole
// pipeline (generated trace → binary codec → detector) measured side by
// side in one run, so each number has its baseline next to it.
package bench

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/lockset"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace/rkt"
)

const pipelineEvents = 1_000_000

var (
	encodeOnce sync.Once
	encoded    []byte
	encodeErr  error
)

// generated returns a 1M-event default `racekit gen` trace in .rkt form.
func generated(b *testing.B) []byte {
	encodeOnce.Do(func() {
		var buf bytes.Buffer
		w := rkt.NewWriter(&buf)
		cfg := gen.DefaultConfig()
		cfg.Events = pipelineEvents
		if _, encodeErr = gen.Generate(cfg, w); encodeErr == nil {
			encodeErr = w.Close()
		}
		encoded = buf.Bytes()
	})
	if encodeErr != nil {
		b.Fatal(encodeErr)
	}
	return encoded
}

func report(b *testing.B, events int64) {
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(len(encoded))/float64(events), "B/event")
}

// decodeInto runs the binary reader over data, feeding each detector.
func decodeInto(b *testing.B, data []byte, dets ...detect.Detector) int64 {
	n, err := detect.Run(rkt.NewReader(bytes.NewReader(data), "bench.rkt"), dets...)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

func BenchmarkGenerateEncode(b *testing.B) {
	generated(b)
	cfg := gen.DefaultConfig()
	cfg.Events = pipelineEvents
	b.ReportAllocs()
	for b.Loop() {
		w := rkt.NewWriter(io.Discard)
		if _, err := gen.Generate(cfg, w); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	report(b, pipelineEvents)
}

// BenchmarkPipeline is decode alone (the baseline) and decode + each
// detector, over the same bytes.
func BenchmarkPipeline(b *testing.B) {
	data := generated(b)
	for _, c := range []struct {
		name string
		make func(finding.Sink) detect.Detector
	}{
		{"decode", nil},
		{"fasttrack", func(s finding.Sink) detect.Detector { return hb.NewFastTrack(s) }},
		{"hb", func(s finding.Sink) detect.Detector { return hb.New(s) }},
		{"lockset", func(s finding.Sink) detect.Detector { return lockset.New(s) }},
		{"hybrid", func(s finding.Sink) detect.Detector { return lockset.NewHybrid(s) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int64
			for b.Loop() {
				if c.make == nil {
					n = decodeInto(b, data)
					continue
				}
				col := finding.NewCollector()
				n = decodeInto(b, data, c.make(col))
				if col.Len() == 0 {
					b.Fatal("no race found in a trace with planted races")
				}
			}
			report(b, n)
		})
	}
}
