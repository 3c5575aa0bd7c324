package rttest

import (
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

// TestStart: a top-level test gets one state, kept while it runs; an
// example or a benchmark gets none.
func TestStart(t *testing.T) {
	n := Start(t)
	if n == nil || n.parent != root || Start(t) != n {
		t.Fatalf("Start(t) = %p (parent %p), again %p; want one state under root", n, n.parent, Start(t))
	}
	if Start(nil) != nil {
		t.Error("Start(nil) made a state")
	}
	Run(t, "sub", func(st *testing.T) {
		if s := Start(st); s == nil || s.parent != n {
			t.Errorf("a subtest's Start: %p, want its state under %p", s, n)
		}
	}, 0)
}

// TestRunParallelIterations: with the hooks, RunParallel's goroutines
// together run b.N iterations, and parallelism*GOMAXPROCS goroutines.
func TestRunParallelIterations(t *testing.T) {
	var iters, workers, n atomic.Int64
	testing.Benchmark(func(b *testing.B) {
		b.SetParallelism(3)
		iters.Store(0)
		workers.Store(0)
		n.Store(int64(b.N))
		RunParallel(b, func(pb *testing.PB) {
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
	Fuzz(f, func(t *testing.T, n int) { sum.Add(int64(n)) }, 0)
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
