package rttest

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// These tests run untraced (no RACEKIT_TRACE): rt's hooks record nothing,
// and the wrappers must keep package testing's behaviour, which the edges
// rttest records stand for (e2e.TestTestingOrder checks the edges).

// log is an ordered record of what ran.
type log struct {
	mu sync.Mutex
	s  []string
}

func (l *log) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.s = append(l.s, s)
}

func (l *log) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.s)
}

// TestRunOrder: a group's t.Run returns after its parallel subtests'
// bodies and cleanups, which start after the group's function returns;
// the group's own cleanup runs after them.
func TestRunOrder(t *testing.T) {
	var l log
	ok := Run(t, "group", func(t *testing.T) {
		Cleanup(t, func() { l.add("group cleanup") }, 0)
		for _, name := range []string{"a", "b"} {
			Run(t, name, func(t *testing.T) {
				l.add(name + " before Parallel")
				Parallel(t, 0)
				Cleanup(t, func() { l.add(name + " cleanup") }, 0)
				l.add(name + " body")
			}, 0)
		}
		l.add("group returns")
	}, 0)
	l.add("Run returned")
	if !ok {
		t.Fatal("Run reported a failure")
	}
	got := l.get()
	idx := func(s string) int {
		i := slices.Index(got, s)
		if i < 0 {
			t.Fatalf("%q did not run: %q", s, got)
		}
		return i
	}
	for _, n := range []string{"a", "b"} {
		if !(idx(n+" before Parallel") < idx("group returns") && idx("group returns") < idx(n+" body") &&
			idx(n+" body") < idx(n+" cleanup") && idx(n+" cleanup") < idx("group cleanup")) {
			t.Errorf("subtest %s out of order: %q", n, got)
		}
	}
	if idx("group cleanup") != len(got)-2 || idx("Run returned") != len(got)-1 {
		t.Errorf("t.Run returned before the group ended: %q", got)
	}
}

// TestRunFailure: Run reports the subtest's failure as t.Run does.
func TestRunFailure(t *testing.T) {
	var ran bool
	ok := testing.RunTests(func(pat, str string) (bool, error) { return true, nil }, []testing.InternalTest{{
		Name: "Outer",
		F: func(t *testing.T) {
			ran = !Run(t, "failing", func(t *testing.T) { t.Fail() }, 0)
		},
	}})
	if ok || !ran {
		t.Errorf("RunTests ok = %v, Run's result false = %v; want false, true", ok, ran)
	}
}

// TestCleanupLIFO: cleanups through the hook run last registered first,
// after the test's own end registered by Start.
func TestCleanupLIFO(t *testing.T) {
	var l log
	Run(t, "sub", func(t *testing.T) {
		Cleanup(t, func() { l.add("first") }, 0)
		Cleanup(t, func() { l.add("second") }, 0)
	}, 0)
	if got := l.get(); !slices.Equal(got, []string{"second", "first"}) {
		t.Errorf("cleanups ran %q, want second then first", got)
	}
}

// TestStart: a top-level test gets one state, kept while it runs, and a
// function it calls with its t none; an example gets the examples' state.
func TestStart(t *testing.T) {
	n := Start(t)
	if n == nil || n.parent != root || n.kind != kindTop {
		t.Fatalf("Start(t) = %p, want a top-level test's state under root", n)
	}
	if s := Start(t); s != nil {
		t.Errorf("Start(t) again = %p, want nil (a function the test calls)", s)
	}
	if Start(nil) != other {
		t.Error("Start(nil) is not the examples' state")
	}
	Run(t, "sub", func(st *testing.T) {
		if s := Start(st); s == nil || s.parent != n || s.kind != kindSub {
			t.Errorf("a subtest's Start: %p, want its state under %p", s, n)
		}
	}, 0)
}

// callers returns the functions of its caller's callers, innermost first.
func callers() []string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	var names []string
	for {
		f, more := frames.Next()
		names = append(names, f.Function)
		if !more {
			return names
		}
	}
}

// TestClaims: Run, Fuzz's inputs and Cleanup call the user's function
// from package testing itself, as t.Run, f.Fuzz and t.Cleanup do; its
// Start claims the state Run left for it, by its name (rewritten as
// testing rewrites it, made unique with #NN) when the parent runs several
// subtests at once, and sees whether it returned normally.
func TestClaims(t *testing.T) {
	if parentField < 0 {
		t.Fatal("testing.common has no parent field: every hook wraps")
	}
	parent := Start(t)
	var mu sync.Mutex
	got := map[string]*Test{}
	names := []string{"a b", "a b", "x\x00y", ""}
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Add(1)
		go func() { // t.Run may be called from several goroutines at once
			defer wg.Done()
			Run(t, name, func(t *testing.T) {
				n := Start(t)
				defer Stop(n)
				if c := callers(); len(c) < 2 || c[1] != "testing.tRunner" {
					t.Errorf("the subtest's function is called by %v, want testing.tRunner", c)
				}
				mu.Lock()
				got[t.Name()] = n
				mu.Unlock()
			}, 0)
		}()
	}
	wg.Wait()
	if len(got) != len(names) {
		t.Fatalf("subtests %v, want %d", got, len(names))
	}
	for name, n := range got {
		if n == nil || n.parent != parent || n.kind != kindSub || !n.ok {
			t.Errorf("%s: state %+v, want a subtest's under %p that returned normally", name, n, parent)
		}
	}
	for _, name := range []string{"TestClaims/a_b", "TestClaims/a_b#01", "TestClaims/x\\x00y", "TestClaims/#00"} {
		if _, ok := got[name]; !ok {
			t.Errorf("no subtest %q among %v", name, got)
		}
	}
	var skipped *Test
	Run(t, "skip", func(t *testing.T) {
		skipped = Start(t)
		defer Stop(skipped)
		t.SkipNow() // runtime.Goexit
	}, 0)
	if skipped == nil || skipped.ok {
		t.Errorf("a subtest ended by t.SkipNow: %+v, want one that did not return normally", skipped)
	}
	pendMu.Lock()
	if len(pending) != 0 {
		t.Errorf("states left unclaimed: %v", pending)
	}
	pendMu.Unlock()
	Cleanup(t, func() {
		if c := callers(); len(c) < 2 || c[1] != "testing.(*common).Cleanup.func1" {
			t.Errorf("a cleanup is called by %v, want testing.(*common).Cleanup.func1", c)
		}
	}, 0)
}

// TestSubName: testing's names of subtests.
func TestSubName(t *testing.T) {
	for _, tc := range []struct {
		rel, given string
		want       bool
	}{
		{"a_b", "a b", true},
		{"a_b#01", "a b", true},
		{"a_b#", "a b", false},
		{"a_b#x", "a b", false},
		{"a_bc", "a b", false},
		{"#00", "", true},
		{"\\x00", "\x00", true},
	} {
		if got := subName(tc.rel, tc.given); got != tc.want {
			t.Errorf("subName(%q, %q) = %v, want %v", tc.rel, tc.given, got, tc.want)
		}
	}
}

// TestRunParallelIterations: with the hooks, RunParallel's goroutines
// together run b.N iterations, and parallelism*GOMAXPROCS goroutines;
// package testing calls the body, whose PBStart gets its state.
func TestRunParallelIterations(t *testing.T) {
	var iters, workers, n atomic.Int64
	testing.Benchmark(func(b *testing.B) {
		b.SetParallelism(3)
		iters.Store(0)
		workers.Store(0)
		n.Store(int64(b.N))
		RunParallel(b, func(pb *testing.PB) {
			p := PBStart(pb)
			defer PBStop(p)
			if p == nil || PBStart(pb) != nil {
				t.Errorf("a body's PBStart: %+v, want its goroutine's state, once", p)
			}
			if c := callers(); len(c) < 2 || c[1] != "testing.(*B).RunParallel.func1" {
				t.Errorf("the body is called by %v, want testing.(*B).RunParallel.func1", c)
			}
			workers.Add(1)
			for PBNext(pb, 0) {
				iters.Add(1)
			}
		}, 0)
	})
	if iters.Load() != n.Load() {
		t.Errorf("%d iterations, want b.N = %d", iters.Load(), n.Load())
	}
	if w := workers.Load(); w < 3 || w%3 != 0 {
		t.Errorf("%d goroutines, want a multiple of 3 (SetParallelism(3))", w)
	}
}

// TestReflectedFields: the fields of package testing rttest reads exist
// (a new Go release may rename them: PBNext then records an edge at every
// call, RunParallel forks GOMAXPROCS goroutines).
func TestReflectedFields(t *testing.T) {
	if pbCache < 0 {
		t.Error("testing.PB has no uint64 field cache")
	}
	testing.Benchmark(func(b *testing.B) {
		b.SetParallelism(4)
		if p := intField(b, "parallelism", 1); p != 4 {
			t.Errorf("parallelism read as %d after SetParallelism(4)", p)
		}
	})
}

// FuzzSeeds: Fuzz runs the seed inputs as f.Fuzz does.
func FuzzSeeds(f *testing.F) {
	var sum atomic.Int64
	f.Add(1)
	f.Add(2)
	f.Cleanup(func() {
		if s := sum.Load(); s != 3 {
			f.Errorf("seed inputs summed to %d, want 3", s)
		}
	})
	Fuzz(f, func(t *testing.T, n int) {
		s := Start(t)
		defer Stop(s)
		if s == nil || s.kind != kindFuzzInput || Start(t) != nil {
			t.Errorf("an input's Start: %+v, want a fuzz input's state", s)
		}
		if c := callers(); len(c) < 2 || c[1] != "reflect.Value.call" {
			t.Errorf("the fuzz function is called by %v, want reflect.Value.call (testing's)", c)
		}
		sum.Add(int64(n))
	}, 0)
}

// TestSynctestHooks: SynctestTest runs f in a bubble and returns after its
// goroutines; SynctestWait returns once they are durably blocked.
func TestSynctestHooks(t *testing.T) {
	var x int
	SynctestTest(t, func(t *testing.T) {
		ch := make(chan bool)
		go func() {
			x = 1
			<-ch
		}()
		SynctestWait(0)
		if x != 1 {
			t.Error("Wait returned before the goroutine blocked")
		}
		close(ch)
	}, 0)
}

// TestContextHook: Context is t.Context, cancelled before the cleanups.
func TestContextHook(t *testing.T) {
	Run(t, "sub", func(t *testing.T) {
		ctx := Context(t, 0)
		if ctx != t.Context() {
			t.Error("Context is not t.Context()")
		}
		Cleanup(t, func() {
			if ctx.Err() == nil {
				t.Error("context not cancelled when the cleanups run")
			}
		}, 0)
	}, 0)
}

type parShim struct{ *testing.T }

type parOwn struct{ *testing.T }

func (parOwn) Parallel() {} // declared: may not call t.Parallel

type parNoT struct{}

func (parNoT) Parallel() {}

// parallelT finds the *testing.T whose Parallel an interface call is: the
// value itself, or one a struct embeds and promotes Parallel from; not a
// type that declares its own Parallel.
func TestParallelT(t *testing.T) {
	for _, c := range []struct {
		name string
		x    interface{ Parallel() }
		want *testing.T
	}{
		{"T", t, t},
		{"shim", parShim{t}, t},
		{"pointer to shim", &parShim{t}, t},
		{"nil pointer to shim", (*parShim)(nil), nil},
		{"shim of nil", parShim{}, nil},
		{"own Parallel", parOwn{t}, nil},
		{"no T", parNoT{}, nil},
	} {
		if got := parallelT(c.x); got != c.want {
			t.Errorf("%s: parallelT = %p, want %p", c.name, got, c.want)
		}
	}
}
