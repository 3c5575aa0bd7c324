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
//     MRun acquires testsEnded, which each of them releases at its end. It
//     runs the fuzz targets after the tests and the examples after both:
//     an example's or a fuzz target's Start acquires testsEnded too.
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
//   - The framework's root runs the top-level tests in sequence, starting
//     each when t.Run of the one before returns: the test before records
//     the next one's go statement as a fork of its own at its end or its
//     t.Parallel (nextTop), so a goroutine a test left running is not
//     ordered before the tests after it, as under -race.
//
// A goroutine the framework starts without rttest's fork (the first
// top-level test, a benchmark's run) is a goroutine born in untraced code:
// its first event is ordered after everything recorded before it.
//
// None of this adds a frame to what the tests' code sees (runtime.Callers,
// runtime.Caller, a panic's stack): rttest calls the user's functions
// through package testing alone. What must run on a test function's own
// goroutine before it (a subtest's Begin, its state, its end as a first
// cleanup) runs in the function itself: the rewriter gives every function
// of a test file whose first parameter is a *testing.T or a *testing.B
// the prologue
//
//	defer rttest.Stop(rttest.Start(t))
//
// (and a func(*testing.PB) PBStart and PBStop), and Start finds what Run,
// Fuzz, SynctestTest, RunB and RunParallel left for the function's test
// (claim: by the test's parent, package testing's unexported field, and
// its name). A call of a test function by another finds its test known
// and does nothing. When the rewriter cannot tell that the function passed
// has that prologue (a function value from elsewhere) it calls the
// wrapping variants (RunWrap, FuzzWrap, ...), which run the prologue's
// work in a function literal of their own around it, as before: one frame
// more, but the same edges. A cleanup is registered as is, between two
// cleanups of rttest's that run before and after it.
//
// # The locks of package testing
//
// Besides its channels, testing.go takes locks (tblock.go): each test's
// c.mu for Log, Error, Helper, Fail, Failed..., read and write modes apart,
// and with -v the printer's. rt.TBSync records them; the rewriter puts it
// right before and right after each such call (instrument/tblock.go; a
// call through an interface is checked at run time to be testing's).
//
// # Under control, and stalls
//
// Under the controlled scheduler a test function's end is a point of the
// schedule (rt.Depart, taken when no other goroutine can run), so that
// what its goroutines do after it returns replays from the seed. The
// stall watch (stall.go, with the runtime's side in rt's stall.go) reports
// a test whose goroutines all block on each other at once, not at the
// -timeout alarm: docs/frontend.md, "A test stuck for good".
package rttest

import (
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unsafe"

	"github.com/racekit/racekit/rt"
	"github.com/racekit/racekit/trace"
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
	ok     bool       // the function returned normally
	par    rt.OwnBool // the test called t.Parallel
	ctx    rt.OwnBool // the test called t.Context

	kind int    // what Stop does at the function's return
	site uint32 // the site of the call that started it (Run, Fuzz, ...)
	fuzz uint64 // kindFuzzInput: released at the input's end
	b    *testing.B
}

// Kinds of Start's states: what ends when the function returns.
const (
	kindTop       = iota // a top-level test
	kindSub              // a subtest (or a synctest bubble's test)
	kindFuzzInput        // one input of a fuzz target
	kindBench            // a run of a top-level benchmark
	kindSubBench         // a run of a sub-benchmark
	kindOther            // an example or a fuzz target
)

func newTest(parent *Test) *Test {
	return &Test{parent: parent, fnEnd: rt.NewObject(), subs: rt.NewObject(), ret: rt.NewObject()}
}

// root is the framework's root test: its function runs the top-level tests.
var root = newTest(nil)

// tests maps a *testing.T to its *Test.
var tests rt.OwnMap

// lookupPtr returns the state of the *testing.T at p, or nil.
func lookupPtr(p unsafe.Pointer) *Test {
	if p == nil {
		return nil
	}
	if n, ok := tests.Load((*testing.T)(p)); ok {
		return n.(*Test)
	}
	return nil
}

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
// name), and in every function of a test file whose first parameter is a
// *testing.T or a *testing.B (the function t.Run or b.Run may be given);
// Stop is deferred with its result. A function called by a test function
// gets nil (its test is known already); one the framework calls finds
// what Run, Fuzz or SynctestTest left for it (claim), or else is a
// top-level test, whose end Start registers.
func Start(tb testing.TB) *Test {
	t, ok := tb.(*testing.T)
	if !ok || t == nil {
		if b, ok := tb.(*testing.B); ok && b != nil {
			return startBench(b)
		}
		if tb != nil && !reflect.ValueOf(tb).IsNil() {
			mark(tb.Name()) // a fuzz target
		} else if pc, _, _, ok := runtime.Caller(1); ok {
			mark(exampleName(runtime.FuncForPC(pc))) // an example
		}
		// m.Run runs the fuzz targets after the tests, and the examples
		// after both: each begins after every test ended.
		rt.SyncAcquire(testsEnded, 0)
		return other
	}
	if lookup(t) != nil {
		return nil // a test function called by a test
	}
	if n := claim(t); n != nil {
		return n
	}
	if p := lookupPtr(parentOf(unsafe.Pointer(t))); p != nil {
		// A subtest started by code rttest does not see (t.Run in a
		// file that is not rewritten): no fork, and t.Run's return
		// acquires nothing.
		n := newTest(p)
		n.kind, n.ret = kindSub, 0
		register(t, n)
		return n
	}
	watchStall()
	n := newTest(root)
	n.ret = 0 // the framework's t.Run returns into untraced code
	if c := nextTop.Swap(nil); c != nil {
		rt.Begin(c)
		n.child = c
	}
	register(t, n)
	return n
}

// nextTop is the go statement of the next top-level test. The framework's
// root runs the top-level tests in sequence: it starts the next one when
// t.Run of the one before returns, at that test's end or at its
// t.Parallel. rttest records that go statement as a fork by the test
// before, at that point (forkNextTop), and the next top-level test's Start
// begins it: the test is then ordered after the tests before it and what
// was ordered before their ends, as under -race, and not after a goroutine
// a test before left running (a goroutine born in untraced code would be
// after everything). The first top-level test is still born in untraced
// code: after the package's initialization and TestMain's code.
var nextTop rt.OwnPointer[rt.Child]

// topSite is the site of nextTop's forks (trace.FrameworkFile).
var topSite = rt.OwnOnceValue(func() uint32 {
	return rt.RegisterFile(trace.FrameworkFile, []string{"testing.(*T).Run"}, []uint32{0, 0, 0})
})

// forkNextTop records the go statement of the next top-level test, by the
// calling one. A fork no test begins (the last test's, or one a test that
// has no prologue left) orders nothing.
func forkNextTop() {
	if !forks || !rt.Enabled() {
		return
	}
	nextTop.Store(rt.Fork(topSite()))
}

// other is the state of an example or a fuzz target.
var other = &Test{kind: kindOther}

// register makes n the state of t, the test running the calling
// goroutine, and registers its end.
func register(t *testing.T, n *Test) {
	if n.kind != kindFuzzInput {
		mark(t.Name())
		markActive(t.Name(), true)
	}
	tests.Store(t, n)
	printSection(n.site)                               // its "=== RUN", printed before it started
	rt.Own(func() { t.Cleanup(func() { n.done(t) }) }) // the first cleanup runs last
}

// Stop is deferred right after Start: the function returns. Under
// controlled scheduling a top-level test's function then departs at a
// point of the schedule (rt.Depart), so that what its goroutines do after
// it returns replays from the seed.
func Stop(n *Test) {
	if n == nil {
		return
	}
	switch n.kind {
	case kindTop:
		n.ok = returnedNormally()
		n.fnReturned(0)
	case kindSub:
		n.ok = returnedNormally()
		n.fnReturned(n.site)
		return
	case kindFuzzInput:
		rt.SyncRelease(n.fuzz, n.site)
		rt.SyncRelease(testsEnded, n.site)
		return
	case kindBench, kindSubBench:
		benches.Delete(n.b)
		if n.kind == kindSubBench {
			rt.SyncRelease(testsEnded, n.site)
			return
		}
	}
	rt.SyncRelease(testsEnded, 0)
	rt.Depart()
	if n.kind != kindTop {
		checkpoint() // an example, a benchmark's run, a fuzz target
	}
}

// returnedNormally reports whether the function whose deferred call
// calls it returns normally: not by a panic, nor by runtime.Goexit
// (t.FailNow), whose deferred calls the runtime makes.
func returnedNormally() bool {
	var pc [1]uintptr
	// Callers, this function, Stop; then the caller of the deferred
	// call (compiler-made wrappers of deferred calls are not counted).
	if runtime.Callers(3, pc[:]) == 0 {
		return true
	}
	f := runtime.FuncForPC(pc[0] - 1)
	if f == nil {
		return true
	}
	name := f.Name()
	return name != "runtime.gopanic" && name != "runtime.Goexit"
}

// benches holds the *testing.B whose benchmark function runs (between
// its Start and Stop): a function it calls with it is not a run of its
// own, and the B a sub-benchmark's parent.
var benches rt.OwnMap

// startBench is Start for a benchmark function's run.
func startBench(b *testing.B) *Test {
	if _, ok := benches.Load(b); ok {
		return nil // a function called by the benchmark
	}
	mark(b.Name())
	n := &Test{kind: kindBench, b: b}
	if p := parentOf(unsafe.Pointer(b)); p != nil {
		if _, ok := benches.Load((*testing.B)(p)); ok {
			n.kind = kindSubBench
		}
	}
	benches.Store(b, n)
	return n
}

// checkpointing says whether rttest checkpoints the trace at the end of
// top-level tests, examples, benchmarks and fuzz targets: in a test binary
// without racekit's TestMain (rt/checkpoint.go).
var checkpointing rt.OwnBool

// Checkpoints is called by the init function racekit adds to a test
// binary in place of a TestMain of its own: rt will not finish the trace
// at exit, so every end checkpoints it.
func Checkpoints() {
	checkpointing.Store(true)
	rt.Checkpoints()
}

func checkpoint() {
	if checkpointing.Load() {
		rt.Checkpoint()
	}
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
	if n.kind != kindFuzzInput {
		markActive(t.Name(), false)
	}
	testEnded(t, n, 0)
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
	if n.parent == root && !par {
		forkNextTop()
	}
	tests.Delete(t)
	tbMutexes.Delete(unsafe.Pointer(t))
	if n.child != nil {
		if n.ok {
			n.child.Ok()
		}
		rt.End(n.child)
	}
	if n.parent == root {
		checkpoint()
	}
}

// markFile is the file of the sites that name tests in the trace
// (analyze.TestMarkFile): the race reports of racekit test name the
// test whose goroutine (or whose goroutines' creator) made the access.
const markFile = "racekit:test"

// names says whether mark records test names: not under control, and not
// in a recording a controlled run will follow (RACEKIT_TEST_NAMES=0,
// which racekit fuzz and hatch set): its events and sites would shift
// every clip's positions and site numbers.
var names = forks && os.Getenv("RACEKIT_TEST_NAMES") != "0"

// activeFile and inactiveFile are the files of the sites that mark a test
// active (it starts, or resumes after t.Parallel) and inactive (it pauses
// in t.Parallel, or ends): where package testing resets and checks its
// count of race reports (analyze.TestActiveFile, TestInactiveFile).
const (
	activeFile   = "racekit:test-active"
	inactiveFile = "racekit:test-inactive"
)

// marks, activeMarks and inactiveMarks hold each test name's site of
// markFile, activeFile and inactiveFile.
var marks, activeMarks, inactiveMarks rt.OwnMap

// mark records that the calling goroutine runs the test name: a release
// of a fresh object (which no one acquires: no edge) at a site of
// markFile whose function is the name. Not under the controlled
// scheduler, whose schedules number the sites in the order they are
// registered.
func mark(name string) { markAt(&marks, markFile, name) }

// markActive records that the test name is active (or no longer is), as
// mark records its goroutine.
func markActive(name string, active bool) {
	if active {
		markAt(&activeMarks, activeFile, name)
	} else {
		markAt(&inactiveMarks, inactiveFile, name)
	}
}

func markAt(m *rt.OwnMap, file, name string) {
	if !names || name == "" || !rt.Enabled() {
		return
	}
	site, ok := m.Load(name)
	if !ok {
		site, _ = m.LoadOrStore(name, rt.RegisterFile(file, []string{name}, []uint32{0, 0, 0}))
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

// Run is t.Run(name, f), where f begins with Start's prologue: f's
// goroutine claims n, the state Run leaves for it.
func Run(t *testing.T, name string, f func(*testing.T), site uint32) bool {
	if parentField < 0 {
		return RunWrap(t, name, f, site)
	}
	n := newTest(lookup(t))
	n.kind, n.site = kindSub, site
	n.child = fork(site)
	printSection(site) // its "=== RUN"
	ok := runPending(unsafe.Pointer(t), &pend{name: name, n: n}, func() bool { return t.Run(name, f) })
	rt.SyncAcquire(n.ret, site)
	runReturned(site)
	return ok
}

// RunWrap is t.Run(name, f) for an f that may not begin with Start's
// prologue: Run's work runs in a function literal around f.
func RunWrap(t *testing.T, name string, f func(*testing.T), site uint32) bool {
	n := newTest(lookup(t))
	n.child = fork(site)
	printSection(site) // its "=== RUN"
	ok := t.Run(name, func(t *testing.T) {
		if n.child != nil {
			rt.Begin(n.child)
		}
		register(t, n)
		defer n.fnReturned(site)
		f(t)
		n.ok = true
	})
	rt.SyncAcquire(n.ret, site)
	runReturned(site)
	return ok
}

// pend is a state left for the function of a test the framework is about
// to start: a subtest called name (rewritten as package testing does,
// made unique by a suffix #NN), or one that has its parent's name (a
// synctest bubble's test).
type pend struct {
	name string
	same bool
	n    *Test
}

// pending holds the states left for tests, by the address of their
// parent's testing.common (the *testing.T or *testing.F it begins).
var (
	pendMu  rt.OwnMutex
	pending = map[unsafe.Pointer][]*pend{}
)

// runPending leaves p for a test whose parent is at parent while run
// runs, and returns run's result.
func runPending(parent unsafe.Pointer, p *pend, run func() bool) bool {
	pendMu.Lock()
	pending[parent] = append(pending[parent], p)
	pendMu.Unlock()
	defer func() {
		pendMu.Lock()
		defer pendMu.Unlock()
		ps := pending[parent]
		for i, q := range ps {
			if q == p { // not claimed: the test did not run (-run), or its function has no prologue
				ps = append(ps[:i:i], ps[i+1:]...)
				break
			}
		}
		if len(ps) == 0 {
			delete(pending, parent)
		} else {
			pending[parent] = ps
		}
	}()
	return run()
}

// claim returns the state Run, SynctestTest or Fuzz left for t's
// function, registered, or nil.
func claim(t *testing.T) *Test {
	parent := parentOf(unsafe.Pointer(t))
	if parent == nil {
		return nil
	}
	pendMu.Lock()
	ps := pending[parent]
	var p *pend
	if len(ps) > 0 {
		rel := t.Name()
		if pn := (*testing.T)(parent).Name(); pn != "" && strings.HasPrefix(rel, pn+"/") {
			rel = rel[len(pn)+1:]
		}
		for i, q := range ps {
			if q.same && t.Name() == (*testing.T)(parent).Name() || !q.same && subName(rel, q.name) {
				p = q
				ps = append(ps[:i:i], ps[i+1:]...)
				break
			}
		}
		if p == nil && len(ps) == 1 {
			p, ps = ps[0], nil // named in a way rttest does not know
		}
		if len(ps) == 0 {
			delete(pending, parent)
		} else {
			pending[parent] = ps
		}
	}
	pendMu.Unlock()
	if p == nil {
		if ft, ok := fuzzTargets.Load(parent); ok {
			n := newTest(nil)
			n.kind, n.fuzz, n.site = kindFuzzInput, ft.(*fuzzTarget).done, ft.(*fuzzTarget).site
			register(t, n)
			return n
		}
		return nil
	}
	n := p.n
	if n.child != nil {
		rt.Begin(n.child)
	}
	register(t, n)
	return n
}

// subName reports whether rel, a subtest's name below its parent's, is
// the name given to t.Run, rewritten as package testing does (spaces to
// underscores, unprintable runes quoted), with maybe a suffix #NN.
func subName(rel, given string) bool {
	var b strings.Builder
	for _, r := range given {
		switch {
		case unicode.IsSpace(r):
			b.WriteByte('_')
		case !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	rest, ok := strings.CutPrefix(rel, b.String())
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	digits := strings.TrimPrefix(rest, "#")
	return len(digits) < len(rest) && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// parentField is the offset in testing.common of its parent field (the
// parent's testing.common), -1 if package testing has no such field: then
// the wrapping variants are used.
var parentField = func() int {
	for _, t := range []reflect.Type{reflect.TypeFor[testing.T](), reflect.TypeFor[testing.B](), reflect.TypeFor[testing.F]()} {
		if f, ok := t.FieldByName("common"); !ok || !f.Anonymous || f.Offset != 0 {
			return -1 // a *common is not a pointer to its T, B or F
		}
	}
	c, _ := reflect.TypeFor[testing.T]().FieldByName("common")
	p, ok := c.Type.FieldByName("parent")
	if !ok || len(p.Index) != 1 || p.Type != reflect.PointerTo(c.Type) {
		return -1
	}
	return int(p.Offset)
}()

// parentOf returns the address of the parent of the test, benchmark or
// fuzz target at tb (a *testing.T, *testing.B or *testing.F): that of its
// *testing.T, *testing.B or *testing.F, or nil.
func parentOf(tb unsafe.Pointer) unsafe.Pointer {
	if parentField < 0 || tb == nil {
		return nil
	}
	return *(*unsafe.Pointer)(unsafe.Add(tb, parentField))
}

// Cleanup is t.Cleanup(f) (on *testing.T, *testing.B, *testing.F or a
// testing.TB). f is registered as it is, between two cleanups of
// rttest's (cleanups run last registered first): the one before it
// acquires its registration and, for a test, its subtests' ends (runCleanup
// runs after them); the one after it releases testsEnded.
func Cleanup(tb testing.TB, f func(), site uint32) {
	reg := rt.NewObject()
	rt.SyncRelease(reg, site)
	n := lookup(tb)
	tbSync(tb, rt.TBLock, site)                                                // registering locks c.mu
	rt.Own(func() { tb.Cleanup(func() { rt.SyncRelease(testsEnded, site) }) }) // rttest's registrations lock nothing of the program's
	tb.Cleanup(f)
	tbSync(tb, rt.TBLock, site)
	rt.Own(func() { tb.Cleanup(cleanupAfter(tb, reg, n, site)) })
}

// cleanupAfter is the cleanup Cleanup registers after the program's,
// which runs before it.
func cleanupAfter(tb testing.TB, reg uint64, n *Test, site uint32) func() {
	return func() {
		rt.SyncAcquire(reg, site)
		if n != nil {
			rt.SyncAcquire(n.subs, site)
		} else {
			// A benchmark's or fuzz target's: after its runs and
			// sub-benchmarks, which run in sequence.
			rt.SyncAcquire(testsEnded, site)
		}
	}
}

// AllocsPerRun is testing.AllocsPerRun(runs, f): rt allocates nothing it
// can avoid while f runs (rt.CountAllocs), so the count is the program's.
func AllocsPerRun(runs int, f func()) float64 {
	rt.CountAllocs(1)
	defer rt.CountAllocs(-1)
	return testing.AllocsPerRun(runs, f)
}

// MRunDone is what follows m.Run() in TestMain (the rewriter makes
// m.Run() MRunDone(m.Run(), site), calling m.Run where the user did, so
// that the examples, which run on its goroutine, see no frame of
// rttest's): it returns m.Run's code.
func MRunDone(code int, site uint32) int {
	rt.SyncAcquire(testsEnded, site)
	rt.TestsRan(code)
	return code
}

// RunB is b.Run(name, f), where f begins with Start's prologue:
// sub-benchmarks run in sequence, each run on a goroutine of its own, and
// the end of each run (Stop) releases testsEnded.
func RunB(b *testing.B, name string, f func(*testing.B), site uint32) bool {
	if parentField < 0 {
		return RunBWrap(b, name, f, site)
	}
	ok := b.Run(name, f)
	rt.SyncAcquire(testsEnded, site)
	return ok
}

// RunBWrap is b.Run(name, f) for an f that may not begin with Start's
// prologue.
func RunBWrap(b *testing.B, name string, f func(*testing.B), site uint32) bool {
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
var pbs rt.OwnMap

// parallel is the state of a b.RunParallel call: the goroutines forked
// for its body, handed out in the order the bodies start, its end and the
// object of its iteration counter.
type parallel struct {
	kids    []*rt.Child
	next    rt.OwnInt64
	done    uint64
	counter uint64
	site    uint32
}

func newParallel(b *testing.B, site uint32) *parallel {
	p := &parallel{done: rt.NewObject(), counter: rt.NewObject(), site: site}
	if b.N > 0 && forks {
		procs := int(intField(b, "parallelism", 1)) * runtime.GOMAXPROCS(0)
		for range procs {
			if c := fork(site); c != nil {
				p.kids = append(p.kids, c)
			}
		}
	}
	return p
}

// kid returns the child a body's goroutine begins as, or nil.
func (p *parallel) kid() *rt.Child {
	if i := int(p.next.Add(1)) - 1; i < len(p.kids) {
		rt.Begin(p.kids[i])
		return p.kids[i]
	}
	return nil
}

// curParallel is the RunParallel whose bodies PBStart is for (benchmarks
// run one at a time).
var curParallel rt.OwnPointer[parallel]

// RunParallel is b.RunParallel(body), where body begins with PBStart's
// prologue.
func RunParallel(b *testing.B, body func(*testing.PB), site uint32) {
	p := newParallel(b, site)
	if !curParallel.CompareAndSwap(nil, p) {
		runParallelWrap(b, body, p)
		return
	}
	defer curParallel.Store(nil)
	b.RunParallel(body)
	rt.SyncAcquire(p.done, site)
}

// RunParallelWrap is b.RunParallel(body) for a body that may not begin
// with PBStart's prologue.
func RunParallelWrap(b *testing.B, body func(*testing.PB), site uint32) {
	runParallelWrap(b, body, newParallel(b, site))
}

func runParallelWrap(b *testing.B, body func(*testing.PB), p *parallel) {
	b.RunParallel(func(pb *testing.PB) {
		t := pbStart(pb, p)
		defer PBStop(t)
		body(pb)
		t.ok = true
	})
	rt.SyncAcquire(p.done, p.site)
}

// PB is the state of one goroutine of a RunParallel body.
type PB struct {
	p  *parallel
	pb *testing.PB
	c  *rt.Child
	ok bool
}

// PBStart is called first in every function of a test file of type
// func(*testing.PB); PBStop is deferred with its result. The body of the
// current RunParallel gets its goroutine's state; a function called by
// the body, nil.
func PBStart(pb *testing.PB) *PB { return pbStart(pb, nil) }

// pbStart is PBStart for the body of RunParallel p (nil: the current).
func pbStart(pb *testing.PB, p *parallel) *PB {
	if _, ok := pbs.Load(pb); ok || pb == nil {
		return nil
	}
	if p == nil {
		if p = curParallel.Load(); p == nil {
			return nil
		}
	}
	t := &PB{p: p, pb: pb, c: p.kid()}
	pbs.Store(pb, p.counter)
	return t
}

// PBStop ends a RunParallel body's goroutine.
func PBStop(t *PB) {
	if t == nil {
		return
	}
	pbs.Delete(t.pb)
	rt.SyncRelease(t.p.done, t.p.site)
	if t.c != nil {
		if t.ok || returnedNormally() {
			t.c.Ok()
		}
		rt.End(t.c)
	}
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

// fuzzTarget is what Fuzz leaves for the inputs of the fuzz target it
// runs: an object released at the end of each input.
type fuzzTarget struct {
	done uint64
	site uint32
}

// fuzzTargets holds the targets whose f.Fuzz runs, by their *testing.F.
var fuzzTargets rt.OwnMap

// Fuzz is f.Fuzz(ff), where ff begins with Start's prologue: the fuzz
// function runs, for each input, in a goroutine the framework starts, as
// a test whose parent is f; its end is ordered before Fuzz returns (and
// before later tests, through "tests ended").
func Fuzz(f *testing.F, ff any, site uint32) {
	if parentField < 0 {
		FuzzWrap(f, ff, site)
		return
	}
	ft := &fuzzTarget{done: rt.NewObject(), site: site}
	fuzzTargets.Store(unsafe.Pointer(f), ft)
	defer fuzzTargets.Delete(unsafe.Pointer(f))
	f.Fuzz(ff)
	rt.SyncAcquire(ft.done, site)
}

// FuzzWrap is f.Fuzz(ff) for an ff that may not begin with Start's
// prologue.
func FuzzWrap(f *testing.F, ff any, site uint32) {
	v := reflect.ValueOf(ff)
	if v.Kind() != reflect.Func {
		f.Fuzz(ff) // let testing report the misuse
		return
	}
	done := rt.NewObject()
	wrapped := reflect.MakeFunc(v.Type(), func(args []reflect.Value) []reflect.Value {
		if t, ok := args[0].Interface().(*testing.T); ok && t != nil {
			n := newTest(nil)
			n.kind = kindFuzzInput
			register(t, n) // for ff's own Start, which then does nothing
		}
		defer rt.SyncRelease(testsEnded, site)
		defer rt.SyncRelease(done, site)
		return v.Call(args)
	})
	f.Fuzz(wrapped.Interface())
	rt.SyncAcquire(done, site)
}
