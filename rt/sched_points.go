package rt

import (
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/racekit/racekit/sched"
)

// Controlled mode (sched.go): a goroutine's way through the schedule, its
// points (an access, a sync operation), arrivals, forks, begins and ends.

// schedSelf returns the current goroutine's sg, making a root of a
// goroutine seen for the first time. sc.mu is held.
func schedSelf() *sg {
	id := goid()
	if g := sc.byGoid[id]; g != nil {
		return g
	}
	root := sc.roots
	if on && live.Load() {
		root = cur().root // the trace's numbering (sched.Names)
	}
	g := &sg{name: "g" + strconv.Itoa(root), goid: id, wake: make(chan struct{}, 1), state: sFree}
	sc.roots++
	schedAdd(g)
	return g
}

// schedAdd registers g in creation order. sc.mu is held.
func schedAdd(g *sg) {
	g.order = len(sc.all)
	sc.all = append(sc.all, g)
	if g.goid != 0 {
		sc.byGoid[g.goid] = g
	}
}

// schedAccess is schedAccessN of an access whose size is not known (the
// first byte stands for it).
func schedAccess(k sched.Kind, p unsafe.Pointer, site uint32) { schedAccessN(k, p, 0, site) }

// schedAccessN is the hook of a data access of size bytes at p: a
// scheduling point if it is an access of the pair, or when the holder
// draws a preemption. The size goes into the point: RaceFuzzer's same
// location is overlapping bytes (a struct written whole and its field).
func schedAccessN(k sched.Kind, p unsafe.Pointer, size uintptr, site uint32) {
	if p == nil {
		return
	}
	switch {
	case siteOf(site).at(k) != 0:
		schedPointEv(k, uint64(uintptr(p)), nil, site, nil, schedEv(), false, uint64(size))
	case sc.preempt > 0 && schedPreempt():
		schedPointEv(k, uint64(uintptr(p)), nil, site, nil, schedEv(), true, uint64(size))
	}
}

// schedPreempt draws whether the current goroutine, if it holds the token,
// gives it up at this access (see "Preemption").
func schedPreempt() bool {
	schedLock()
	defer sc.mu.Unlock()
	g := sc.byGoid[goid()]
	return ctl && g != nil && g.state == sRunning && sc.preRng.Float64() < sc.preempt
}

// schedPoint is a scheduling point: the current goroutine is about to
// perform k on obj at site (p: obj as a pointer, for WaitGroup and Once;
// ch: the channel of a channel operation). It returns when the goroutine
// may go on.
func schedPoint(k sched.Kind, obj uint64, p unsafe.Pointer, site uint32, ch any) {
	schedPointEv(k, obj, p, site, ch, schedEv(), false, 0)
}

// schedPointEv is schedPoint for the goroutine's positional event ev
// (sched.Point.Ev), given when the event was recorded before the point
// (ctlCondWait).
// yield marks a preemption (sched.Point.Yield); size is a data access's
// (sched.Point.Size).
func schedPointEv(k sched.Kind, obj uint64, p unsafe.Pointer, site uint32, ch any, ev int, yield bool, size uint64) {
	schedLock()
	if !ctl {
		sc.mu.Unlock()
		return
	}
	g := schedSelf()
	if k == sched.KindSelect && g.skipSel {
		// RecvPre called by Recv: the receive already was a point.
		g.skipSel = false
		sc.mu.Unlock()
		return
	}
	if k == sched.KindRecv {
		g.skipSel = true
	}
	s := siteOf(site)
	stmt := s.at(k)
	g.pt = sched.Point{G: g.name, N: g.n, Kind: k, Obj: obj, Site: s.name, Col: s.col, Size: size, Pair: stmt != 0, Stmt: stmt, Ev: ev, Yield: yield}
	g.ch, g.ptr = ch, p
	g.n++
	schedArrive(g)
	sc.mu.Unlock()
	<-g.wake
	if g.behind != nil {
		schedQueue(g.behind)
		g.behind = nil
	}
}

// queued is a goroutine parked (in its park number seq) ahead of another.
type queued struct {
	id  uint64
	seq int
}

// schedQueue waits, for at most queueWait, until the goroutines parked
// ahead are blocked in their operations, or were woken and are back at a
// point (or parked again, behind). The Go runtime wakes a channel's
// waiters in the order they blocked, and rt expects them in the order it
// parked them: two goroutines parked on one channel one right after the
// other would otherwise race into the channel's queue, and a send would
// wake the one rt did not expect ("did not arrive").
func schedQueue(ahead []queued) {
	for start := time.Now(); time.Since(start) < queueWait; time.Sleep(20 * time.Microsecond) {
		schedLock()
		var parked []uint64
		woken := false
		for _, q := range ahead {
			o := sc.byGoid[q.id]
			if o == nil || o.parkSeq != q.seq {
				continue
			}
			switch o.state {
			case sParked:
				parked = append(parked, q.id)
			case sExpected:
				woken = true // on its way back: it may not have received yet
			}
		}
		sc.mu.Unlock()
		if woken {
			continue
		}
		if len(parked) == 0 {
			return
		}
		st := goroutineStatuses()
		all := true
		for _, id := range parked {
			if s, ok := st[id]; ok && !blockedInChan(s) {
				all = false
				break
			}
		}
		if all {
			return
		}
	}
}

// blockedInChan reports whether a goroutine's status says it is blocked in
// a channel operation or a select.
func blockedInChan(st string) bool {
	return strings.HasPrefix(st, "chan ") || strings.HasPrefix(st, "select")
}

// schedEv is the position of the current goroutine's next event in the
// trace (sched.Point.Ev), -1 when not tracing.
func schedEv() int {
	if !on || !live.Load() {
		return -1
	}
	return cur().nev
}

// schedEnded tells the strategy that g ended. sc.mu is held.
func schedEnded(g *sg) {
	if e, ok := sc.strat.(sched.Ender); ok {
		e.Ended(g.name)
	}
}

// schedArrive makes g wait at its point and dispatches. sc.mu is held.
func schedArrive(g *sg) {
	if g.state == sFree && g.n > 1 {
		schedNote(sched.Note{Kind: "rejoin", Text: g.name})
	}
	if sc.running == g {
		sc.running = nil
	}
	g.state = sWaiting
	g.woken = false
	g.departed = false
	sc.stuck = time.Time{}
	schedDispatch()
}

// schedResume is the hook after an operation that may have parked the
// goroutine (a channel operation, Cond.Wait): if it left the token, it
// waits for it again at a resume point.
func schedResume(site uint32) {
	schedLock()
	if !ctl {
		sc.mu.Unlock()
		return
	}
	g := schedSelf()
	g.skipSel = false
	if g.state == sRunning {
		sc.mu.Unlock()
		return
	}
	wasCond := g.parkKind == sched.KindCondWait && g.park != 0
	lock := g.lock
	g.park, g.parkKind = 0, 0
	if wasCond && lock != 0 && !g.condEmu {
		// Cond.Wait returned holding its lock again.
		lockOf(lock).writer = g
	}
	g.condEmu = false
	g.pt = sched.Point{G: g.name, N: g.n, Kind: sched.KindResume, Site: siteOf(site).name, Ev: schedEv()}
	g.ch, g.sel = nil, nil
	g.n++
	schedArrive(g)
	sc.mu.Unlock()
	<-g.wake
}

// schedFork is the hook of a go statement: a scheduling point, after
// which the child is expected at its Begin.
func schedFork(site uint32) {
	schedPoint(sched.KindFork, 0, nil, site, nil)
	schedLock()
	defer sc.mu.Unlock()
	if !ctl {
		return
	}
	p := schedSelf()
	p.forks++
	c := &sg{name: p.name + "." + strconv.Itoa(p.forks), wake: make(chan struct{}, 1), state: sExpected, since: time.Now()}
	schedAdd(c)
	sc.pending = append(sc.pending, c)
	schedKick()
}

// schedBegin is the hook at the start of a goroutine started by an
// instrumented go statement: it claims the oldest pending child's name.
func schedBegin() {
	schedLock()
	if !ctl {
		sc.mu.Unlock()
		return
	}
	id := goid()
	var g *sg
	if len(sc.pending) > 0 && sc.byGoid[id] == nil {
		g = sc.pending[0]
		sc.pending = sc.pending[1:]
		g.goid = id
		sc.byGoid[id] = g
	} else {
		g = schedSelf()
	}
	ev := -1
	if on && live.Load() {
		ev = 0 // its Begin, next, is its first event
	}
	g.pt = sched.Point{G: g.name, N: g.n, Kind: sched.KindBegin, Ev: ev}
	g.n++
	schedArrive(g)
	sc.mu.Unlock()
	<-g.wake
}

// schedDepart is the last point of a test function, which returns into
// the testing framework after it. Until it does, what the run's other
// goroutines do next is decided by the schedule; after it, by a race with
// the process's exit (the test binary exits when its last test returns)
// and with the monitor noticing that the function is gone (goneEvery), so
// replays of one seed could differ in their last steps. So a test
// function departs only when nobody else can run (every other goroutine
// ended, blocked, or outside control), or after departCap choices: its
// point (KindEnd) is enabled only then. A departure is one legal
// interleaving (the function is slow to return), and it is a step of the
// schedule like any other. After it the goroutine is outside control; if
// the framework calls back into instrumented code (a cleanup), it rejoins
// at its next point.
func schedDepart() {
	schedLock()
	if !ctl {
		sc.mu.Unlock()
		return
	}
	g := schedSelf()
	g.pt = sched.Point{G: g.name, N: g.n, Kind: sched.KindEnd, Ev: schedEv()}
	g.ch, g.ptr = nil, nil
	g.departFrom = sc.steps
	g.n++
	schedArrive(g)
	sc.mu.Unlock()
	<-g.wake
	schedLock()
	defer sc.mu.Unlock()
	if sc.running == g {
		sc.running = nil
	}
	g.state = sFree
	g.departed = true
	schedDispatch()
}

// Depart is called by a goroutine born in untraced code that returns into
// it for good (rttest.Stop, at the end of every test function): in
// controlled mode it is the goroutine's last point (schedDepart).
func Depart() {
	if ctl {
		schedDepart()
	}
}

// schedEnd is the hook at the end of a goroutine started by an
// instrumented go statement. One that did not return normally (panicking
// is true) is most likely taking the program down with a panic: the
// schedule is flushed and nobody else is chosen for panicHold, so that
// the recorded schedule ends where the run did, the same in every replay
// (runtime.Goexit also gets here; its program goes on after the hold).
func schedEnd(panicking bool) {
	schedLock()
	defer sc.mu.Unlock()
	if !ctl {
		return
	}
	g := sc.byGoid[goid()]
	if g == nil {
		return
	}
	g.state = sDone
	schedEnded(g)
	delete(sc.byGoid, g.goid)
	if sc.running == g {
		sc.running = nil
	}
	sc.flushOut()
	if panicking {
		sc.hold = time.Now().Add(panicHold)
		schedNote(sched.Note{Kind: "panic", Text: g.name + " ended without returning"})
		schedKick()
		return
	}
	schedDispatch()
}
