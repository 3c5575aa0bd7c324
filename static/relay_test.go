package static_test

import (
	"strings"
	"testing"

	"github.com/racekit/racekit/static"
	"golang.org/x/tools/go/analysis/analysistest"
)

// TestFigure1 is RELAY's Figure 1 in Go: the summaries of the figure (as
// facts, in the want comments of testdata/src/figure1) and exactly one
// warning, before any filter, on the unlocked write to stats; none on the
// locked read of power.event or on the read-only array vals.
func TestFigure1(t *testing.T) {
	rs := analysistest.Run(t, analysistest.TestData(), static.Analyzer, "figure1")
	res := rs[0].Result.(*static.Result)
	if len(res.Warnings) != 1 {
		t.Fatalf("want 1 warning before filters, got %d: %+v", len(res.Warnings), res.Warnings)
	}
	w := res.Warnings[0]
	if w.Object != "d.priv.stats.rxPackets" || w.A.Kind != "write" || w.B.Kind != "write" || len(w.Matches) != 1 || w.Matches[0] != "same-entry" {
		t.Errorf("warning: %+v", w)
	}
}

func TestLocks(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), static.Analyzer, "locks")
}

func TestClosuresAndMethodValues(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), static.Analyzer, "closures")
}

func TestHTTPHandlers(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), static.Analyzer, "httph")
}

// TestCrossPackage: summaries of crossdep (lockset and accesses) are facts
// used at crossuse's calls.
func TestCrossPackage(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), static.Analyzer, "crossdep", "crossuse")
}

// TestDedupAfterFilters: a site pair whose first pairing is filtered
// (handoff) is still reported for a second, unfiltered pairing
// (testdata/src/dedup, the want comment).
func TestDedupAfterFilters(t *testing.T) {
	rs := analysistest.Run(t, analysistest.TestData(), static.Analyzer, "dedup")
	res := rs[0].Result.(*static.Result)
	kept := 0
	for _, w := range res.Warnings {
		if w.Removed == "" {
			kept++
		}
	}
	if kept != 1 {
		t.Errorf("want 1 kept warning, got %d: %+v", kept, res.Warnings)
	}
}

// TestGoroutineLocalLocks: a lock allocated per goroutine instance does not
// protect the instances from each other; a shared one does
// (testdata/src/golocks: three races, two race-free variants).
func TestGoroutineLocalLocks(t *testing.T) {
	rs := analysistest.Run(t, analysistest.TestData(), static.Analyzer, "golocks")
	res := rs[0].Result.(*static.Result)
	objs := map[string]int{}
	for _, w := range res.Warnings {
		if w.Removed == "" {
			objs[w.Object]++
		}
	}
	for _, o := range []string{"golocks.a", "golocks.b", "golocks.c"} {
		if objs[o] != 1 {
			t.Errorf("%s: %d warnings, want 1", o, objs[o])
		}
	}
	for _, o := range []string{"golocks.d", "golocks.e"} {
		if objs[o] != 0 {
			t.Errorf("%s: %d warnings on a race-free variant", o, objs[o])
		}
	}
}

// TestSpawnerCallers: the caller of a function that starts a goroutine is
// paired with that goroutine after the call (testdata/src/spawncall: a
// constructor that starts a worker, a helper that starts a goroutine on
// its argument, which also races with itself; the locked read and the
// read after a spawner that joins its goroutine are race-free).
func TestSpawnerCallers(t *testing.T) {
	rs := analysistest.Run(t, analysistest.TestData(), static.Analyzer, "spawncall")
	res := rs[0].Result.(*static.Result)
	kept := 0
	for _, w := range res.Warnings {
		if w.Removed == "" {
			kept++
			if strings.Contains(w.A.Thread+w.B.Thread, "useLocked") || strings.Contains(w.A.Thread+w.B.Thread, "waitAndRead") {
				t.Errorf("warning on a race-free caller: %+v", w)
			}
		}
	}
	if kept != 4 {
		t.Errorf("want 4 kept warnings, got %d: %+v", kept, res.Warnings)
	}
}

// TestTimerCallbacks: an AfterFunc callback is a thread root paired with
// the code after the call (testdata/src/timers; the locked variant has no
// warning).
func TestTimerCallbacks(t *testing.T) {
	rs := analysistest.Run(t, analysistest.TestData(), static.Analyzer, "timers")
	for _, r := range rs {
		res, ok := r.Result.(*static.Result)
		if !ok || res.Pkg != "timers" {
			continue
		}
		for _, w := range res.Warnings {
			if w.Removed == "" && w.Object != "timers.fired" {
				t.Errorf("unexpected warning: %+v", w)
			}
		}
		if res.Stats.GoSites != 2 {
			t.Errorf("want 2 thread roots, got %d", res.Stats.GoSites)
		}
	}
}

// TestStdSites: accesses inside the standard library are located at the
// user's calls (testdata/src/stdsites): one kept warning, at the two
// calls, the std frames in Via; every warning's sites, kept or filtered,
// are in the package.
func TestStdSites(t *testing.T) {
	rs := analysistest.Run(t, analysistest.TestData(), static.Analyzer, "stdsites")
	res := rs[0].Result.(*static.Result)
	kept := 0
	for _, w := range res.Warnings {
		if w.Removed == "" {
			kept++
		}
		for _, a := range []static.WarnAccess{w.A, w.B} {
			if !strings.Contains(a.Site, "stdsites.go:") {
				t.Errorf("warning located outside the package: %s", w.Message())
			}
			if len(a.Via) == 0 || !strings.HasPrefix(a.Via[0], "bytes.") && !strings.HasPrefix(a.Via[0], "(*bytes.Buffer).") {
				t.Errorf("via %q, want the std operation first", a.Via)
			}
		}
	}
	if kept != 1 {
		t.Errorf("%d warnings kept, want 1", kept)
	}
}

// TestParallelSubtests: t.Run with a function that calls t.Parallel is a
// thread entry (testdata/src/subtests, the want comment): one warning for
// the shared counter, none for per-iteration objects, accesses before
// t.Parallel, the parent's code after t.Run, or sequential subtests.
func TestParallelSubtests(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), static.Analyzer, "subtests")
}

// TestCacheGet: a value taken out of a shared map by two goroutines is one
// symbolic lvalue in both (testdata/src/cacheget): its unlocked update is
// kept by large-reps, its locked one is not a warning.
func TestCacheGet(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), static.Analyzer, "cacheget")
}

// TestSelectCase: a select case's receive is a wait on its own branch only
// (testdata/src/selectcase): the handoff filter keeps the race on the
// other branch.
func TestSelectCase(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), static.Analyzer, "selectcase")
}

// TestDoubleLock: a call made holding a lock its callee (or its callee's
// callee) takes again, a write Lock of an RWMutex held in read mode; not
// a lock released first, another object's lock, two read locks, a lock
// another goroutine unlocks, a lock held on one path only
// (testdata/src/doublelock, the want comments).
func TestDoubleLock(t *testing.T) {
	rs := analysistest.Run(t, analysistest.TestData(), static.Analyzer, "doublelock")
	if n := len(rs[0].Result.(*static.Result).DoubleLocks); n != 3 {
		t.Errorf("%d double locks, want 3", n)
	}
}
