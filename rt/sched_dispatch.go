package rt

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/racekit/racekit/sched"
)

// Controlled mode (sched.go): which goroutine runs next, and what an
// operation does to the others (a lock taken parks them, a send wakes a
// receiver).

func lockOf(obj uint64) *lockState {
	l := sc.locks[obj]
	if l == nil {
		l = &lockState{}
		sc.locks[obj] = l
	}
	return l
}

// enabled reports whether g can perform its pending operation without
// blocking. sc.mu is held.
func enabled(g *sg) bool {
	p := &g.pt
	switch p.Kind {
	case sched.KindLock, sched.KindRLock:
		// A Lock while readers hold the lock goes in and waits for them
		// (lockState.pending).
		if l := sc.locks[p.Obj]; l != nil {
			return l.writer == nil && l.pending == nil
		}
	case sched.KindWait:
		if g.ptr != nil && unsafe.Sizeof(sync.WaitGroup{}) == 16 {
			// WaitGroup.state: the counter in the high 32 bits.
			return int32((*OwnUint64)(g.ptr).Load()>>32) == 0
		}
	case sched.KindOnce:
		if g.ptr != nil {
			if (*OwnBool)(g.ptr).Load() {
				return true
			}
			r := sc.onces[p.Obj]
			return r == nil || r == g || r.state == sDone
		}
	}
	return true
}

// schedDispatch gives the token to the goroutine the strategy picks, if
// nobody holds it and nobody is on the way. sc.mu is held.
func schedDispatch() {
	if sc.stopping {
		// A departure ends the run: no goroutine takes another step, or
		// the program could reach its own exit before the stop's.
		return
	}
	if !sc.hold.IsZero() {
		if time.Now().Before(sc.hold) {
			return
		}
		sc.hold = time.Time{}
	}
	for sc.running == nil && sc.strat != nil {
		var w []*sg
		for _, g := range sc.all {
			switch g.state {
			case sExpected:
				return // wait for it (the monitor gives up after expectTimeout)
			case sWaiting:
				w = append(w, g)
			}
		}
		pts := make([]sched.Point, len(w))
		any := false
		for i, g := range w {
			pts[i] = g.pt
			if g.pt.Kind != sched.KindEnd {
				pts[i].Enabled = enabled(g)
				any = any || pts[i].Enabled
			}
		}
		vt := vNext(any, any && onlyPostponed(pts))
		for i, g := range w {
			if g.pt.Kind == sched.KindEnd {
				// A departure waits until no one else can run, not even
				// after a timer (schedDepart).
				pts[i].Enabled = !any && vt == nil || sc.steps-g.departFrom >= departCap
				any = any || pts[i].Enabled
			}
		}
		if vt != nil {
			// The timer takes part in the choice as one more goroutine.
			pts = append(pts, vPoint(vt))
			w = append(w, nil)
			any = true
		}
		if len(w) == 0 {
			if (vtime && len(sc.vc.pending) > 0 || allParked()) && sc.stuck.IsZero() {
				// vNext's grace counts from here; with every goroutine
				// parked and no timer, the deadlock's wait does.
				sc.stuck = time.Now()
				schedKick()
			}
			return
		}
		if !any {
			if sc.stuck.IsZero() {
				sc.stuck = time.Now()
				schedKick()
			}
			return
		}
		if wa, ok := sc.strat.(sched.Wanter); ok {
			switch schedWant(wa) {
			case wantAgain:
				continue
			case wantWait:
				return
			}
		}
		i := schedChoose(w, pts)
		g := w[i]
		sc.steps++
		sc.vc.now += sc.vc.tick
		if sc.out != nil {
			sc.out.WriteString(sched.FormatStep(pts[i]))
		}
		if n, ok := sc.strat.(sched.Noter); ok {
			for _, note := range n.Notes() {
				schedNote(note)
			}
		}
		if g == nil {
			vFire(vt)
			continue
		}
		if g.name == sc.wantName {
			sc.wantName = ""
		}
		g.state = sRunning
		g.since, g.transitFrom = time.Now(), time.Time{}
		sc.running = g
		schedEffects(g)
		schedFlushSoon()
		schedKick()
		g.wake <- struct{}{}
	}
}

// wantAction is what schedDispatch does once schedWant has looked for the
// goroutine the strategy wants next.
type wantAction uint8

const (
	wantChoose wantAction = iota // let the strategy choose now
	wantAgain                    // look at the goroutines again
	wantWait                     // return: wait for the wanted goroutine
)

// schedWant deals with the goroutine the strategy wants next
// (sched.Wanter) when it is not waiting yet: one it is told has parked,
// one that ended in untraced code, or a root still to come, waited for up
// to wantTimeout. sc.mu is held.
func schedWant(wa sched.Wanter) wantAction {
	if name := wa.Want(); name != "" && name != sc.wantName && name != sched.TimerG {
		// A root not seen yet is coming: the program's goroutines
		// that untraced code starts reach their first point at
		// times the schedule does not decide. (A child not forked
		// yet is not: its parent's fork is a point.)
		present, coming := false, !strings.Contains(name, ".")
		var known *sg
		for _, g := range sc.all {
			if g.name == name {
				known = g
				present = g.state == sWaiting
				coming = g.state == sFree || g.state == sParked
			}
		}
		if known != nil && known.state == sParked {
			if pk, ok := sc.strat.(sched.Parker); ok && pk.Parked(name) {
				return wantAgain // the step was its operation's own
			}
		}
		if !present && coming && (sc.want.IsZero() || time.Since(sc.wantCheck) >= goneEvery) {
			sc.wantCheck = time.Now()
			if id, ok := schedGone(name, known); ok {
				// It ended in untraced code without a point to say so
				// (a test function without synchronization, or one
				// that left control): its steps are done.
				schedNote(sched.Note{Kind: "gone", Text: name + " ended in untraced code"})
				if known == nil {
					known = &sg{name: name, goid: id}
					schedAdd(known)
				}
				known.state = sDone
				delete(sc.byGoid, id)
				schedEnded(known)
				sc.want = time.Time{}
				return wantAgain
			}
		}
		if !present && coming {
			if sc.want.IsZero() {
				sc.want = time.Now()
				schedKick()
			}
			if time.Since(sc.want) < wantTimeout {
				return wantWait
			}
			sc.wantName = name // waited long enough for it
		}
	}
	sc.want = time.Time{}
	return wantChoose
}

// schedChoose returns the index in w of the goroutine the strategy picks
// among pts, or of the first enabled one if it picks none that is; it
// clears the goroutines' Yield. sc.mu is held.
func schedChoose(w []*sg, pts []sched.Point) int {
	i := sc.strat.Next(pts)
	for _, o := range w {
		if o != nil {
			o.pt.Yield = false // a preemption steers one choice only
		}
	}
	if i < 0 || i >= len(w) || !pts[i].Enabled {
		for j := range pts {
			if pts[j].Enabled {
				i = j
				break
			}
		}
	}
	return i
}

// allParked reports whether the controlled goroutines are all parked in a
// channel operation or a Cond.Wait, or done, or departed into the testing
// framework (which wakes none of them): none at a point, none running
// free, at least one parked. Then none can wake another: a deadlock of
// goroutines none of which is at a point (a receive waiting for a
// Signal's waiter), which the monitor reports once it lasts. sc.mu is
// held.
func allParked() bool {
	parked := false
	for _, g := range sc.all {
		switch {
		case g.state == sParked:
			parked = true
		case g.state == sDone, g.state == sFree && g.departed:
		default:
			return false
		}
	}
	return parked
}

// onlyPostponed reports whether the strategy postpones every goroutine
// that could proceed (sched.Postponer). sc.mu is held.
func onlyPostponed(pts []sched.Point) bool {
	pp, ok := sc.strat.(sched.Postponer)
	if !ok || !vtime || len(sc.vc.pending) == 0 {
		return false
	}
	held := pp.Postponed()
	pause, _ := sc.strat.(sched.Pauser)
	for _, p := range pts {
		if p.Enabled && !slices.Contains(held, p.G) && (pause == nil || !pause.WouldPause(p)) {
			return false
		}
	}
	return true
}

// schedEffects updates what rt knows when g performs its pending
// operation; g leaves the token if the operation parks it. sc.mu is held.
func schedEffects(g *sg) {
	p := &g.pt
	switch p.Kind {
	case sched.KindLock:
		if p.Obj != 0 {
			if l := lockOf(p.Obj); l.readers > 0 {
				l.pending = g
				schedPark(g, p.Obj, sched.KindLock)
			} else {
				l.writer = g
			}
		}
	case sched.KindRLock:
		if p.Obj != 0 {
			lockOf(p.Obj).readers++
		}
	case sched.KindUnlock:
		if p.Obj != 0 {
			l := lockOf(p.Obj)
			l.writer = nil
			schedWakeCond(p.Obj)
		}
	case sched.KindRUnlock:
		if p.Obj != 0 {
			l := lockOf(p.Obj)
			if l.readers--; l.readers <= 0 && l.pending != nil {
				// The last reader left: the waiting writer has the lock.
				l.writer, l.pending = l.pending, nil
				schedExpect(l.writer)
			}
		}
	case sched.KindOnce:
		if g.ptr != nil && !(*OwnBool)(g.ptr).Load() {
			sc.onces[p.Obj] = g
		}
	case sched.KindSelect:
		if g.timer {
			// A select after starting a timer (a timeout, a poll) may wait
			// for it: it waits in real time whatever the schedule, so it
			// waits without the token, and rejoins when it returns.
			g.timer = false
			g.state = sFree
			sc.running = nil
			schedNote(sched.Note{Kind: "escape", Text: g.name + " waits at a select after starting a timer: " + p.String()})
		}
	case sched.KindSend:
		schedChanOp(g, true)
	case sched.KindRecv, sched.KindSleep:
		schedChanOp(g, false)
	case sched.KindClose:
		sc.closed[p.Obj] = g.ch
		for _, o := range schedParked(p.Obj, sched.KindRecv) {
			schedExpect(o)
		}
	case sched.KindCondWait:
		if g.lock != 0 {
			lockOf(g.lock).writer = nil
			schedWakeCond(g.lock)
		}
		schedPark(g, p.Obj, sched.KindCondWait)
	case sched.KindSignal, sched.KindBroadcast:
		for _, o := range schedParked(p.Obj, sched.KindCondWait) {
			if o.woken {
				continue
			}
			o.woken = true
			if o.condEmu {
				schedExpect(o)
				select {
				case o.cond <- struct{}{}:
				default:
				}
			} else if l := sc.locks[o.lock]; o.lock == 0 || l == nil || l.writer == nil {
				schedExpect(o)
			}
			if p.Kind == sched.KindSignal {
				break
			}
		}
	}
}

// schedWakeCond: lock was unlocked; one signalled Cond waiter on it can
// take it now and return from Wait.
func schedWakeCond(lock uint64) {
	for _, o := range sc.all {
		if o.state == sParked && o.parkKind == sched.KindCondWait && o.woken && o.lock == lock && !o.condEmu {
			schedExpect(o)
			return
		}
	}
}

// schedChanOp decides whether g's send (or receive) completes at once or
// parks g, and which parked partner it completes.
func schedChanOp(g *sg, send bool) {
	c := g.pt.Obj
	if g.ch == nil || c == 0 {
		schedPark(g, 0, g.pt.Kind) // a nil channel blocks forever
		return
	}
	v := reflect.ValueOf(g.ch)
	n, capa := v.Len(), v.Cap()
	other := sched.KindRecv
	if !send {
		other = sched.KindSend
	}
	partners := schedParked(c, other)
	switch {
	case sc.closed[c] != nil:
		// A send panics, a receive returns at once.
	case len(partners) > 0:
		// Unbuffered: the first parked partner completes with g; buffered
		// and full, a receive lets the first parked sender in.
		schedExpect(partners[0])
	case send && n < capa, !send && n > 0:
	default:
		schedPark(g, c, g.pt.Kind)
	}
}

// schedParked returns the goroutines parked on obj by kind, oldest first.
func schedParked(obj uint64, k sched.Kind) []*sg {
	var out []*sg
	for _, o := range sc.all {
		if parkedOn(o, obj, k) {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].parkSeq < out[j].parkSeq })
	return out
}

// schedQueued reports whether o, parked, waits in a queue that g, about to
// park in an operation of kind k on obj (a select: on its cases), joins
// behind it.
func schedQueued(o, g *sg, obj uint64, k sched.Kind) bool {
	if o.state != sParked || k == sched.KindCondWait {
		return false
	}
	if k == sched.KindSelect {
		for _, c := range g.sel {
			if c.obj != 0 && (parkedOn(o, c.obj, sched.KindRecv) && !c.send || parkedOn(o, c.obj, sched.KindSend) && c.send) {
				return true
			}
		}
		return false
	}
	if k == sched.KindSleep {
		return false // its own timer's channel
	}
	return obj != 0 && parkedOn(o, obj, k)
}

// parkedOn reports whether o is parked in an operation of kind k on obj:
// for KindRecv and KindSend, also in a Sleep (a receive from its timer)
// or a select with such a case.
func parkedOn(o *sg, obj uint64, k sched.Kind) bool {
	if o.state != sParked {
		return false
	}
	switch o.parkKind {
	case sched.KindSelect:
		for _, c := range o.sel {
			if c.obj == obj && c.send == (k == sched.KindSend) && (k == sched.KindSend || k == sched.KindRecv) {
				return true
			}
		}
		return false
	case sched.KindSleep:
		return k == sched.KindRecv && o.park == obj
	}
	return o.park == obj && o.parkKind == k
}

// schedPark makes g leave the token: it is about to block on obj.
func schedPark(g *sg, obj uint64, k sched.Kind) {
	g.behind = nil
	for _, o := range sc.all {
		if o != g && o.goid != 0 && schedQueued(o, g, obj, k) {
			g.behind = append(g.behind, queued{o.goid, o.parkSeq})
		}
	}
	g.state = sParked
	g.park, g.parkKind = obj, k
	sc.parkSeq++
	g.parkSeq = sc.parkSeq
	if sc.running == g {
		sc.running = nil
	}
}

// schedExpect marks a parked goroutine as coming back.
func schedExpect(o *sg) {
	o.state = sExpected
	o.since, o.transitFrom = time.Now(), time.Time{}
	schedKick()
}

// departExit is set when a departure stops the run (clipStop): Finish,
// whoever calls it first (the stop, or the program's own end: a goroutine
// that needed no further step), exits with sched.DepartedExit.
var departExit OwnBool

// exitIfDeparted exits with sched.DepartedExit, once, if a departure
// stopped the run.
func exitIfDeparted() {
	if departExit.CompareAndSwap(true, false) {
		schedExit(sched.DepartedExit)
	}
}

func schedNote(n sched.Note) {
	if sc.out != nil {
		sc.out.WriteString(sched.FormatNote(n))
		sc.flushOut()
	}
	if n.Kind == "departure" && clipStop && !sc.stopping {
		// Finish takes sc.mu (held here) to flush the schedule, then
		// exits (exitIfDeparted).
		sc.stopping = true
		departExit.Store(true)
		go Finish()
	}
}
