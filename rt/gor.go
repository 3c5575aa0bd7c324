package rt

import (
	"context"
	"reflect"
	"runtime"
	"time"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// Child is a goroutine started by an instrumented go statement. The
// rewritten statement is
//
//	c := rt.Fork(site)
//	go func() { rt.Begin(c); defer rt.End(c); f(args); c.Ok() }()
//
// with f and args evaluated before the fork, as the go statement does; a
// go statement of a function literal runs the literal itself, which
// begins with rt.Begin(c); defer rt.GoEnd(c).
type Child struct {
	gid  trace.GID
	st   *gstate
	ok   bool
	site uint32 // the go statement's (gs-ad's key, sample.go)
}

// Fork allocates the child's GID and records the fork in the current
// goroutine. It returns nil when the program is not traced.
func Fork(site uint32) *Child {
	if ctl {
		schedFork(site) // controlled mode (sched.go)
		if !on {
			return &Child{} // not traced: only its ok flag, for End (sched.go)
		}
	}
	if !on || !live.Load() {
		return nil
	}
	g := cur()
	defMu.Lock()
	gid := trace.GID(ngors)
	ngors++
	s := site
	if s >= nsites {
		s = 0
	}
	defs = append(defs, def{g: trace.Goroutine{ID: gid, Parent: g.gid, Site: trace.SiteID(s)}})
	defMu.Unlock()
	g.sync(trace.OpFork, 0, site, uint64(gid), 0, nil)
	return &Child{gid: gid, site: site}
}

// Begin is the child's first event: the current goroutine becomes c's GID.
func Begin(c *Child) {
	if ctl {
		schedBegin() // controlled mode (sched.go)
	}
	if c == nil || !live.Load() {
		return
	}
	c.st = claim(c.gid)
	c.st.samp.born(c.site) // gs-ad counts by go statement (sample.go)
	c.st.sync(trace.OpBegin, 0, 0, 0, 0, nil)
}

// Ok marks the child's function as having returned normally.
func (c *Child) Ok() {
	if c != nil {
		c.ok = true
	}
}

// GoEnd is End, deferred at the top of the function literal of a go
// statement, which its goroutine runs itself (no literal of racekit's
// around it to call Ok: its frame would show in the goroutine's stack):
// the literal returned normally unless the runtime runs the deferred call
// for a panic or runtime.Goexit.
func GoEnd(c *Child) {
	if c != nil && !c.ok && returnedNormally() {
		c.ok = true
	}
	End(c)
}

// returnedNormally reports whether the function whose deferred call calls
// it (directly) is returning normally: the deferred call is then made by
// that function, or by runtime.deferreturn, not by runtime.gopanic or
// runtime.Goexit. Compiler-made wrappers of deferred calls do not count.
func returnedNormally() bool {
	var pc [1]uintptr
	if runtime.Callers(3, pc[:]) == 0 { // Callers, returnedNormally, the deferred call
		return true
	}
	f := runtime.FuncForPC(pc[0] - 1) // the call's PC, in the caller: not a frame of its own
	if f == nil {
		return true
	}
	name := f.Name()
	return name != "runtime.gopanic" && name != "runtime.Goexit"
}

// End is the child's last event. A child that did not return normally (a
// panic that may kill the program, or runtime.Goexit) flushes the trace.
func End(c *Child) {
	if ctl {
		schedEnd(c != nil && !c.ok) // controlled mode (sched.go)
	}
	if c == nil || c.st == nil {
		return
	}
	c.st.end()
	if !c.ok {
		Flush()
	}
}

// Enter records entry into the instrumented function whose declaration is
// site fn, and reports whether the memory accesses of this invocation are
// to be recorded: false only when a sampler decided not to sample it
// (sample.go). The instrumented function keeps the result in a local and
// passes it to every access hook, which then skips the access at the cost
// of a branch: LiteRace's dispatch check, with one body where LiteRace
// has two copies.
//
// A goroutine born in untraced code runs traced code as callbacks of the
// untraced code (an HTTP handler called by net/http's connection
// goroutine, a test function called by the testing framework). That caller
// may have read what the callback works on from a connection, and may
// write what the callback did to one (net/http writes the response after
// the handler returns), edges the Go race detector sees as I/O on its
// ioSync object. rt records them the same way: entering traced code from
// untraced code acquires ioObj, returning to it releases ioObj.
func Enter(fn uint32) bool {
	rec, _ := enter(fn, false)
	return rec
}

// EnterG is Enter for a function whose body holds hooks that take the
// goroutine's state (MutexLockG, MutexUnlockG, SendPreG, RecvRangeG,
// RecvG, Recv2G): it returns the state too (nil when nothing is traced),
// so that those hooks need not look it up. A function's body runs on one
// goroutine, and each function literal has its own EnterG; a hook handed
// nil, or a state of an earlier trace, looks it up (gOr).
func EnterG(fn uint32) (bool, *gstate) { return enter(fn, false) }

// Sampled is the dispatch check of a function that has a copy as written
// (a leaf that records nothing but accesses: instrument's leafCopy), made
// before its frame exists: false sends the call to the copy, which has no
// Enter, no Leave and no hook, as LiteRace's uninstrumented copy; true to
// the instrumented body, whose EnterSampled does not decide again. The
// decision is the one Enter would make (the same counters, one step per
// call). Nothing traced: the copy, after the check in dispatch-only mode;
// under the controlled scheduler, where each access is a scheduling point,
// and when recording without a sampler: the instrumented body.
func Sampled(fn uint32) bool {
	// The fast path: a goroutine already in its table, inside traced code
	// (a call from untraced code may have a tp-ad slot to give back),
	// counting in the middle of a run of a function it has called before:
	// nearly every call of a hot leaf. It decides as decide does, without
	// its calls.
	if quickCheck && on && !ctl && live.Load() && goidOff != 0 {
		id := *(*uint64)(unsafe.Add(getg(), goidOff)) // cur's hit by hand, as in accessAddr (a call costs 2-4 ns here)
		if g := gtab[id&(gtabSize-1)].Load(); g != nil && g.goid == id && (g.depth > 0 || !g.untraced) {
			if ok, quick := g.samp.quickStep(fn); quick {
				return ok
			}
		}
	}
	return sampledSlow(fn)
}

// sampledSlow is Sampled's general path.
func sampledSlow(fn uint32) bool {
	if !on || !live.Load() {
		if dispatchOnly {
			dispatchSampled(fn) // the check alone (sample.go)
		}
		return ctl
	}
	if ctl || !sampling {
		return true
	}
	if sampleNoAccess {
		return false // records nothing but accesses
	}
	g := cur()
	ok := g.samp.decide(g.gid, uint64(fn))
	if !ok && g.depth == 0 && g.untraced {
		g.samp.returned() // tp-ad: the copy is a whole call from untraced code
	}
	return ok
}

// EnterSampled is Enter for the instrumented body of a function whose
// call Sampled found sampled.
func EnterSampled(fn uint32) bool {
	rec, _ := enter(fn, true)
	return rec
}

func enter(fn uint32, sampled bool) (bool, *gstate) {
	// The fast path, as Sampled's: an unsampled call in the middle of a
	// run of unsampled calls, by a goroutine in traced code (no edge with
	// untraced code to record) whose frame bits reach the new depth. It
	// does what the general path does then: a pending frame, its bit
	// cleared.
	if quickCheck && !sampled && on && !ctl && live.Load() && goidOff != 0 {
		id := *(*uint64)(unsafe.Add(getg(), goidOff)) // cur's hit by hand, as in accessAddr (a call costs 2-4 ns here)
		if g := gtab[id&(gtabSize-1)].Load(); g != nil && g.goid == id && (g.depth > 0 || !g.untraced) {
			if g.samp.quickSkip(fn, g.depth) {
				g.depth++
				g.pend = append(g.pend, fn)
				return false, g
			}
		}
	}
	return enterSlow(fn, sampled)
}

// enterSlow is enter's general path.
func enterSlow(fn uint32, sampled bool) (bool, *gstate) {
	if !on || !live.Load() {
		if dispatchOnly {
			dispatchEnter(fn) // the dispatch check alone (sample.go)
		}
		return true, nil // the hooks check on and live themselves
	}
	g := cur()
	rec := true
	if sampling {
		// LiteRace's dispatch check (sample.go). An unsampled frame is
		// recorded only if something is recorded inside it (showFrames).
		g.depth++
		g.pend = append(g.pend, fn)
		if g.samp.enter(g.gid, g.depth, fn, sampled) && !sampleNoAccess {
			g.showFrames()
		} else {
			rec = false
		}
	} else {
		// A full recording too records a frame only when an event is
		// recorded inside it (showFrames): every recorded event has the
		// frames it would have with each call recorded, and a call in
		// which dedup or the stack rule (onStack) dropped everything costs
		// no event (most of the events of call-heavy code were FuncEnter
		// and FuncExit of such calls).
		g.depth++
		g.pend = append(g.pend, fn)
	}
	if g.depth == 1 && g.untraced {
		g.edge(trace.OpSyncAcquire, fn, ioObj)
		for _, c := range g.outChans {
			g.edge(trace.OpSyncAcquire, fn, c)
		}
	}
	return rec, g
}

// maxOutChans bounds the channels a goroutine keeps for ChanOut.
const maxOutChans = 4

// ChanOut is a channel that a return statement hands back, and returns
// it. A goroutine born in untraced code that got it from traced code (the
// goroutine context.WithCancel starts for a parent context of the user's
// type calls parent.Done()) may wait on it there, unseen (a select in
// package context), and come back to traced code because of a send or a
// close (it then calls parent.Err()): the Go race detector sees that
// receive, racekit does not. So each later entry of the goroutine from
// untraced code acquires the channel, as a receive from it would, merged
// (every send and close so far): an edge it may not have had, which can
// hide a race, never invent one.
func ChanOut[C any](c C) C {
	if on && live.Load() {
		chanOut(chanAddr(c))
	}
	return c
}

func chanOut(a uint64) {
	g := cur()
	if !g.untraced || g.depth > 1 || a == 0 {
		return // not returned to untraced code
	}
	for _, x := range g.outChans {
		if x == a {
			return
		}
	}
	if len(g.outChans) == maxOutChans {
		g.outChans = append(g.outChans[:0], g.outChans[1:]...)
	}
	g.outChans = append(g.outChans, a)
}

// Leave records the return (or unwinding) of function fn; it is deferred
// right after Enter.
func Leave(fn uint32) {
	// The fast path: the return of a frame that stayed pending (nothing
	// recorded inside) to a traced caller.
	if quickCheck && on && live.Load() && goidOff != 0 {
		id := *(*uint64)(unsafe.Add(getg(), goidOff)) // cur's hit by hand, as in accessAddr (a call costs 2-4 ns here)
		if g := gtab[id&(gtabSize-1)].Load(); g != nil && g.goid == id && g.depth > g.shown && (g.depth > 1 || !g.untraced) {
			g.pend = g.pend[:len(g.pend)-1]
			g.depth--
			return
		}
	}
	leaveSlow(fn)
}

// Ret is the normal return of a function that defers calls, put before
// its return statements and at the end of a body that can fall off it
// (instrument/funcs.go): its frame leaves the trace here, and the calls it
// deferred run as its caller's, as under go test -race, where the
// runtime's deferreturn (not instrumented) calls them once the function's
// own frame is gone from the race detector's stack: a race in a `defer
// cleanup()` that many tests share has one stack, reported once
// (suppress_equal_stacks; held-out varlink/go's Shutdown in six tests). The
// depth stays until LeaveRet, deferred first and so run last, since the
// edges with untraced code (enterSlow, leaveSlow), callback locks and
// samplers count it.
func Ret(fn uint32) {
	if !on || !live.Load() {
		return
	}
	g := cur()
	if n := len(g.left); g.depth == 0 || n > 0 && g.left[n-1] == g.depth {
		return
	}
	if g.depth > g.shown {
		g.pend = g.pend[:len(g.pend)-1] // never shown: it stays so
	} else {
		g.frame(trace.OpFuncExit, fn)
		g.shown = g.depth - 1
	}
	g.left = append(g.left, g.depth)
}

// LeaveRet is Leave for a function with Ret calls: after Ret, the frame
// is gone from the trace and only its depth is left to go.
func LeaveRet(fn uint32) {
	if on && live.Load() {
		g := cur()
		if n := len(g.left); n > 0 && g.left[n-1] == g.depth {
			g.left = g.left[:n-1]
			g.popDepth(fn)
			g.shown = min(g.shown, g.depth)
			return
		}
	}
	Leave(fn)
}

// leaveSlow is Leave's general path.
func leaveSlow(fn uint32) {
	if !on || !live.Load() {
		if dispatchOnly {
			dispatchLeave() // sample.go
		}
		return
	}
	g := cur()
	if g.depth > g.shown {
		// An unsampled frame in which nothing but Frameless events was
		// recorded: it never was either; its edge back to untraced code
		// is, as the one Enter recorded.
		g.pend = g.pend[:len(g.pend)-1]
		g.popDepth(fn)
	} else {
		g.popDepth(fn)
		g.frame(trace.OpFuncExit, fn)
		g.shown = g.depth
		if g.depth == 0 {
			// Back in untraced code, which may wait there long (a
			// server's connection goroutine between requests, the
			// testing framework's between tests) or end: nothing is
			// left uncommitted (frame), and g goes idle, as before a
			// blocking operation, so that the writer need not wait
			// stealAfter to pass its bound.
			g.commit(true)
		}
	}
}

// popDepth ends a frame of fn's: a return to untraced code (its depth
// reaches 0 on a goroutine born there) records the edge back to it and
// gives tp-ad's slot back (sample.go).
func (g *gstate) popDepth(fn uint32) {
	if g.depth--; g.depth == 0 && g.untraced {
		g.edge(trace.OpSyncRelease, fn, ioObj)
		g.samp.returned()
	}
}

// showFrames records the FuncEnter of g's frames not recorded yet
// (g.pend, unsampled frames: see Enter), before the event about to be
// recorded inside them: so a sampled run records an unsampled call only
// when it holds a synchronization event or a sampled call (LiteRace logs
// nothing else of unsampled code), with the frames every recorded event
// would have in a full run.
func (g *gstate) showFrames() {
	pend := g.pend
	g.shown = g.depth
	for _, fn := range pend {
		g.frame(trace.OpFuncEnter, fn)
	}
	g.pend = pend[:0]
}

// frame records a FuncEnter or FuncExit without committing it: the next
// event g commits publishes it with its own (every other event commits, a
// return to untraced code commits, park commits before g waits, and Finish
// commits its caller's): one locked instruction fewer per frame event,
// two of every five events of call-heavy code (yaml.v2's tests). Alone it
// gained nothing measurable while the compare-and-swap waited on cache
// lines in the writer's core (arena.go's chunkFree); with those cooled it
// is within the spread (bench/results/overhead/session88-chunk-reuse.md).
// A frame event names no memory and makes no edge, so the writer's steal
// moving it to a later key (stolen redoes the records not committed)
// changes only where it sits among other goroutines' events, never the
// order of g's own; a goroutine still running when the run ends may lose
// its last exits.
func (g *gstate) frame(op trace.Op, fn uint32) {
	g.prepPlain()
	g.putEvent(op, 0, fn, uint64(fn), 0)
}

// AtomicBegin opens the atomic region of an invocation of fn, a function
// marked //racekit:atomic (PECAN's atomic regions); AtomicEnd, deferred
// right after it, closes it.
func AtomicBegin(fn uint32) {
	if on && live.Load() {
		cur().record(trace.OpRegionBegin, 0, fn, uint64(fn), 0)
	}
}

// AtomicEnd closes the region AtomicBegin opened.
func AtomicEnd(fn uint32) {
	if on && live.Load() {
		cur().record(trace.OpRegionEnd, 0, fn, uint64(fn), 0)
	}
}

// AfterFunc is time.AfterFunc(d, f): the goroutine that runs f is forked
// here, by the caller, rather than born in untraced code (a later run after
// Reset is). The *time.Timer is new: its allocation is recorded (rt.New),
// as NewTimer's.
func AfterFunc(d time.Duration, f func(), site uint32) *time.Timer {
	TimerStart(site)
	c := Fork(site)
	var first OwnBool
	return New(time.AfterFunc(d, func() { runForked(c, &first, f) }), site)
}

// ContextAfterFunc is context.AfterFunc(ctx, f). f runs once ctx is
// done: after its cancel (package context starts f's goroutine in it),
// so f acquires what a receive from ctx.Done() does. Its stop function
// records what stop does inside package context (afterFuncStopped).
func ContextAfterFunc(ctx context.Context, f func(), site uint32) (stop func() bool) {
	c := Fork(site)
	var first OwnBool
	stopF := context.AfterFunc(ctx, func() {
		runForked(c, &first, func() {
			CtxDone(site)
			f()
		})
	})
	var stopped OwnBool
	return func() bool {
		ok := stopF()
		if ok {
			stopped.Store(true)
		}
		afterFuncStopped(ctx, ok, stopped.Load(), site)
		return ok
	}
}

// afterFuncStopped records what a context.AfterFunc's stop did, as the Go
// race detector sees it inside package context. stop runs the
// AfterFunc's once.Do: true when it got there first, and then it removes
// the AfterFunc from its parent under the parent's mutex (removeChild),
// which a later cancel of the parent takes; false when the parent's
// cancel had run it (cancelled the AfterFunc, then started f's goroutine
// inside the once), and then the once's atomic load orders the stop after
// that cancel, as a receive from the parent's Done does, whether f's
// goroutine has run yet or not. A stop after a stop that returned true
// returns false and sees only the first stop's once.
func afterFuncStopped(ctx context.Context, ok, stopped bool, site uint32) {
	if !on || !live.Load() || ctx == nil {
		return
	}
	switch {
	case ok:
		if a := chanAddr(ctx.Done()); a != 0 {
			emitEdge(trace.OpSyncAcquire, site, ctxMuObj(a))
			emitEdge(trace.OpSyncRelease, site, ctxMuObj(a))
		}
	case !stopped && ownErr(ctx) != nil:
		CtxDoneOf(ctx.Done(), site)
	}
}

// runForked runs f as the child c the first time, as a goroutine of its own
// afterwards.
func runForked(c *Child, first *OwnBool, f func()) {
	if !first.CompareAndSwap(false, true) {
		TimerFired(0)
		f()
		return
	}
	Begin(c)
	defer End(c)
	TimerFired(0) // a Reset before this run is ordered before it
	f()
	c.Ok()
}

// Finalizers and cleanups. Go's race detector orders each batch of them
// after everything every goroutine did before it (racefingo: the
// finalizer goroutine acquires every goroutine's clock), and runs each
// cleanup in a race context of its own, forked from the cleanup
// goroutine's after racefingo (raceEnterNewCtx). rt makes each finalizer
// run a goroutine of its own, born in untraced code, which detectors order
// after every event so far. Without this, the one goroutine that runs
// them all was ordered after what came before its first run only, and a
// later finalizer raced with what its object's goroutine had done before
// (a false alarm). A batch of cleanups is one such goroutine, begun at
// its first cleanup after the batch starts (the runtime, patched by
// instrument/runtimehook.go, tells rt where racefingo is: cleanupBatch),
// which forks each cleanup of the batch as a child that runs on the
// cleanup goroutine: two cleanups of one batch are not ordered, as under
// Go's race detector (its suite's TestRaceBetweenCleanups), and a later
// batch's are ordered after them. Without the patch each cleanup is a
// goroutine of its own born in untraced code, as a finalizer.

// Finalizers likewise, once the runtime (patched by
// instrument/runtimehook.go) tells rt where a batch of them starts
// (racefingo's place: finalizerBatch): the batch is one goroutine born in
// untraced code at its first event, its finalizers ordered one after the
// other as on Go's finalizer goroutine, and SetFinalizer passes the
// finalizer on as it is. Without the patch each finalizer run is a
// goroutine of its own, through a reflect.MakeFunc wrapper.

// setFinalizerHook installs the runtime's finalizer batch hook; nil
// without the patched runtime.
var setFinalizerHook func(h func())

// finalizerBatches is set once the runtime calls finalizerBatch at each
// batch's start.
var finalizerBatches OwnBool

// finalizerBatch runs on the finalizer goroutine where a batch starts:
// the state of its earlier batch ends, and the batch's first event makes
// a new one, ordered after every event so far.
func finalizerBatch() { endCallbackState() }

// setCleanupHook installs the runtime's cleanup batch hook; nil without
// the patched runtime.
var setCleanupHook func(h func())

// cleanupBatches is set once the runtime calls cleanupBatch at each
// batch's start.
var cleanupBatches OwnBool

func installBatchHooks() {
	if setCleanupHook != nil {
		setCleanupHook(cleanupBatch)
		cleanupBatches.Store(true)
	}
	if setFinalizerHook != nil {
		setFinalizerHook(finalizerBatch)
		finalizerBatches.Store(true)
	}
}

// cleanupBatch runs on a cleanup goroutine where a batch of cleanups
// starts (racefingo's place): the state of its earlier batch ends, and
// the batch's first cleanup makes a new one.
func cleanupBatch() { endCallbackState() }

// cleanupSite is the site of the forks of cleanups: reports say such a
// goroutine was created by runtime.AddCleanup.
func cleanupSite() uint32 {
	cleanupSiteOnce.Do(func() {
		cleanupSiteID = RegisterFile(trace.FrameworkFile, []string{"runtime.AddCleanup"}, []uint32{0, 0, 0})
	})
	return cleanupSiteID
}

var (
	cleanupSiteOnce OwnOnce
	cleanupSiteID   uint32
)

// cleanupBegin starts a run of a cleanup: on the batch's state (made now,
// born in untraced code, at the batch's first cleanup), a child forked
// for it, which becomes the goroutine's state until cleanupEnd. Without
// the batch hook (or under the controlled scheduler) the run is a
// goroutine of its own, as a finalizer's.
func cleanupBegin() (batch *gstate, c *Child) {
	if !cleanupBatches.Load() || ctl || !live.Load() {
		endCallbackState() // an earlier run's
		return nil, nil
	}
	c = Fork(cleanupSite())
	batch = cur()
	batch.park() // it records nothing until the child ends
	Begin(c)
	return batch, c
}

// cleanupEnd ends the run cleanupBegin started: the child ends, and the
// batch's state is the goroutine's again.
func cleanupEnd(batch *gstate, c *Child) {
	if batch == nil {
		endCallbackState()
		return
	}
	End(c)
	if !batch.dead.Load() {
		install(batch)
	}
}

// SetFinalizer is runtime.SetFinalizer(obj, finalizer).
func SetFinalizer(obj, finalizer any) {
	if finalizer != nil && !finalizerBatches.Load() {
		if v := reflect.ValueOf(finalizer); v.Kind() == reflect.Func && !v.IsNil() {
			n := skipBegin() // MakeFunc's layout cache is a sync.Map: rt's, not the program's
			finalizer = reflect.MakeFunc(v.Type(), func(args []reflect.Value) []reflect.Value {
				endCallbackState() // an earlier run's
				defer endCallbackState()
				return v.Call(args)
			}).Interface()
			skipEnd(n)
		}
	}
	runtime.SetFinalizer(obj, finalizer) // its checks panic as they would
}

// AddCleanup is runtime.AddCleanup(ptr, cleanup, arg).
func AddCleanup[T, S any](ptr *T, cleanup func(S), arg S) runtime.Cleanup {
	if cleanup == nil {
		return runtime.AddCleanup(ptr, cleanup, arg) // panics as it would
	}
	return runtime.AddCleanup(ptr, func(s S) {
		batch, c := cleanupBegin()
		defer cleanupEnd(batch, c)
		cleanup(s)
		c.Ok()
	}, arg)
}

// endCallbackState ends the state of the current goroutine (the runtime's
// finalizer or cleanup goroutine) if it has one, born in untraced code, as
// a goroutine's end does: the next event makes a new one (cur). Called
// before a run (the state of an earlier run, or of other traced code the
// goroutine ran) and after it. Not under the controlled scheduler, which
// numbers goroutines born in untraced code by their goid.
func endCallbackState() {
	if ctl || !live.Load() {
		return
	}
	id := goid()
	s := gtab[id&(gtabSize-1)].Load()
	if s == nil || s.goid != id {
		defMu.Lock()
		s = gmap[id]
		defMu.Unlock()
	}
	if s != nil && s.untraced {
		s.end()
	}
}

// end is the goroutine's last event: its End, then it is forgotten.
func (s *gstate) end() {
	if live.Load() {
		s.sync(trace.OpEnd, 0, 0, 0, 0, nil)
	}
	s.samp.returned() // tp-ad: its slot goes back to the go statement's pool
	forget(s)
}
