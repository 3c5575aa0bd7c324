package rt

import (
	"testing"
	"time"

	"github.com/racekit/racekit/trace"
)

// A goroutine born in untraced code (a net/http connection's, calling a
// traced handler) has no End hook: the writer forgets its state once its
// g runs another goroutine (retire), so the registry, which every round
// reads, holds the goroutines that may still run, not every one that ever
// entered traced code. Its events stay in the trace.
func TestRetireUntracedBorn(t *testing.T) {
	const n = 500
	xs := make([]uint64, n)
	escapeSink = xs
	var regAfter int
	tr := record(t, true, func(site uint32) {
		if goidOff == 0 {
			t.Skip("no goid offset on this platform: states are kept")
		}
		for i := range xs {
			done := make(chan bool)
			go func() { // not claimed: born in untraced code
				*W(&xs[i], site, true) = 1
				close(done)
			}()
			<-done
		}
		// This trace's states of goroutines born in untraced code (a
		// state of an earlier test's goroutine is not this test's). A
		// goroutine that closed done may not have exited yet on a busy
		// machine (CI, a corpus batch beside it: 59 and 112 left after
		// three rounds), so rounds go on until the states are retired,
		// for up to ten seconds.
		left := func() int {
			regMu.Lock()
			defer regMu.Unlock()
			k := 0
			for _, s := range reg {
				if s.untraced && s.traceNo == traceCount.Load() {
					k++
				}
			}
			return k
		}
		for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
			wmu.Lock()
			round(roundNormal)
			wmu.Unlock()
			if regAfter = left(); regAfter <= n/10 || time.Since(start) > 10*time.Second {
				break
			}
		}
	})
	t.Logf("registered: %d", regAfter)
	if regAfter > n/10 {
		t.Errorf("%d goroutine states registered after %d untraced-born goroutines ended, want at most %d", regAfter, n, n/10)
	}
	writes := 0
	for _, e := range tr.Events {
		if e.Op == trace.OpWrite {
			writes++
		}
	}
	if writes != n {
		t.Errorf("%d writes in the trace, want %d", writes, n)
	}
}

// probeStatus finds the status word of the runtime's g on this platform.
func TestStatusProbed(t *testing.T) {
	probeGoid()
	if goidOff == 0 {
		t.Skip("no goid offset on this platform")
	}
	if statusOff == 0 {
		t.Fatalf("no status offset found (goid at %d)", goidOff)
	}
	if st := gStatus(getg()); st != gRunning {
		t.Errorf("this goroutine's status %d, want %d (running)", st, gRunning)
	}
}
