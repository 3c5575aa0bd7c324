package rt

import (
	"testing"

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
		for range 3 {
			wmu.Lock()
			round(roundNormal)
			wmu.Unlock()
		}
		regMu.Lock()
		regAfter = len(reg)
		regMu.Unlock()
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
