package rt

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/trace"
)

// The hooks' entry points into controlled mode: each existing hook calls
// one of these first, as "if ctl { ctlX(...) }".

// ctlRead and ctlWrite are the points before a read or a write of size
// bytes at p.
func ctlRead(p unsafe.Pointer, size uintptr, site uint32) {
	schedAccessN(sched.KindRead, p, size, site)
}
func ctlWrite(p unsafe.Pointer, size uintptr, site uint32) {
	schedAccessN(sched.KindWrite, p, size, site)
}

func ctlSync(k sched.Kind, p unsafe.Pointer, site uint32) {
	schedPoint(k, uint64(uintptr(p)), p, site, nil)
}

// ctlBlocking is ctlSync for an operation that may block (Lock, RLock,
// WaitGroup.Wait): under control a goroutine waits at the point until the
// operation can proceed, not in it, so its block note (blockIn) covers the
// point too. One the run leaves waiting there is blocked when the trace is
// finished, as one blocked in the operation is: a leak (detect/leak).
func ctlBlocking(k sched.Kind, bk trace.BlockKind, p unsafe.Pointer, site uint32) {
	b := blockIn(nil, p, site, bk)
	ctlSync(k, p, site)
	blockOut(b)
}

func ctlLock(p unsafe.Pointer, site uint32)    { ctlBlocking(sched.KindLock, trace.BlockLock, p, site) }
func ctlUnlock(p unsafe.Pointer, site uint32)  { ctlSync(sched.KindUnlock, p, site) }
func ctlRLock(p unsafe.Pointer, site uint32)   { ctlBlocking(sched.KindRLock, trace.BlockRLock, p, site) }
func ctlRUnlock(p unsafe.Pointer, site uint32) { ctlSync(sched.KindRUnlock, p, site) }
func ctlDone(p unsafe.Pointer, site uint32)    { ctlSync(sched.KindDone, p, site) }
func ctlWait(p unsafe.Pointer, site uint32)    { ctlBlocking(sched.KindWait, trace.BlockWait, p, site) }
func ctlOnce(p unsafe.Pointer, site uint32)    { ctlSync(sched.KindOnce, p, site) }
func ctlSignal(p unsafe.Pointer, site uint32)  { ctlSync(sched.KindSignal, p, site) }
func ctlResume(site uint32)                    { schedResume(site) }

func ctlBroadcast(p unsafe.Pointer, site uint32) { ctlSync(sched.KindBroadcast, p, site) }

// ctlAtomic is the point before an atomic operation (load: an atomic
// load). At a statement of the pair it is an access point, a read for a
// load and a write otherwise: a plain access races with an atomic one
// (Go's memory model; rt records it so), and RaceFuzzer must be able to
// bring the two together.
func ctlAtomic(p unsafe.Pointer, site uint32, load bool) {
	k := sched.KindWrite
	if load {
		k = sched.KindRead
	}
	if siteOf(site).at(k) != 0 && p != nil {
		schedAccess(k, p, site) // the size is not passed: its first byte
		return
	}
	ctlSync(sched.KindAtomic, p, site)
}

// ctlTimer notes that the current goroutine started a timer.
func ctlTimer() {
	schedLock()
	if ctl {
		schedSelf().timer = true
	}
	sc.mu.Unlock()
}

// ctlCondWait is the point before c.Wait: Wait unlocks c.L (when rt knows
// the lock) and parks until a Signal or Broadcast. When c.L is a mutex rt
// knows, rt carries the Wait out itself (emulated true: the caller then
// calls ctlCondWake instead of c.Wait): it unlocks c.L before the point,
// waits for rt's signal, and takes c.L again at a Lock point. Inside
// c.Wait, every waiter a Broadcast woke would race for c.L where rt
// cannot see it, and the Go mutex, not the seed, would decide the order
// (jobsys's queue: "did not arrive", "left control (sync.Mutex.Lock)").
// Only the Signal and Broadcast of instrumented code wake such a waiter.
func ctlCondWait(c *sync.Cond, site uint32) (emulated bool) {
	lk, read := lockerObj(c.L)
	if read {
		lk = nil // a read lock's Wait is not emulated (Lock points are exclusive)
	}
	schedLock()
	if ctl {
		g := schedSelf()
		g.lock = uint64(uintptr(lk))
		emulated = lk != nil
		g.condEmu = emulated
		if emulated && g.cond == nil {
			g.cond = make(chan struct{}, 1)
		}
	}
	sc.mu.Unlock()
	ev := schedEv()
	if emulated {
		// The release is recorded while c.L is still held: once it is
		// unlocked, the goroutine chosen at the point below may take it,
		// and its acquire must follow this release in the trace.
		release(lk, false, site, nil)
		c.L.Unlock()
	}
	schedPointEv(sched.KindCondWait, uint64(uintptr(unsafe.Pointer(c))), nil, site, nil, ev, false, 0)
	return emulated
}

// ctlCondWake is the rest of an emulated c.Wait: it waits for the
// signal, rejoins at a resume point and locks c.L at a Lock point.
func ctlCondWake(c *sync.Cond, site uint32) {
	schedLock()
	g := sc.byGoid[goid()]
	sc.mu.Unlock()
	if g != nil && ctl {
		<-g.cond
		schedResume(site)
	}
	lk, _ := lockerObj(c.L) // exclusive: emulated
	ctlLock(lk, site)
	c.L.Lock()
}

// Channel operations: c is the channel (in an interface).
func ctlSend(c any, site uint32)  { schedPoint(sched.KindSend, chanAddr(c), nil, site, c) }
func ctlRecv(c any, site uint32)  { schedPoint(sched.KindRecv, chanAddr(c), nil, site, c) }
func ctlClose(c any, site uint32) { schedPoint(sched.KindClose, chanAddr(c), nil, site, c) }

// ctlSelect is the point before a select case on c (a send case if send):
// the case is noted for SelectWait, unless it is the receive's own (Recv
// calls RecvPre).
func ctlSelect(c any, site uint32, send bool) {
	schedLock()
	if ctl {
		if g := schedSelf(); !g.skipSel {
			g.sel = append(g.sel, selCase{obj: chanAddr(c), ch: c, send: send})
		}
	}
	sc.mu.Unlock()
	schedPoint(sched.KindSelect, chanAddr(c), nil, site, c)
}

// ctlSelectWait decides a select whose cases were announced: it returns
// the index of the one case that proceeds (its cases are numbered in
// order, default excluded; SelectCase leaves only that one channel), -2
// for the default, or -1 to let the select choose (the goroutine does not
// hold the token, or no case can proceed and it parks until an operation
// on one of them makes it expected, as a blocking channel operation
// does). The Go runtime would choose among ready cases with its own
// random source; here the run's seeded one does.
func ctlSelectWait(def bool) int {
	schedLock()
	g := sc.byGoid[goid()]
	if !ctl || g == nil {
		sc.mu.Unlock()
		return -1
	}
	i, behind := selectDecide(g, def)
	sc.mu.Unlock()
	if behind != nil {
		schedQueue(behind)
	}
	return i
}

// selectDecide is ctlSelectWait's decision; behind is what g, parked,
// waits for before it enters the select (schedQueue). sc.mu is held.
func selectDecide(g *sg, def bool) (int, []queued) {
	cases := g.sel
	if g.state != sRunning || len(cases) == 0 {
		g.sel = nil
		return -1, nil
	}
	var ready []int
	for i, c := range cases {
		if caseReady(c) {
			ready = append(ready, i)
		}
	}
	if len(ready) == 0 {
		if def {
			g.sel = nil
			return -2, nil
		}
		schedPark(g, 0, sched.KindSelect)
		behind := g.behind
		g.behind = nil
		schedDispatch()
		return -1, behind
	}
	i := ready[0]
	if len(ready) > 1 {
		i = ready[sc.rng.IntN(len(ready))]
	}
	g.sel = nil
	// The case proceeds as the channel operation would (a parked partner
	// is let in).
	c := cases[i]
	g.pt.Obj, g.ch = c.obj, c.ch
	schedChanOp(g, c.send)
	return i, nil
}

// caseReady reports whether a select case can proceed now. sc.mu is held.
func caseReady(c selCase) bool {
	if c.obj == 0 {
		return false // a nil channel
	}
	if sc.closed[c.obj] != nil {
		return true
	}
	v := reflect.ValueOf(c.ch)
	if c.send {
		return v.Len() < v.Cap() || len(schedParked(c.obj, sched.KindRecv)) > 0
	}
	return v.Len() > 0 || len(schedParked(c.obj, sched.KindSend)) > 0
}
