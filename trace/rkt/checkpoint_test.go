package rkt

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racekit/racekit/trace"
)

// A writer with checkpoints leaves a finished trace at every Flush: read
// at any Flush, the file holds every event written so far and no warning;
// the next block replaces the end block, and Close's end block is the
// last. Between checkpoints a file cut short reads as unfinished.
func TestCheckpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ck.rkt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := NewWriterSize(f, 64)
	if err := NewWriter(&bytes.Buffer{}).SetCheckpoints(true); err == nil {
		t.Error("SetCheckpoints on a bytes.Buffer: no error")
	}
	must(t, w.SetCheckpoints(true))
	must(t, w.DefineGoroutine(trace.Goroutine{ID: 0, Parent: trace.NoParent}))
	written := 0
	write := func(n int) {
		for range n {
			must(t, w.WriteEvent(&trace.Event{Seq: uint64(written), Op: trace.OpWrite, Obj: 0x100, Value: uint64(written)}))
			written++
		}
	}
	// read checks the file as a reader sees it now: between least and
	// most events, in order, and the warning warn ("": none).
	read := func(what string, least, most int, warn string) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got := decode(data, "ck.rkt")
		warnings := strings.Join(got.warnings, "\n")
		if got.err != nil || len(got.events) < least || len(got.events) > most || !strings.Contains(warnings, warn) || warn == "" && warnings != "" {
			t.Fatalf("%s: read %d events, err %v, warnings %q; want %d to %d events, warning %q", what, len(got.events), got.err, got.warnings, least, most, warn)
		}
		for i, e := range got.events {
			if e.Value != uint64(i) {
				t.Fatalf("%s: event %d has value %d", what, i, e.Value)
			}
		}
	}
	must(t, w.Flush())
	read("empty checkpoint", 0, 0, "")
	must(t, w.Flush())
	read("second empty checkpoint", 0, 0, "")
	write(1)
	must(t, w.Flush())
	read("one event", 1, 1, "")
	write(100) // several blocks of 64 bytes: the end block is replaced
	// The blocks full so far, past the one event: a run killed now.
	read("blocks past the checkpoint", 2, 100, "no end block")
	must(t, w.Flush())
	read("checkpoint after blocks", 101, 101, "")
	write(3)
	must(t, w.Close())
	read("closed", 104, 104, "")
	if err := w.Flush(); err != errClosed {
		t.Errorf("Flush after Close: %v", err)
	}
}
