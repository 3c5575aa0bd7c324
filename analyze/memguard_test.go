package analyze

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/trace"
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

// countingDet stands for a detector whose state is a cell per event
// handled; forgettingDet can forget them (detect.Forgetter).
type countingDet struct{ cells int64 }

func (d *countingDet) Handle(*trace.Event) { d.cells++ }
func (d *countingDet) Finish()             {}

type forgettingDet struct {
	countingDet
	forgot int
}

func (d *forgettingDet) Forget() { d.cells, d.forgot = 0, d.forgot+1 }

// readsReader hands out n reads of distinct words by one goroutine.
type readsReader struct {
	n, i int64
	m    *trace.Meta
}

func (r *readsReader) Next(e *trace.Event) error {
	if r.i == r.n {
		return io.EOF
	}
	r.i++
	*e = trace.Event{Seq: uint64(r.i), G: 1, Op: trace.OpRead, Obj: uint64(r.i) * 8}
	return nil
}

func (r *readsReader) Meta() *trace.Meta { return r.m }

// TestForgetBeforeStop: past 3/4 of its limit, a run whose detectors can
// forget their per-address state does so and goes on, again each time
// the heap grew back; it stops at the limit when none can forget, or when
// the heap stays past it without that state (clocks, a fixed base here).
func TestForgetBeforeStop(t *testing.T) {
	oldHeap, oldCollect := heapBytes, collect
	defer func() { heapBytes, collect = oldHeap, oldCollect }()
	collect = func() {}
	const every = detect.ProgressEvery
	limit := uint64(every * 3 / 2)
	for _, tc := range []struct {
		name        string
		forgets     bool
		base        uint64 // heap besides the cells
		wantN       int64
		wantStopped bool
		wantForgot  int
		first, last int64
	}{
		{name: "forgets", forgets: true, wantN: 5 * every, wantForgot: 2, first: 2 * every, last: 4 * every},
		{name: "cannot forget", wantN: 2 * every, wantStopped: true},
		{name: "clocks fill the limit", forgets: true, base: limit + 1, wantN: every, wantStopped: true, wantForgot: 1, first: every, last: every},
	} {
		t.Run(tc.name, func(t *testing.T) {
			guarded = runs{} // no stopped run of another case beside this one
			var d detect.Detector
			var cells *int64
			if tc.forgets {
				f := &forgettingDet{}
				d, cells = f, &f.cells
			} else {
				c := &countingDet{}
				d, cells = c, &c.cells
			}
			heapBytes = func() uint64 { return tc.base + uint64(*cells) }
			n, stop, err := RunGuarded(&readsReader{n: 5 * every, m: trace.NewMeta()}, limit, nil, d)
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.wantN || stop.Stopped != tc.wantStopped || stop.Forgot != tc.wantForgot {
				t.Errorf("read %d events, stopped %v, forgot %d times; want %d, %v, %d", n, stop.Stopped, stop.Forgot, tc.wantN, tc.wantStopped, tc.wantForgot)
			}
			if tc.wantForgot > 0 {
				if stop.FirstForget != tc.first || stop.LastForget != tc.last {
					t.Errorf("forgot first after %d, last after %d; want %d, %d", stop.FirstForget, stop.LastForget, tc.first, tc.last)
				}
				want := fmt.Sprintf("%d times, first after event %d, last after event %d", tc.wantForgot, tc.first, tc.last)
				if tc.wantForgot == 1 {
					want = fmt.Sprintf("(after event %d)", tc.first)
				}
				if w := stop.ForgetWarning(); !strings.Contains(w, want) {
					t.Errorf("warning %q does not say when", w)
				}
			} else if w := stop.ForgetWarning(); w != "" {
				t.Errorf("a run that did not forget warns %q", w)
			}
		})
	}
}
