package rt

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/rkt"
)

// rtTimerFrames returns the lines of runtime.Stack(all) that name the
// callbacks of rt's timers (the writer's and the controlled scheduler's
// monitor), or the goroutines they replaced.
func rtTimerFrames() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, line := range strings.Split(string(buf), "\n") {
		for _, fn := range []string{"(*writerTimer).fire", "(*monitorTimer).fire", "rt.writerLoop", "rt.schedMonitor"} {
			if strings.Contains(line, fn) {
				out = append(out, line)
			}
		}
	}
	return out
}

// waitQuiet waits, as goleak retries (about 0.4s in all), until cond
// holds and no callback of rt's timers runs.
func waitQuiet(t *testing.T, what string, cond func() bool) {
	t.Helper()
	d := time.Microsecond
	for i := 0; ; i++ {
		frames := rtTimerFrames()
		if cond() && len(frames) == 0 {
			return
		}
		if i == 20 {
			t.Fatalf("%s: not quiet after goleak's retries:\n%s", what, strings.Join(frames, "\n"))
		}
		time.Sleep(d)
		d = min(2*d, 100*time.Millisecond)
	}
}

// readEvents reads the trace file as it is (not finished: up to its last
// whole block) and returns its events.
func readEvents(t *testing.T, path string) []trace.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.ReadAll(rkt.NewReader(f, path))
	if err != nil {
		t.Fatal(err)
	}
	return tr.Events
}

func countOp(evs []trace.Event, op trace.Op, obj uint64) int {
	n := 0
	for _, e := range evs {
		if e.Op == op && (obj == 0 || e.Obj == obj) {
			n++
		}
	}
	return n
}

// quietY and quietZ are written by TestWriterQuiet's goroutine: package
// variables, since a local's address changes when the goroutine's stack
// moves (waitQuiet's calls may grow it), and the file is searched by it.
var quietY, quietZ uint64

// TestWriterQuiet: once the goroutines that record are done, and the one
// left holds its word open (as one blocked in untraced code does), the
// writer steals it, writes and flushes everything, and disarms: no
// goroutine of rt's is alive, yet the file holds every event. Recording
// again arms it, and that event too reaches the file without Flush.
func TestWriterQuiet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.rkt")
	if err := start(path, false); err != nil {
		t.Fatal(err)
	}
	defer Finish()
	site := RegisterFile("q.go", []string{"p.f"}, []uint32{10, 2, 0})
	var x [4]uint64
	var wg sync.WaitGroup
	for i := range x {
		c := Fork(site)
		wg.Add(1)
		go func() {
			defer wg.Done()
			Begin(c)
			defer End(c)
			for j := 0; j < 100; j++ {
				*W(&x[i], site, true) = 1
			}
			c.Ok()
		}()
	}
	wg.Wait()
	*W(&quietY, site, true) = 2 // this goroutine's word stays open
	if !wflags.armed.Load() {
		t.Fatal("writer not armed while goroutines record")
	}
	waitQuiet(t, "after the goroutines ended", func() bool { return !wflags.armed.Load() })
	evs := readEvents(t, path)
	if n := countOp(evs, trace.OpEnd, 0); n != len(x) {
		t.Errorf("%d End events in the file, want %d", n, len(x))
	}
	if n := countOp(evs, trace.OpWrite, addrOf(&quietY)); n != 1 {
		t.Errorf("%d writes of quietY in the file, want 1 (the open word's, stolen)", n)
	}

	*W(&quietZ, site, true) = 3
	if !wflags.armed.Load() {
		t.Fatal("writer not armed again by a new event")
	}
	waitQuiet(t, "after one more event", func() bool { return !wflags.armed.Load() })
	if n := countOp(readEvents(t, path), trace.OpWrite, addrOf(&quietZ)); n != 1 {
		t.Errorf("%d writes of quietZ in the file, want 1", n)
	}
}

// TestMonitorQuiet: the controlled scheduler's monitor looks while a
// program runs under control, and once its goroutines are done it is not
// armed and has no goroutine; a kick arms it again.
func TestMonitorQuiet(t *testing.T) {
	base := schedFileSites("/src/quiet.go", 14)
	path := filepath.Join(t.TempDir(), "sched.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	schedStart(sched.NewRandom(7), "random", 7, sched.SitePair{}, f, 50*time.Millisecond, 5*time.Second)
	defer schedStop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		figure1(base)
		schedEnd(false)
	}()
	<-done
	armed := func() bool {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		return sc.monArmed
	}
	waitQuiet(t, "after the controlled program ended", func() bool { return !armed() })
	sc.mu.Lock()
	schedKick()
	sc.mu.Unlock()
	if !armed() {
		t.Fatal("monitor not armed by a kick")
	}
	waitQuiet(t, "after a kick with nothing to watch", func() bool { return !armed() })
}
