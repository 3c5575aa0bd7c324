package analyze

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
	"testing"
	"time"
)

// The GC's limit goes below the analysis's, so that a collection comes
// before garbage alone passes it; a limit already set stays.
func TestGCLimitBelowMemLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)

	debug.SetMemoryLimit(math.MaxInt64)
	gcLimitOnce = sync.Once{}
	setGCLimit()
	if got, want := debug.SetMemoryLimit(-1), int64(MemLimit()/10*9); got != want {
		t.Errorf("GC limit %d, want %d (9/10 of MemLimit)", got, want)
	}

	debug.SetMemoryLimit(1 << 40) // as GOMEMLIMIT would
	gcLimitOnce = sync.Once{}
	setGCLimit()
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("GC limit %d, want the one set before (%d)", got, int64(1<<40))
	}
}

// An analysis's GC runs at analysisGCPercent, unless the user set GOGC.
func TestGCPercentUnlessGOGC(t *testing.T) {
	oldLimit := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(oldLimit)
	oldPct := debug.SetGCPercent(100)
	defer debug.SetGCPercent(oldPct)

	for _, gogc := range []string{"", "50"} {
		t.Setenv("GOGC", gogc)
		if gogc == "" {
			os.Unsetenv("GOGC")
		}
		debug.SetGCPercent(100)
		gcLimitOnce = sync.Once{}
		setGCLimit()
		want := analysisGCPercent
		if gogc != "" {
			want = 100 // left as it was
		}
		if got := debug.SetGCPercent(100); got != want {
			t.Errorf("GOGC=%q: GC percent %d, want %d", gogc, got, want)
		}
	}
}

// TestLargestRunStops: past the limit, of two runs beside each other the
// one that read more events stops, the other goes on while the stopped
// one's state may still be live (until the heap is back under the limit,
// or for stoppedFor), and any run stops past the limit by a quarter.
func TestLargestRunStops(t *testing.T) {
	var r runs
	now := time.Unix(1000, 0)
	big, small := r.enter(), r.enter()
	const limit = 1000
	if r.over(big, 900, 500, limit, now) || r.over(small, 10, 500, limit, now) {
		t.Fatal("a run stopped under the limit")
	}
	if r.over(small, 20, 1100, limit, now) {
		t.Error("the smaller run stopped past the limit beside a larger one")
	}
	if !r.over(big, 910, 1100, limit, now) {
		t.Fatal("the larger run did not stop past the limit")
	}
	r.leave(big, true, now)
	if r.over(small, 30, 1100, limit, now.Add(time.Second)) {
		t.Error("the smaller run stopped while the stopped one's state may be live")
	}
	if !r.over(small, 40, 1100, limit, now.Add(stoppedFor+time.Second)) {
		t.Error("the remaining run did not stop past the limit once the stopped one's state should be freed")
	}
	other := r.enter() // beside small (40 events), which has not left
	if !r.over(other, 1, 1300, limit, now) {
		t.Error("a run went on past the limit by more than a quarter")
	}
	r.leave(small, false, now)
	r.leave(other, false, now)
	if len(r.runs) != 0 {
		t.Errorf("%d runs left after all left", len(r.runs))
	}
}
