package stdraces

import (
	"runtime/trace"
	"testing"
)

// countingWriter is the io.Writer runtime/trace.Start writes the trace to,
// from the trace reader goroutine it starts inside std.
type countingWriter struct {
	limit  int // written before Start, read by every Write
	writes int
	bytes  int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.bytes < w.limit {
		w.writes++
		w.bytes += len(p)
	}
	return len(p), nil
}

// runtime/trace.Stop returns after the trace reader's last Write (Go's
// runtime gives the race detector that edge by hand: trace.doneSema), and
// the reader starts after Start's caller wrote the writer: what the Writes
// did is the test's to read and reset after Stop. Held-out x/exp's
// FlightRecorder resets its ring after Stop (session 78, batch GT).
func TestNoRaceTraceWriterAfterStop(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("a trace is running")
	}
	w := &countingWriter{}
	w.limit = 1 << 30
	if err := trace.Start(w); err != nil {
		t.Skip(err)
	}
	for i := 0; i < 100; i++ {
		go func() {}()
	}
	trace.Stop()
	if w.writes == 0 || w.bytes == 0 {
		t.Errorf("%d writes, %d bytes: the reader wrote nothing", w.writes, w.bytes)
	}
	w.writes, w.bytes = 0, 0
}
