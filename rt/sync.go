package rt

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/trace"
)

// Hooks for package sync. Instrumented code calls them in place of the
// methods (m.Lock() becomes rt.MutexLock(&m, site)); each performs the real
// operation and records its event, releases before and acquires after.

func acquire(p unsafe.Pointer, read bool, site uint32) {
	if on {
		var f trace.Flags
		if read {
			f = trace.FlagReadLock
		}
		emit(trace.OpAcquire, f, site, ptr(p))
	}
}

// acquireLock is acquire for an exclusive lock (Mutex, RWMutex in write
// mode), taken by its hooks. A sampled run records the acquisition when
// the goroutine records its next event instead (gstate.lockPend):
// usually the Unlock of a critical section whose accesses were not
// sampled, so that the pair takes one seq reservation and one commit
// instead of two of each. The trace is as exact: while the goroutine holds the lock, no other one
// acquires or releases it, so the acquisition joins the same clock
// wherever it stands before the goroutine's next event. (Not for read
// mode, where other readers release meanwhile, nor under the controlled
// scheduler or in a full recording, whose positions count it.)
func acquireLock(p unsafe.Pointer, site uint32, g *gstate) {
	if on {
		if sampling && !ctl && live.Load() {
			if g = gOr(g); !g.lockPend.on {
				g.newEpoch(trace.OpAcquire) // the accesses after it are in a new epoch (dedup)
				g.lockPend = pendingAcquire{on: true, site: site, obj: ptr(p)}
				g.tick = 0 // the next plain event flushes it (prepSlow)
				return
			}
		}
		if live.Load() {
			gOr(g).record(trace.OpAcquire, 0, site, ptr(p), 0)
		}
	}
}

func release(p unsafe.Pointer, read bool, site uint32, g *gstate) {
	if on {
		var f trace.Flags
		if read {
			f = trace.FlagReadLock
		}
		if sampling && !ctl && live.Load() {
			gOr(g).releaseLock(f, site, ptr(p))
			return
		}
		if live.Load() {
			gOr(g).record(trace.OpRelease, f, site, ptr(p), 0)
		}
	}
}

func snd(p unsafe.Pointer, site uint32) {
	if on && p != nil {
		emitEdge(trace.OpSyncRelease, site, ptr(p))
	}
}

func rcv(p unsafe.Pointer, site uint32) {
	if on && p != nil {
		emitEdge(trace.OpSyncAcquire, site, ptr(p))
	}
}

// lockRead records the read of a lock's word that its operations make (they
// are atomic operations on it): a plain write of the lock (m =
// sync.Mutex{}) racing with them is reported. rec is the enclosing frame's
// (or loop iteration's) decision, as the access hooks take it: a sampled
// run logs an unsampled iteration's lock operations, not this read.
func lockRead(p unsafe.Pointer, site uint32, rec bool) {
	if on && rec {
		access(trace.OpRead, p, 1, site)
	}
}

// parkCur is called before an operation that may block: the current
// goroutine stops holding the writer's frontier (see gstate.park), so the
// writer need not wait for it to be stolen.
func parkCur(g *gstate) {
	if on && live.Load() {
		g = gOr(g)
		if g.lockPend.on {
			g.flushPending() // a lock it holds, before it blocks
		}
		g.park()
	}
}

// blockIn is parkCur for an operation that may block on a lock, a
// WaitGroup or a Cond: the goroutine also notes what it waits for, so that
// one still blocked there when the trace is finished is written as an
// OpBlock event (writeBlocked; detect/leak reports it). It returns the
// goroutine for blockOut (nil when not tracing).
func blockIn(g *gstate, obj unsafe.Pointer, site uint32, k trace.BlockKind) *gstate {
	if !on || !live.Load() {
		return nil
	}
	g = gOr(g)
	if g.lockPend.on {
		g.flushPending() // a lock it holds, before it blocks
	}
	g.park()
	g.blockAt.Store(uint64(site)<<8 | uint64(k))
	g.blockObj.Store(ptr(obj))
	return g
}

// blockOut notes that the operation blockIn announced returned.
func blockOut(g *gstate) {
	if g != nil {
		g.blockObj.Store(0)
	}
}

// MutexLock is m.Lock().
func MutexLock(m *sync.Mutex, site uint32, rec bool) { MutexLockG(m, site, rec, nil) }

// MutexLockG is MutexLock with the goroutine's state as EnterG returned it.
func MutexLockG(m *sync.Mutex, site uint32, rec bool, g *gstate) {
	if ctl { // controlled mode (sched.go)
		ctlLock(unsafe.Pointer(m), site)
	}
	lockRead(unsafe.Pointer(m), site, rec)
	n := skipBegin()
	if !m.TryLock() {
		b := blockIn(g, unsafe.Pointer(m), site, trace.BlockLock)
		m.Lock()
		blockOut(b)
	}
	skipEnd(n)
	acquireLock(unsafe.Pointer(m), site, g)
}

// MutexUnlock is m.Unlock().
func MutexUnlock(m *sync.Mutex, site uint32, rec bool) { MutexUnlockG(m, site, rec, nil) }

// MutexUnlockG is MutexUnlock with the goroutine's state as EnterG
// returned it.
func MutexUnlockG(m *sync.Mutex, site uint32, rec bool, g *gstate) {
	if ctl { // controlled mode (sched.go)
		ctlUnlock(unsafe.Pointer(m), site)
	}
	lockRead(unsafe.Pointer(m), site, rec)
	release(unsafe.Pointer(m), false, site, g)
	n := skipBegin()
	m.Unlock()
	skipEnd(n)
}

// MutexTryLock is m.TryLock().
func MutexTryLock(m *sync.Mutex, site uint32, rec bool) bool {
	lockRead(unsafe.Pointer(m), site, rec)
	n := skipBegin()
	ok := m.TryLock()
	skipEnd(n)
	if ok {
		acquireLock(unsafe.Pointer(m), site, nil)
	}
	return ok
}

// RWMutexLock is rw.Lock().
func RWMutexLock(rw *sync.RWMutex, site uint32, rec bool) {
	if ctl { // controlled mode (sched.go)
		ctlLock(unsafe.Pointer(rw), site)
	}
	lockRead(unsafe.Pointer(rw), site, rec)
	n := skipBegin()
	if !rw.TryLock() {
		b := blockIn(nil, unsafe.Pointer(rw), site, trace.BlockLock)
		rw.Lock()
		blockOut(b)
	}
	skipEnd(n)
	acquireLock(unsafe.Pointer(rw), site, nil)
}

// RWMutexUnlock is rw.Unlock().
func RWMutexUnlock(rw *sync.RWMutex, site uint32, rec bool) {
	if ctl { // controlled mode (sched.go)
		ctlUnlock(unsafe.Pointer(rw), site)
	}
	lockRead(unsafe.Pointer(rw), site, rec)
	release(unsafe.Pointer(rw), false, site, nil)
	n := skipBegin()
	rw.Unlock()
	skipEnd(n)
}

// RWMutexRLock is rw.RLock().
func RWMutexRLock(rw *sync.RWMutex, site uint32, rec bool) {
	if ctl { // controlled mode (sched.go)
		ctlRLock(unsafe.Pointer(rw), site)
	}
	lockRead(unsafe.Pointer(rw), site, rec)
	n := skipBegin()
	if !rw.TryRLock() {
		b := blockIn(nil, unsafe.Pointer(rw), site, trace.BlockRLock)
		rw.RLock()
		blockOut(b)
	}
	skipEnd(n)
	acquire(unsafe.Pointer(rw), true, site)
}

// RWMutexRUnlock is rw.RUnlock().
func RWMutexRUnlock(rw *sync.RWMutex, site uint32, rec bool) {
	if ctl { // controlled mode (sched.go)
		ctlRUnlock(unsafe.Pointer(rw), site)
	}
	lockRead(unsafe.Pointer(rw), site, rec)
	release(unsafe.Pointer(rw), true, site, nil)
	n := skipBegin()
	rw.RUnlock()
	skipEnd(n)
}

// RWMutexTryLock is rw.TryLock().
func RWMutexTryLock(rw *sync.RWMutex, site uint32, rec bool) bool {
	lockRead(unsafe.Pointer(rw), site, rec)
	n := skipBegin()
	ok := rw.TryLock()
	skipEnd(n)
	if ok {
		acquireLock(unsafe.Pointer(rw), site, nil)
	}
	return ok
}

// RWMutexTryRLock is rw.TryRLock().
func RWMutexTryRLock(rw *sync.RWMutex, site uint32, rec bool) bool {
	lockRead(unsafe.Pointer(rw), site, rec)
	n := skipBegin()
	ok := rw.TryRLock()
	skipEnd(n)
	if ok {
		acquire(unsafe.Pointer(rw), true, site)
	}
	return ok
}

// LockerLock is l.Lock() on a sync.Locker.
func LockerLock(l sync.Locker, site uint32) {
	p, read := lockerObj(l)
	if ctl { // controlled mode (sched.go)
		if read {
			ctlRLock(p, site)
		} else {
			ctlLock(p, site)
		}
	}
	parkCur(nil)
	if p == nil {
		l.Lock() // unknown to rt: std's hook records the mutexes it locks
		return
	}
	n := skipBegin()
	l.Lock()
	skipEnd(n)
	acquire(p, read, site)
}

// LockerUnlock is l.Unlock() on a sync.Locker.
func LockerUnlock(l sync.Locker, site uint32) {
	p, read := lockerObj(l)
	if ctl { // controlled mode (sched.go)
		if read {
			ctlRUnlock(p, site)
		} else {
			ctlUnlock(p, site)
		}
	}
	if p == nil {
		l.Unlock()
		return
	}
	release(p, read, site, nil)
	n := skipBegin()
	l.Unlock()
	skipEnd(n)
}

// WaitGroupAdd is wg.Add(delta): a decrement releases (as Done does).
func WaitGroupAdd(wg *sync.WaitGroup, delta int, site uint32, rec bool) {
	if ctl && delta < 0 {
		ctlDone(unsafe.Pointer(wg), site) // controlled mode (sched.go)
	}
	if delta < 0 {
		snd(unsafe.Pointer(wg), site)
	}
	wgCount(wg, delta, site, rec)
	wg.Add(delta)
}

// WaitGroupDone is wg.Done().
func WaitGroupDone(wg *sync.WaitGroup, site uint32, rec bool) {
	if ctl { // controlled mode (sched.go)
		ctlDone(unsafe.Pointer(wg), site)
	}
	snd(unsafe.Pointer(wg), site)
	wgCount(wg, -1, site, rec)
	wg.Done()
}

// WaitGroupWait is wg.Wait().
func WaitGroupWait(wg *sync.WaitGroup, site uint32, rec bool) {
	if ctl { // controlled mode (sched.go)
		ctlWait(unsafe.Pointer(wg), site)
	}
	wgWaiter(wg, site, rec)
	b := blockIn(nil, unsafe.Pointer(wg), site, trace.BlockWait)
	wg.Wait()
	blockOut(b)
	rcv(unsafe.Pointer(wg), site)
}

// WaitGroupGo is wg.Go(f): the goroutine it starts is forked here, so it
// is not taken for one born in untraced code.
func WaitGroupGo(wg *sync.WaitGroup, f func(), site uint32, rec bool) {
	wgCount(wg, 1, site, rec)
	wg.Add(1)
	c := Fork(site)
	go func() {
		Begin(c)
		defer End(c)
		defer WaitGroupDone(wg, site, true)
		f()
		c.Ok()
	}()
}

// OnceDo is o.Do(f): the completion of f is released, and every return
// from Do acquires it.
func OnceDo(o *sync.Once, f func(), site uint32) {
	if ctl { // controlled mode (sched.go)
		ctlOnce(unsafe.Pointer(o), site)
	}
	parkCur(nil) // Do waits for a call of f in another goroutine
	o.Do(func() {
		f()
		snd(unsafe.Pointer(o), site)
	})
	rcv(unsafe.Pointer(o), site)
}

// OnceFunc is sync.OnceFunc(f).
func OnceFunc(f func(), site uint32) func() {
	obj := NewObject()
	g := sync.OnceFunc(func() {
		f()
		if on {
			emitEdge(trace.OpSyncRelease, site, obj)
		}
	})
	return func() {
		parkCur(nil) // g waits for a call of f in another goroutine
		g()
		if on {
			emitEdge(trace.OpSyncAcquire, site, obj)
		}
	}
}

// OnceValue is sync.OnceValue(f).
func OnceValue[T any](f func() T, site uint32) func() T {
	obj := NewObject()
	g := sync.OnceValue(func() T {
		v := f()
		if on {
			emitEdge(trace.OpSyncRelease, site, obj)
		}
		return v
	})
	return func() T {
		parkCur(nil)
		v := g()
		if on {
			emitEdge(trace.OpSyncAcquire, site, obj)
		}
		return v
	}
}

// OnceValues is sync.OnceValues(f).
func OnceValues[T1, T2 any](f func() (T1, T2), site uint32) func() (T1, T2) {
	obj := NewObject()
	g := sync.OnceValues(func() (T1, T2) {
		a, b := f()
		if on {
			emitEdge(trace.OpSyncRelease, site, obj)
		}
		return a, b
	})
	return func() (T1, T2) {
		parkCur(nil)
		a, b := g()
		if on {
			emitEdge(trace.OpSyncAcquire, site, obj)
		}
		return a, b
	}
}

// CondWait is c.Wait(): Wait unlocks c.L and locks it again before it
// returns, and a Signal or Broadcast recorded before it returns is ordered
// before it.
func CondWait(c *sync.Cond, site uint32) {
	emulated := false
	if ctl { // controlled mode (sched.go)
		emulated = ctlCondWait(c, site)
	}
	l, read := lockerObj(c.L)
	if l != nil && !emulated { // (the emulation recorded it: ctlCondWait)
		release(l, read, site, nil)
	}
	b := blockIn(nil, unsafe.Pointer(c), site, trace.BlockCondWait)
	if emulated {
		ctlCondWake(c, site)
	} else {
		var n *uint32
		if l != nil {
			n = skipBegin() // c.L's unlock and lock: recorded here
		}
		c.Wait()
		skipEnd(n)
		if ctl {
			ctlResume(site) // controlled mode (sched.go)
		}
	}
	blockOut(b)
	rcv(unsafe.Pointer(c), site)
	if l != nil {
		acquire(l, read, site)
	}
}

// CondSignal is c.Signal().
func CondSignal(c *sync.Cond, site uint32) {
	if ctl { // controlled mode (sched.go)
		ctlSignal(unsafe.Pointer(c), site)
	}
	snd(unsafe.Pointer(c), site)
	c.Signal()
}

// CondBroadcast is c.Broadcast().
func CondBroadcast(c *sync.Cond, site uint32) {
	if ctl { // controlled mode (sched.go)
		ctlBroadcast(unsafe.Pointer(c), site)
	}
	snd(unsafe.Pointer(c), site)
	c.Broadcast()
}

// SyncRelease records a release of obj, an object ID from NewObject (for
// synchronization that rt models without an address, as in rttest).
func SyncRelease(obj uint64, site uint32) {
	if on {
		emitEdge(trace.OpSyncRelease, site, obj)
	}
}

// SyncAcquire records an acquire of obj.
func SyncAcquire(obj uint64, site uint32) {
	if on {
		emitEdge(trace.OpSyncAcquire, site, obj)
	}
}

// sync.Pool: as for the Go race detector, Put releases on the object put
// and the Get that returns it acquires (an object handed from one
// goroutine to another through a pool is not a race).

func anyData(x any) uint64 {
	return uint64(uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&x))[1]))
}

// PoolPut is p.Put(x).
func PoolPut(p *sync.Pool, x any, site uint32) {
	if on {
		if a := anyData(x); a != 0 {
			emitEdge(trace.OpSyncRelease, site, a)
		}
	}
	p.Put(x)
}

// PoolGet is p.Get().
func PoolGet(p *sync.Pool, site uint32) any {
	x := p.Get()
	if on {
		if a := anyData(x); a != 0 {
			emitEdge(trace.OpSyncAcquire, site, a)
		}
	}
	return x
}

// Timers and I/O. The Go race detector sees edges inside the runtime and
// the syscall package that instrumented code cannot: starting or resetting
// a timer is ordered before its firing (the send on its channel, or the
// call of its function), and every write system call before every later
// read one (syscall's ioSync). rt records them on two global objects:
// timer operations release timersObj and a receive from a channel of
// time.Time (a timer's or ticker's) acquires it; calls of I/O writes
// release ioObj and I/O reads acquire it when they return (see package
// instrument for which calls count). Both over-approximate: races may be
// missed, none invented.
//
// An in-memory pipe (io.Pipe) orders more: its Write returns only after a
// Read consumed the data, so what the reader did before that Read is
// ordered before what the writer does after. The reader's Read is often
// called through wrappers racekit does not see (an http.MaxBytesReader
// around a request body that is a pipe), so every call that may read
// releases pipeObj before it, and only io.PipeWriter.Write acquires it:
// reads stay unordered with each other (held-out module tus/tusd/v2).
var (
	timersObj = NewObject()
	ioObj     = NewObject()
	pipeObj   = NewObject()
)

// Redundant edges. A sampled run records little between a goroutine's
// synchronization events, and many of them add no happens-before edge:
// I/O-bound code releases or acquires the global ioObj on every call
// (every bufio.Writer.Write, every Scanner.Scan), and a channel pipeline
// whose stages run in bursts sends and receives with nothing sampled
// between. There rt drops them (sample.Edges is the same rule on a
// recorded trace, and says why it loses no race):
//
//   - a release after the goroutine's own release of the same object,
//     with only releases recorded between;
//   - an acquire when no release of the object was recorded since the
//     goroutine's last acquire of it;
//   - an empty critical section right after the goroutine's own release
//     of the lock, no release of it recorded since (gstate.releaseLock).
//
// A release counts after its event is committed, and an acquire loads the
// count before it records: a release whose hook ended before the acquire
// began (one really ordered before it) is never dropped from its view.
// Counts are kept per slot of a table that objects share by hash, reset
// when a trace starts, and a goroutine remembers the count of its last
// acquires of a few objects: a release of another object in the slot, or
// an object it forgot, only keeps an acquire that could have been dropped
// (so the offline rule may still drop a few acquires of a recorded trace).
// Only in a sampled run, which feeds hb, fasttrack, lockset and hybrid: a
// full recording keeps every event, since PECAN's clips and the
// controlled scheduler count synchronization events (sched.Positional).
var edgeVer [1 << edgeBits]struct {
	OwnUint64 // releases recorded of the objects in this slot
	_         [56]byte
}

const (
	edgeBits   = 10
	edgeCached = 8 // objects whose last acquire, and last release, a goroutine remembers
)

func edgeSlot(obj uint64) uint64 { return obj * 0x9E3779B97F4A7C15 >> (64 - edgeBits) }

// globalObjs are the global objects, each with the name it has in a trace
// (so that an offline sample.Edges finds them).
var globalObjs = [...]trace.Name{{Obj: ioObj, Name: sample.IOName}, {Obj: timersObj, Name: sample.TimersName}, {Obj: ctxObj, Name: sample.ContextsName}, {Obj: pipeObj, Name: sample.PipesName}, {Obj: sigObj, Name: sample.SignalsName}, {Obj: sqlObj, Name: sample.SQLDriversName}}

// edgeState is a goroutine's view of the objects it synchronizes on.
type edgeState struct {
	// Its last releases recorded of a few objects: g.written and relRecs
	// right after each. Only releases were recorded since when g.written
	// grew by as much as relRecs.
	rel     [edgeCached]struct{ obj, at, recs uint64 }
	relNext int
	relRecs uint64 // records written by releases (their events and key markers)
	// Its last exclusive release of a lock recorded, if g.written is
	// still lockAt, and the count of the lock's slot right after it.
	lockObj, lockAt, lockVer uint64
	acq                      [edgeCached]struct{ obj, ver uint64 } // its last acquires: the count then
	acqNext                  int                                   // the entry of acq to replace
}

// recordRelease records a release of g and counts its records, unless a
// lock's pending acquisition goes with it (which grows g's clock).
func (g *gstate) recordRelease(op trace.Op, f trace.Flags, site uint32, obj uint64) {
	pend := g.lockPend.on
	before := g.written
	g.record(op, f, site, obj, 0)
	if !pend {
		g.edges.relRecs += g.written - before
	}
}

// edge records op (a SyncRelease or SyncAcquire) of g on obj, unless it
// is redundant in a sampled run.
func (g *gstate) edge(op trace.Op, site uint32, obj uint64) {
	if !sampling || ctl {
		g.record(op, 0, site, obj, 0)
		return
	}
	e := &g.edges
	ver := &edgeVer[edgeSlot(obj)].OwnUint64
	if op == trace.OpSyncRelease {
		i := 0
		for i < edgeCached && e.rel[i].obj != obj {
			i++
		}
		if i < edgeCached && g.written-e.rel[i].at == e.relRecs-e.rel[i].recs && !g.lockPend.on {
			return // (a lock taken since, not yet recorded, grew g's clock)
		}
		if i == edgeCached {
			i = e.relNext
			e.relNext = (e.relNext + 1) % edgeCached
		}
		g.recordRelease(op, 0, site, obj)
		e.rel[i].obj, e.rel[i].at, e.rel[i].recs = obj, g.written, e.relRecs
		ver.Add(1)
		return
	}
	v := ver.Load()
	i := 0
	for i < edgeCached && e.acq[i].obj != obj {
		i++
	}
	switch {
	case i < edgeCached && e.acq[i].ver == v:
		return
	case i == edgeCached && v == 0:
		return // nothing in the slot released yet in this trace
	case i == edgeCached:
		i = e.acqNext
		e.acqNext = (e.acqNext + 1) % edgeCached
	}
	g.record(op, 0, site, obj, 0)
	e.acq[i].obj, e.acq[i].ver = obj, v
}

// releaseLock records g's release of the lock at obj in a sampled run,
// unless it ends a critical section that adds no edge (sample.Edges): the
// acquisition is still pending (nothing recorded since the Lock), g's
// last event recorded is its own release of the lock, and no release of
// the lock (of its slot) was recorded since. Then neither is recorded:
// the pair is a goroutine taking its lock again with no sampled access
// inside, the common case of a contended counter on few cores.
func (g *gstate) releaseLock(f trace.Flags, site uint32, obj uint64) {
	e := &g.edges
	ver := &edgeVer[edgeSlot(obj)].OwnUint64
	if f == 0 && g.lockPend.on && g.lockPend.obj == obj && e.lockObj == obj && e.lockAt == g.written && ver.Load() == e.lockVer {
		g.lockPend.on = false
		return
	}
	g.recordRelease(trace.OpRelease, f, site, obj)
	v := ver.Add(1)
	if f == 0 {
		e.lockObj, e.lockAt, e.lockVer = obj, g.written, v
	}
}

// emitEdge is edge for the current goroutine (the hooks' emit).
func emitEdge(op trace.Op, site uint32, obj uint64) {
	edgeWith(nil, op, site, obj)
}

// edgeWith records op on obj for g, the current goroutine (nil, or a
// state of an earlier trace: looked up), and returns it, so that the hook
// after a channel operation need not look it up again (SendPreG).
func edgeWith(g *gstate, op trace.Op, site uint32, obj uint64) *gstate {
	if !live.Load() {
		return nil
	}
	g = gOr(g)
	g.edge(op, site, obj)
	return g
}

// gOr is g, the current goroutine's state as a hook was handed it, or,
// when g is nil or a state of an earlier trace, the current goroutine's
// looked up.
func gOr(g *gstate) *gstate {
	if g == nil || g.traceNo != traceCount.Load() {
		return cur()
	}
	return g
}

// TimerStart is recorded before a timer or ticker is started, reset or
// stopped.
func TimerStart(site uint32) {
	if ctl {
		ctlTimer() // controlled mode (sched.go)
	}
	timerEvent(site)
}

// timerEvent records a timer's start, reset or stop (TimerStart without
// its controlled-mode part: a virtual timer, vtime.go).
func timerEvent(site uint32) {
	if on {
		emitEdge(trace.OpSyncRelease, site, timersObj)
	}
}

// TimerFired is recorded after a receive from a timer's channel.
func TimerFired(site uint32) {
	if on {
		emitEdge(trace.OpSyncAcquire, site, timersObj)
	}
}

// RecvT is Recv for a channel of time.Time.
func RecvT[C ~chan E | ~<-chan E, E any](c C, site uint32) E {
	v := Recv(c, site)
	TimerFired(site)
	return v
}

// Recv2T is Recv2 for a channel of time.Time.
func Recv2T[C ~chan E | ~<-chan E, E any](c C, site uint32) (E, bool) {
	v, ok := Recv2(c, site)
	TimerFired(site)
	return v, ok
}

// IOWrite is recorded before a call that may write to a file, pipe or
// connection.
func IOWrite(site uint32) {
	if on {
		emitEdge(trace.OpSyncRelease, site, ioObj)
	}
}

// IORead is recorded after a call that may have read from a file, pipe or
// connection.
func IORead(site uint32) {
	if on {
		emitEdge(trace.OpSyncAcquire, site, ioObj)
	}
}

// IOReadV is IORead around a call with one result: IOReadV(f(x), site).
func IOReadV[T any](v T, site uint32) T {
	IORead(site)
	return v
}

// PipeWritten is recorded after an io.PipeWriter.Write returns: it
// acquires what every read before it released (pipeObj), then ioObj.
func PipeWritten(site uint32) {
	if on {
		emitEdge(trace.OpSyncAcquire, site, pipeObj)
		emitEdge(trace.OpSyncAcquire, site, ioObj)
	}
}

// PipeWrittenV is PipeWritten around a call with one result.
func PipeWrittenV[T any](v T, site uint32) T {
	PipeWritten(site)
	return v
}

// TimerBefore is x, after recording TimerStart: instrumented code passes a
// timer call's first argument (or receiver) through it.
func TimerBefore[T any](x T, site uint32) T {
	TimerStart(site)
	return x
}

// IOBefore is x, after recording IOWrite (see TimerBefore).
func IOBefore[T any](x T, site uint32) T {
	IOWrite(site)
	return x
}

// ReadBefore is x, after releasing pipeObj: recorded before a call that
// may read (see pipeObj).
func ReadBefore[T any](x T, site uint32) T {
	if on {
		emitEdge(trace.OpSyncRelease, site, pipeObj)
	}
	return x
}

// IOReadBefore is x, after recording IOWrite and releasing pipeObj: a
// call that may write and read (io.Copy).
func IOReadBefore[T any](x T, site uint32) T {
	ReadBefore(x, site)
	IOWrite(site)
	return x
}

// IOSysWrite is IOWrite before a call whose writes are system calls it
// makes on this goroutine (instrument's ioAtSyscalls: an os.File's Write,
// fmt's Fprintf, a bufio.Writer's Flush), or a file's or connection's
// Close: where the patched packages syscall and internal/poll report them
// (iohook.go), their releases are recorded there, as -race records them
// (a Close's on the descriptor's lock, which what it makes fail
// acquires), and the call records none, which would order a write that
// made no system call (a bufio.Writer filling its buffer), or a Close,
// before every later read system call. The
// goroutine gets its state here, so that the hook records for it. Under
// the controlled scheduler the hook records nothing: the call's release.
func IOSysWrite(site uint32) {
	if !on {
		return
	}
	if sysIOSeen() && !ctl {
		if live.Load() {
			cur()
		}
		return
	}
	emitEdge(trace.OpSyncRelease, site, ioObj)
}

// IOSysRead is IORead after a call whose reads are system calls it makes
// on this goroutine (instrument's readAtSyscalls: an os.File's or a
// net.Conn's Read, a bufio.Reader's, a Decoder's Decode, an Accept):
// where the patched packages syscall and internal/poll report them
// (iohook.go), a read system call's acquire is recorded there, and a
// Close before the operation it made fail is ordered by the descriptor's
// lock, as -race records them; the call records none, which would order a
// read that made no system call (a bufio.Reader over a strings.Reader)
// after every write system call before it. Under the controlled scheduler
// the hooks record nothing: the call's acquire.
func IOSysRead(site uint32) {
	if on && !(sysIOSeen() && !ctl) {
		emitEdge(trace.OpSyncAcquire, site, ioObj)
	}
}

// IOSysReadV is IOSysRead around a call with one result.
func IOSysReadV[T any](v T, site uint32) T {
	IOSysRead(site)
	return v
}

// IOSysBefore is x, after recording IOSysWrite (see IOBefore).
func IOSysBefore[T any](x T, site uint32) T {
	IOSysWrite(site)
	return x
}

// IOReadSysBefore is IOReadBefore for a call whose writes are its system
// calls (IOSysWrite).
func IOReadSysBefore[T any](x T, site uint32) T {
	ReadBefore(x, site)
	IOSysWrite(site)
	return x
}

// A deferred I/O call runs when its function returns: IOLater and IOLaterE
// wrap its function value so that what IOBefore, ReadBefore or
// IOReadBefore record before the call, and IORead after it, are recorded
// then, not at the defer statement (a goroutine that defers a Flush, then
// writes a result its pipe's reader reads after the line). The kind's
// bits say which (IOLaterWrite, ...).
const (
	IOLaterWrite   = 1 << iota // IOWrite before
	IOLaterPipe                // pipeObj released before (ReadBefore)
	IOLaterRead                // IORead after
	IOLaterSys                 // the write's release only where rt does not see system calls (IOSysWrite)
	IOLaterSysRead             // the read's acquire only where rt does not see system calls (IOSysRead)
)

// IOLater wraps a deferred I/O call's function value of type func().
func IOLater[F ~func()](f F, site uint32, kind int) F {
	if f == nil {
		return nil // the deferred call panics as it would have
	}
	return func() {
		ioLaterBefore(site, kind)
		f()
		ioLaterAfter(site, kind)
	}
}

// IOLaterE wraps a deferred I/O call's function value of type func() error.
func IOLaterE[F ~func() error](f F, site uint32, kind int) F {
	if f == nil {
		return nil
	}
	return func() error {
		ioLaterBefore(site, kind)
		err := f()
		ioLaterAfter(site, kind)
		return err
	}
}

func ioLaterBefore(site uint32, kind int) {
	if kind&IOLaterPipe != 0 && on {
		emitEdge(trace.OpSyncRelease, site, pipeObj)
	}
	switch {
	case kind&IOLaterWrite != 0 && kind&IOLaterSys != 0:
		IOSysWrite(site)
	case kind&IOLaterWrite != 0:
		IOWrite(site)
	}
}

func ioLaterAfter(site uint32, kind int) {
	switch {
	case kind&IOLaterRead != 0 && kind&IOLaterSysRead != 0:
		IOSysRead(site)
	case kind&IOLaterRead != 0:
		IORead(site)
	}
}

// Bind is a method value of a hooked method without parameters or results
// (wg.Done handed on as a func()): its hook, bound to the receiver, so
// that the code that calls it, traced or not, records what a call would.
func Bind[T any](p *T, hook func(*T, uint32, bool), site uint32) func() {
	return func() { hook(p, site, true) }
}

// Bind0 is Bind for a hook that takes no recording flag.
func Bind0[T any](p *T, hook func(*T, uint32), site uint32) func() {
	return func() { hook(p, site) }
}

// valueTypeOp is what an operation on the atomic.Value x does to its type
// word (the generated AtomicValue hooks): a store when it stores into a
// Value never stored before (its first Store, Swap or CompareAndSwap sets
// the type), else a load.
func valueTypeOp(x *atomic.Value, stores bool) trace.Op {
	if stores && x.Load() == nil {
		return trace.OpAtomicStore
	}
	return trace.OpAtomicLoad
}
