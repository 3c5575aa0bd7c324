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
	decodeAll(b, data, benchEvents)
	b.ReportMetric(float64(b.N)*benchEvents/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(len(data))/benchEvents, "B/event")
}

// BenchmarkDecodeCopies reads copies of 64 words each (a read of the
// source, a write of the destination, at addresses that move on), written
// as word events (the baseline, how rt recorded them before range events)
// and as range events: words/s and B/word compare the two in one run.
func BenchmarkDecodeCopies(b *testing.B) {
	const copies, words = 1 << 12, 64
	sp, _ := trace.MakeSpan(8, words)
	for _, ranges := range []bool{false, true} {
		name := "words"
		if ranges {
			name = "ranges"
		}
		b.Run(name, func(b *testing.B) {
			var buf bytes.Buffer
			w := NewWriter(&buf)
			if err := w.DefineGoroutine(trace.Goroutine{ID: 0, Parent: trace.NoParent, Name: "main"}); err != nil {
				b.Fatal(err)
			}
			seq := uint64(0)
			for c := uint64(0); c < copies; c++ {
				src, dst := 0xc000000000+c*1024, 0xc100000000+c*1024
				for k, base := range []uint64{src, dst} {
					op, rop := trace.OpRead, trace.OpReadRange
					if k == 1 {
						op, rop = trace.OpWrite, trace.OpWriteRange
					}
					if ranges {
						seq++
						e := trace.Event{Seq: seq, Op: rop, Obj: base, Value: uint64(sp)}
						if err := w.WriteEvent(&e); err != nil {
							b.Fatal(err)
						}
						continue
					}
					for i := uint64(0); i < words; i++ {
						seq++
						e := trace.Event{Seq: seq, Op: op, Obj: base + 8*i, Flags: trace.FlagValueUnknown}
						if err := w.WriteEvent(&e); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			data := buf.Bytes()
			decodeAll(b, data, copies*2*words)
			b.ReportMetric(float64(b.N)*copies*2*words/b.Elapsed().Seconds(), "words/s")
			b.ReportMetric(float64(len(data))/(copies*2*words), "B/word")
		})
	}
}

// decodeAll reads data b.N times, timed from a reset timer, and checks
// that each read returns want events and ends at io.EOF.
func decodeAll(b *testing.B, data []byte, want int) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	var e trace.Event
	for i := 0; i < b.N; i++ {
		r := NewReader(bytes.NewReader(data), "bench.rkt")
		n := 0
		var err error
		for err = r.Next(&e); err == nil; err = r.Next(&e) {
			n++
		}
		if err != io.EOF || n != want {
			b.Fatalf("read %d events, want %d: %v", n, want, err)
		}
	}
}
