package rkt

import (
	"bytes"
	"io"
	"testing"

	"github.com/racekit/racekit/trace"
)

const benchEvents = 1 << 20

// countingWriter discards what it is given and counts it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

func benchSteps(b *testing.B) (defs []step, events []trace.Event) {
	b.Helper()
	for _, s := range realisticStream(benchEvents) {
		if s.event != nil {
			events = append(events, *s.event)
		} else {
			defs = append(defs, s)
		}
	}
	return defs, events
}

// BenchmarkEncode writes the realistic stream (definitions first, then
// 2^20 events); events/s and B/event are the numbers that matter.
func BenchmarkEncode(b *testing.B) {
	defs, events := benchSteps(b)
	b.ReportAllocs()
	var out countingWriter
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out.n = 0
		w := NewWriter(&out)
		for _, s := range defs {
			if err := writeStep(w, s); err != nil {
				b.Fatal(err)
			}
		}
		for j := range events {
			if err := w.WriteEvent(&events[j]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*benchEvents/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(out.n)/benchEvents, "B/event")
}

// BenchmarkDecode reads the realistic stream back from memory.
func BenchmarkDecode(b *testing.B) {
	defs, events := benchSteps(b)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, s := range defs {
		if err := writeStep(w, s); err != nil {
			b.Fatal(err)
		}
	}
	for j := range events {
		if err := w.WriteEvent(&events[j]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := NewReader(bytes.NewReader(data), "bench.rkt")
		var e trace.Event
		n := 0
		var err error
		for err = r.Next(&e); err == nil; err = r.Next(&e) {
			n++
		}
		if err != io.EOF || n != benchEvents {
			b.Fatalf("read %d events: %v", n, err)
		}
	}
	b.ReportMetric(float64(b.N)*benchEvents/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(len(data))/benchEvents, "B/event")
}
