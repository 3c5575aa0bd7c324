// Package rttest models the synchronization of package testing for
// instrumented tests. The testing framework is not instrumented, so the
// edges it makes would be invisible; rttest records exactly the ones
// testing.go makes with its channels (the ones the Go race detector sees,
// testing being instrumented under -race), on sync objects of package rt,
// and no others. What testing does, and the edge rttest records for it:
//
//   - t.Run(name, f) starts f's goroutine (go tRunner) and blocks until f
//     returns or calls t.Parallel (<-t.signal). Run records the go
//     statement as a fork (rt.Fork before t.Run, rt.Begin when f's
//     goroutine starts), so the subtest is ordered after its parent's code
//     before t.Run and after nothing else; when t.Run returns, Run acquires
//     the subtest's ret object, released by its call of t.Parallel or, for
//     a sequential subtest, at its end (below).
//   - t.Parallel() sends on t.signal (t.Run returns), then waits for
//     <-t.parent.barrier, closed by the parent's tRunner once the parent's
//     function has returned. Parallel releases ret, then acquires the
//     parent's fnEnd, released when the parent's function returns. Top
//     level tests are subtests of the framework's root test, whose function
//     runs the top-level tests in sequence: a top-level test releases
//     root's fnEnd at t.Parallel (what ran so far) or at its end (when
//     sequential), and top-level parallel tests resume after all of them.
//   - A test ends (sends on t.signal) after its function returned, its
//     parallel subtests ended (tRunner waits for each <-sub.signal) and its
//     cleanups ran. rttest registers a cleanup before the test's function
//     runs, which therefore runs last (cleanups are LIFO); it is the test's
//     end, done: it acquires subs (released by every subtest's end),
//     releases ret (if the test did not call t.Parallel, the parent's t.Run
//     returns after it) and its parent's subs.
//   - t.Cleanup(f): registering and running a cleanup both take c.mu, and
//     runCleanup runs after the function and after the parallel subtests:
//     the cleanup acquires its registration and the test's subs.
//   - t.Context() is cancelled by runCleanup before the cleanups run, after
//     the function and the parallel subtests: a test that asked for its
//     context releases rt's context object (what <-ctx.Done() acquires)
//     when its function returns, and each of its subtests at its end.
//   - m.Run returns after every test, benchmark, fuzz target and example:
//     MRun acquires testsEnded, which each of them releases at its end.
//   - b.RunParallel(body) starts parallelism*GOMAXPROCS goroutines (go
//     statements: forks) and waits for them (wg.Wait: their ends before
//     RunParallel returns); they share an iteration counter (pb.Next's
//     atomic Add, every grain iterations), which PBNext models as an atomic
//     read-modify-write of one object when the call does the Add.
//   - f.Fuzz(ff) runs ff once per input, each on a goroutine of its own, in
//     sequence; its end is ordered before f.Fuzz returns.
//   - synctest.Test(t, f) runs f as a test inside a bubble and returns after
//     every goroutine of the bubble has exited; synctest.Wait returns once
//     every other goroutine of the bubble is durably blocked (the runtime
//     releases the bubble at every park, Wait and Run acquire it). rttest
//     does not know the bubble's goroutines: it orders both returns after
//     everything recorded so far (an over-approximation, which may hide a
//     race of the bubble with code outside it, never invents one).
//
// A goroutine the framework starts without rttest's fork (a top-level test,
// a benchmark's run) is a goroutine born in untraced code: its first event
// is ordered after everything recorded before it, which for the
// framework's sequential phases is exact.
package rttest

import (
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/racekit/racekit/rt"
)

// testsEnded is released at the end of every test, benchmark, fuzz input,
// example and cleanup; m.Run returns after all of them. It is also what a
// test acquires when rttest does not know its parent (t.Run called from
// code that is not rewritten): every test function ended so far.
var testsEnded = rt.NewObject()

// forks: the goroutines the framework starts for t.Run and b.RunParallel
// are recorded as forked by the caller. Not under rt's controlled
// scheduler, whose strategies would then wait for goroutines the framework
// starts and blocks in untraced code: there they stay goroutines born in
// untraced code.
var forks = os.Getenv("RACEKIT_SCHED") == ""

// Test is the state of one test (a *testing.T) for rttest's edges.
type Test struct {
	parent *Test  // nil: unknown (see testsEnded)
	fnEnd  uint64 // released when the test's function returns
	subs   uint64 // released at the end of each of its subtests
	ret    uint64 // released at t.Parallel or the end; acquired when t.Run returns (0: none)
	child  *rt.Child
	ok     bool        // the function returned normally
	par    atomic.Bool // the test called t.Parallel
	ctx    atomic.Bool // the test called t.Context
}

func newTest(parent *Test) *Test {
	return &Test{parent: parent, fnEnd: rt.NewObject(), subs: rt.NewObject(), ret: rt.NewObject()}
}

// root is the framework's root test: its function runs the top-level tests.
var root = newTest(nil)

// tests maps a *testing.T to its *Test.
var tests sync.Map

func lookup(tb testing.TB) *Test {
	if t, ok := tb.(*testing.T); ok {
		if n, ok := tests.Load(t); ok {
			return n.(*Test)
		}
	}
	return nil
}

// Start is called first in every test, benchmark, example and fuzz
// function, with its parameter (nil for an example, or when it has no
// name); Stop is deferred with its result. A test function the framework
// calls is a top-level test: Start registers its end.
func Start(tb testing.TB) *Test {
	t, ok := tb.(*testing.T)
	if !ok || t == nil {
		if tb != nil && !reflect.ValueOf(tb).IsNil() {
			mark(tb.Name()) // a benchmark or fuzz target
		} else if pc, _, _, ok := runtime.Caller(1); ok {
			mark(exampleName(runtime.FuncForPC(pc))) // an example
		}
		return nil
	}
	if n := lookup(t); n != nil {
		return n // a subtest (Run registered it), or a test called by a test
	}
	mark(t.Name())
	n := newTest(root)
	n.ret = 0 // the framework's t.Run returns into untraced code
	tests.Store(t, n)
	t.Cleanup(func() { n.done(t) })
	return n
}

// Stop is deferred right after Start: the test function returns. Under
// controlled scheduling the function then departs at a point of the
// schedule (rt.Depart), so that what its goroutines do after it returns
// replays from the seed.
func Stop(n *Test) {
	if n != nil {
		n.fnReturned(0)
	}
	rt.SyncRelease(testsEnded, 0)
	rt.Depart()
}

// fnReturned is the return of the test's function: its parallel subtests
// resume after it, and its context is cancelled after it.
func (n *Test) fnReturned(site uint32) {
	rt.SyncRelease(n.fnEnd, site)
	if n.ctx.Load() {
		rt.CtxCancel(0, site)
	}
}

// done is the test's end, its last cleanup.
func (n *Test) done(t *testing.T) {
	rt.SyncAcquire(n.subs, 0)
	par := n.par.Load()
	if p := n.parent; p != nil {
		if !par && n.ret != 0 {
			rt.SyncRelease(n.ret, 0)
		}
		rt.SyncRelease(p.subs, 0)
		if p == root && !par {
			rt.SyncRelease(root.fnEnd, 0)
		}
		if p.ctx.Load() {
			rt.CtxCancel(0, 0)
		}
	}
	rt.SyncRelease(testsEnded, 0)
	tests.Delete(t)
	if n.child != nil {
		if n.ok {
			n.child.Ok()
		}
		rt.End(n.child)
	}
}

// markFile is the file of the sites that name tests in the trace
// (cmd/racekit's TestMarkFile): the race reports of racekit test name the
// test whose goroutine (or whose goroutines' creator) made the access.
const markFile = "racekit:test"

// names says whether mark records test names: not under control, and not
// in a recording a controlled run will follow (RACEKIT_TEST_NAMES=0,
// which racekit fuzz and hatch set): its events and sites would shift
// every clip's positions and site numbers.
var names = forks && os.Getenv("RACEKIT_TEST_NAMES") != "0"

// marks holds each test name's site.
var marks sync.Map

// mark records that the calling goroutine runs the test name: a release
// of a fresh object (which no one acquires: no edge) at a site of
// markFile whose function is the name. Not under the controlled
// scheduler, whose schedules number the sites in the order they are
// registered.
func mark(name string) {
	if !names || name == "" || !rt.Enabled() {
		return
	}
	site, ok := marks.Load(name)
	if !ok {
		site, _ = marks.LoadOrStore(name, rt.RegisterFile(markFile, []string{name}, []uint32{0, 0, 0}))
	}
	rt.SyncRelease(rt.NewObject(), site.(uint32))
}

// exampleName is the name of an example function: its name without its
// package path.
func exampleName(f *runtime.Func) string {
	if f == nil {
		return ""
	}
	name := f.Name()
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// fork records the go statement of a goroutine the framework starts.
func fork(site uint32) *rt.Child {
	if !forks {
		return nil
	}
	return rt.Fork(site)
}

// Run is t.Run(name, f).
func Run(t *testing.T, name string, f func(*testing.T), site uint32) bool {
	n := newTest(lookup(t))
	n.child = fork(site)
	ok := t.Run(name, func(t *testing.T) {
		if n.child != nil {
			rt.Begin(n.child)
		}
		mark(t.Name())
		tests.Store(t, n)
		t.Cleanup(func() { n.done(t) }) // the first cleanup runs last
		defer n.fnReturned(site)
		f(t)
		n.ok = true
	})
	rt.SyncAcquire(n.ret, site)
	return ok
}

// Parallel is t.Parallel().
func Parallel(t *testing.T, site uint32) {
	n := lookup(t)
	if n == nil || n.parent == nil {
		// The parent is unknown: after every test function ended so far.
		t.Parallel()
		rt.SyncAcquire(testsEnded, site)
		return
	}
	n.par.Store(true)
	if n.ret != 0 {
		rt.SyncRelease(n.ret, site)
	}
	if n.parent == root {
		rt.SyncRelease(root.fnEnd, site)
	}
	t.Parallel()
	rt.SyncAcquire(n.parent.fnEnd, site)
}

// Cleanup is t.Cleanup(f) (on *testing.T, *testing.B, *testing.F or a
// testing.TB).
func Cleanup(tb testing.TB, f func(), site uint32) {
	reg := rt.NewObject()
	rt.SyncRelease(reg, site)
	n := lookup(tb)
	tb.Cleanup(func() {
		rt.SyncAcquire(reg, site)
		if n != nil {
			rt.SyncAcquire(n.subs, site)
		} else {
			// A benchmark's or fuzz target's: after its runs and
			// sub-benchmarks, which run in sequence.
			rt.SyncAcquire(testsEnded, site)
		}
		defer rt.SyncRelease(testsEnded, site)
		f()
	})
}

// MRun is m.Run() in TestMain.
func MRun(m *testing.M, site uint32) int {
	code := m.Run()
	rt.SyncAcquire(testsEnded, site)
	return code
}

// MRunDone is what follows m.Run() in racekit's own TestMain, which calls
// m.Run directly (MRun would be a frame on the examples' stacks): it
// returns m.Run's code.
func MRunDone(code int, site uint32) int {
	rt.SyncAcquire(testsEnded, site)
	return code
}

// RunB is b.Run(name, f): sub-benchmarks run in sequence, each run on a
// goroutine of its own.
func RunB(b *testing.B, name string, f func(*testing.B), site uint32) bool {
	done := rt.NewObject()
	ok := b.Run(name, func(b *testing.B) {
		defer rt.SyncRelease(testsEnded, site)
		defer rt.SyncRelease(done, site)
		f(b)
	})
	rt.SyncAcquire(done, site)
	return ok
}

// pbs maps a *testing.PB of a running RunParallel to its iteration
// counter's object.
var pbs sync.Map

// RunParallel is b.RunParallel(body).
func RunParallel(b *testing.B, body func(*testing.PB), site uint32) {
	done := rt.NewObject()
	counter := rt.NewObject()
	var kids []*rt.Child
	if b.N > 0 && forks {
		procs := int(intField(b, "parallelism", 1)) * runtime.GOMAXPROCS(0)
		for range procs {
			if c := fork(site); c != nil {
				kids = append(kids, c)
			}
		}
	}
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		var c *rt.Child
		if i := int(next.Add(1)) - 1; i < len(kids) {
			c = kids[i]
			rt.Begin(c)
		}
		pbs.Store(pb, counter)
		defer func() {
			pbs.Delete(pb)
			rt.SyncRelease(done, site)
			if c != nil {
				rt.End(c)
			}
		}()
		body(pb)
		if c != nil {
			c.Ok()
		}
	})
	rt.SyncAcquire(done, site)
}

// pbCache is the index of testing.PB's cache field: Next takes grain
// iterations from the shared counter (an atomic Add) when it is 0.
var pbCache = func() int {
	if f, ok := reflect.TypeFor[testing.PB]().FieldByName("cache"); ok && f.Type.Kind() == reflect.Uint64 {
		return f.Index[0]
	}
	return -1
}()

// PBNext is pb.Next().
func PBNext(pb *testing.PB, site uint32) bool {
	obj, ok := pbs.Load(pb)
	if !ok || (pbCache >= 0 && reflect.ValueOf(pb).Elem().Field(pbCache).Uint() != 0) {
		return pb.Next() // no Add: no edge
	}
	rt.SyncRelease(obj.(uint64), site)
	r := pb.Next()
	rt.SyncAcquire(obj.(uint64), site)
	return r
}

// intField reads the int field name of *x's struct, or def.
func intField(x any, name string, def int64) int64 {
	v := reflect.ValueOf(x).Elem().FieldByName(name)
	if !v.IsValid() || v.Kind() != reflect.Int || v.Int() < 1 {
		return def
	}
	return v.Int()
}

// Fuzz is f.Fuzz(ff): the fuzz function runs, for each input, in a
// goroutine the framework starts; its end is ordered before Fuzz returns
// (and before later tests, through "tests ended").
func Fuzz(f *testing.F, ff any, site uint32) {
	v := reflect.ValueOf(ff)
	if v.Kind() != reflect.Func {
		f.Fuzz(ff) // let testing report the misuse
		return
	}
	done := rt.NewObject()
	wrapped := reflect.MakeFunc(v.Type(), func(args []reflect.Value) []reflect.Value {
		defer rt.SyncRelease(testsEnded, site)
		defer rt.SyncRelease(done, site)
		return v.Call(args)
	})
	f.Fuzz(wrapped.Interface())
	rt.SyncAcquire(done, site)
}
