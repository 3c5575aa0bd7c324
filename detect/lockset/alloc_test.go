package lockset

import (
	"testing"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// An Alloc makes its range a new object: the lockset detectors forget what
// they knew of the old one.

func allocTrace(alloc bool) *trace.Builder {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "T1", "go1")
	b.Fork("M", "T2", "go2")
	b.Write("T1", "x", "old")
	if alloc {
		b.Alloc("T2", "x", 8)
	}
	b.Write("T2", "x", "new")
	b.Write("T2", "x", "new2")
	return b
}

func TestAllocForgetsTheOldObject(t *testing.T) {
	for _, alloc := range []bool{false, true} {
		b := allocTrace(alloc)
		_, ce := runEraser(t, b.Trace())
		_, ch := runHybrid(t, b.Trace())
		var want []finding.Pair
		if !alloc {
			want = pairs(b, [2]string{"old", "new"}, [2]string{"old", "new2"})
		} else {
			want = pairs(b)
		}
		wantPairs(t, b, ch, want)
		if alloc && len(ce.Pairs()) != 0 {
			t.Errorf("eraser after alloc: %s, want none", fmtPairs(b, ce.Pairs()))
		}
		if !alloc && len(ce.Pairs()) == 0 {
			t.Errorf("eraser without alloc: no warning on the unprotected write-write pair")
		}
	}
}
