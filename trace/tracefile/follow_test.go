//go:build unix

package tracefile

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/rkt"
)

// TestFollow: a reader following a trace that a live process writes in
// checkpoint mode (each flush ends the file with an end block that the
// next block overwrites) reads every event once, in order, and ends only
// after the process is gone, with the file's true end.
func TestFollow(t *testing.T) {
	proc := exec.Command("sleep", "60")
	if err := proc.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	defer proc.Process.Kill()
	path := filepath.Join(t.TempDir(), "p.test."+strconv.Itoa(proc.Process.Pid)+".rkt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !CanFollow(path) {
		t.Fatal("CanFollow: false for a live process's trace")
	}
	w := rkt.NewWriterSize(f, 64)
	if err := w.SetCheckpoints(true); err != nil {
		t.Fatal(err)
	}
	if err := w.DefineGoroutine(trace.Goroutine{ID: 0, Parent: trace.NoParent}); err != nil {
		t.Fatal(err)
	}
	const total = 5000
	type result struct {
		vals []uint64
		err  error
	}
	done := make(chan result, 1)
	go func() {
		tf, err := Follow(path)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer tf.Close()
		var r result
		var e trace.Event
		for {
			if err := tf.Next(&e); err != nil {
				if err != io.EOF {
					r.err = err
				}
				break
			}
			r.vals = append(r.vals, e.Value)
		}
		done <- r
	}()
	for i := range total {
		if err := w.WriteEvent(&trace.Event{Seq: uint64(i), Op: trace.OpWrite, Obj: 0x100, Value: uint64(i)}); err != nil {
			t.Fatal(err)
		}
		if i%500 == 499 {
			if err := w.Flush(); err != nil { // a checkpoint: an end block, overwritten next
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	select {
	case r := <-done:
		t.Fatalf("the reader ended while the process ran: %d events, err %v", len(r.vals), r.err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	proc.Process.Kill()
	proc.Wait()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.vals) != total {
		t.Fatalf("read %d events, want %d", len(r.vals), total)
	}
	for i, v := range r.vals {
		if v != uint64(i) {
			t.Fatalf("event %d has value %d", i, v)
		}
	}
}

func TestTracePID(t *testing.T) {
	for _, c := range []struct {
		path string
		pid  int
		ok   bool
	}{
		{"/tmp/d/github.com_x_y.test.1234.rkt", 1234, true},
		{"trace.rkt", 0, false},
		{"a.b.rkt", 0, false},
		{"a.-3.rkt", 0, false},
	} {
		if pid, ok := TracePID(c.path); pid != c.pid || ok != c.ok {
			t.Errorf("TracePID(%q) = %d, %v; want %d, %v", c.path, pid, ok, c.pid, c.ok)
		}
	}
}
