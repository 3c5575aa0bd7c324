package analyze

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
	"testing"
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
