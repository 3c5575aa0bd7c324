package rt

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/racekit/racekit/sched"
)

// Controlled mode (sched.go): the monitor that notices a run gone quiet
// (a goroutine escaped to untraced code, a deadlock), the goroutines'
// statuses it reads, and flushing the schedule.

// clipStop is RACEKIT_CLIP_STOP: a clip run ends at its first departure.
var clipStop = os.Getenv("RACEKIT_CLIP_STOP") == "1"

func schedFlushSoon() {
	if sc.out != nil && sc.out.Buffered() > 32<<10 {
		sc.flushOut()
	}
}

// schedFlush writes the schedule's buffered steps when the program ends
// (Finish): the steps of its last moments, less than a monitor period old,
// were lost with the buffer when the process exited, so a run's schedule
// looked shorter or longer than its replay's depending on how fast the
// process exited.
func schedFlush() {
	sc.mu.Lock()
	sc.flushOut()
	sc.mu.Unlock()
}

// schedSettle waits, for at most settleWait, until every goroutine rt
// parked (chosen for an operation that blocks, schedPark) is blocked in
// the Go runtime: it goes on from its point into the operation, recording
// the operation's begin, while the others run. A program that ends at once
// (a test that departs and exits) would otherwise finish the trace before
// some of them recorded what they are blocked in, and whether the run
// shows them leaked would depend on the machine, not on the seed.
func schedSettle() {
	for deadline := time.Now().Add(settleWait); time.Now().Before(deadline); time.Sleep(pollEvery) {
		sc.mu.Lock()
		var parked []uint64
		if ctl {
			for _, g := range sc.all {
				if g.state == sParked && g.goid != 0 {
					parked = append(parked, g.goid)
				}
			}
		}
		sc.mu.Unlock()
		if len(parked) == 0 {
			return
		}
		st := goroutineStatuses()
		settled := true
		for _, id := range parked {
			if s, ok := st[id]; ok && holderBusy(s) {
				settled = false
			}
		}
		if settled {
			return
		}
	}
}

// flushOut writes the schedule's buffered lines (steps are buffered;
// the monitor flushes every few milliseconds, notes are flushed at once,
// and so is everything when a goroutine ends by a panic). s.mu is held.
func (s *schedT) flushOut() {
	if s.out != nil {
		s.out.Flush()
	}
}

func schedKick() {
	if sc.monArmed || sc.mon == nil || inBubble() {
		return // due already; or a synctest bubble's fake clock (writer.go's inBubble)
	}
	sc.monArmed = true
	sc.mon.t.Reset(pollEvery)
}

// The monitor (schedMonitor) handles what time decides: a holder that
// left control, a child or partner that does not arrive, a wanted
// goroutine that does not come, a deadlock. It looks every pollEvery while
// there is something to watch, in the callback of a timer, which has a
// goroutine only while it runs; with nothing to watch it is not armed
// again until a hook kicks it (schedKick), so that it neither keeps an
// idle program alive nor shows among its goroutines (runtime.Stack,
// goleak) once the program's own are done.
type monitorTimer struct{ t *time.Timer }

// fire is one look of the monitor, then the timer again unless there is
// nothing to watch.
func (m *monitorTimer) fire() {
	sc.mu.Lock()
	if sc.mon != m || !ctl {
		sc.mu.Unlock() // schedStop, or a later schedStart
		return
	}
	schedMonitor()
	sc.mu.Unlock()
}

// schedMonitor is one look of the monitor; it arms the timer again or, with
// nothing to watch, leaves it to schedKick. sc.mu is held.
func schedMonitor() {
	now := time.Now()
	if now.Sub(sc.monFlushed) > 20*time.Millisecond {
		sc.flushOut()
		sc.monFlushed = now
	}
	if g := sc.running; g != nil && now.Sub(g.since) > sc.escape {
		if schedArriving.Load() > 0 {
			g.since = now // someone (the holder, most likely) waits for sc.mu on its way into a point
		} else if st := holderStatus(g.goid); holderBusy(st) {
			g.since = now // still working: keep the token
		} else if st != "" && schedArriving.Load() > 0 {
			// It reached its next point while the stack was read (slow
			// on a loaded machine) and waits for sc.mu, which the
			// monitor holds: arriving, not blocked where rt cannot see.
			g.since = now
		} else if st != "" && inTransit(g, now, partnerOnWay(g)) {
			// Blocked in a channel operation, say, whose partner rt has
			// let go (parked in it) but the Go scheduler has not yet run
			// there: on a loaded machine that takes longer than the
			// escape time ("g0.3 left control (chan send)" in CI).
			g.since = now
		} else if st == "" {
			// It returned into untraced code and ended (a test function
			// returning to the testing framework): nothing to replay.
			schedNote(sched.Note{Kind: "gone", Text: fmt.Sprintf("%s ended in untraced code after %s", g.name, g.pt)})
			g.state = sDone
			schedEnded(g)
			delete(sc.byGoid, g.goid)
			sc.running = nil
		} else {
			schedNote(sched.Note{Kind: "escape", Text: fmt.Sprintf("%s left control (%s) after %s", g.name, st, g.pt)})
			g.state = sFree
			sc.running = nil
		}
	}
	var statuses map[uint64]string // read once, when one is overdue
	for _, g := range sc.all {
		if g.state == sExpected && now.Sub(g.since) > expectTimeout {
			if g.goid != 0 {
				if statuses == nil {
					statuses = goroutineStatuses()
				}
				if inTransit(g, now, holderBusy(statuses[g.goid])) {
					continue // runnable: on its way, late on a loaded machine
				}
			}
			schedNote(sched.Note{Kind: "escape", Text: g.name + " did not arrive"})
			g.state = sFree
			if len(sc.pending) > 0 && sc.pending[0] == g {
				sc.pending = sc.pending[1:]
			}
		}
	}
	schedDispatch()
	if !sc.stuck.IsZero() && now.Sub(sc.stuck) > sc.deadlock {
		schedDeadlock()
		return // (a test's schedExit returns): monArmed stays, no more looks
	}
	idle := sc.running == nil && sc.stuck.IsZero() && sc.want.IsZero() && sc.hold.IsZero()
	for _, g := range sc.all {
		idle = idle && g.state != sExpected
	}
	if idle {
		sc.flushOut()
		sc.monArmed = false
		return
	}
	sc.mon.t.Reset(pollEvery)
}

// schedGone reports whether the goroutine the strategy wants has ended
// where rt could not see it, and its goid: a root (born in untraced code)
// that ended before its first scheduling point, or one out of control
// (known, state sFree) that returned into untraced code. Roots are known
// by their trace numbering, so only a traced run can tell. sc.mu is held.
func schedGone(name string, known *sg) (uint64, bool) {
	var id uint64
	switch {
	case known != nil:
		if known.state != sFree || known.goid == 0 {
			return 0, false
		}
		id = known.goid
	case on && live.Load():
		k, err := strconv.Atoi(strings.TrimPrefix(name, "g"))
		if err != nil || !strings.HasPrefix(name, "g") {
			return 0, false
		}
		defMu.Lock()
		if k >= 0 && k < len(rootGoids) {
			id = rootGoids[k]
		}
		defMu.Unlock()
		if id == 0 {
			return 0, false // not born yet
		}
	default:
		return 0, false
	}
	return id, goroutineStatus(id) == ""
}

// schedArriving counts the program goroutines waiting for sc.mu in
// schedLock (on their way into a point, a fork, a start or an end). The
// monitor holds sc.mu while it reads the holder's status (a
// runtime.Stack of all goroutines, slow on a loaded machine), so a holder
// that reaches its next point meanwhile shows as blocked on a mutex: it
// has not left control, it is arriving.
var schedArriving OwnInt32

// schedLock locks sc.mu on a program goroutine's way into the scheduler
// (a point, a fork, a goroutine's start or end, ...), counted in
// schedArriving.
func schedLock() {
	schedArriving.Add(1)
	sc.mu.Lock()
	schedArriving.Add(-1)
}

// holderBusy reports whether the holder's status in the Go runtime says it
// is still on its way to its next point: running, runnable, preempted, or
// held up by the garbage collector (not blocked where rt cannot see).
func holderBusy(st string) bool {
	switch st {
	case "running", "runnable", "preempted":
		return true
	}
	return strings.HasPrefix(st, "GC ")
}

// transitCap bounds how long the monitor waits, past its escape and expect
// timeouts, for a goroutine the Go runtime shows runnable or running, on
// its way to where rt expects it: long enough for a loaded machine's
// scheduler, short enough that a goroutine that never gets there is let go.
const transitCap = time.Second

// inTransit reports whether the monitor should wait longer for g because
// onWay (g, or the partner it waits for, is runnable or running), for at
// most transitCap since it first did so after g was chosen or expected.
func inTransit(g *sg, now time.Time, onWay bool) bool {
	if !onWay {
		return false
	}
	if g.transitFrom.IsZero() {
		g.transitFrom = now
	}
	return now.Sub(g.transitFrom) < transitCap
}

// partnerOnWay reports whether a goroutine other than the holder g that is
// parked in an operation or expected at a point (one rt let go towards the
// operation g may be blocked in) is runnable or running in the Go runtime,
// or whether, while the stacks were read, someone reached the scheduler's
// lock on the way into a point (the partner, or the holder, whose
// operation completed: the next look sees it arriving).
func partnerOnWay(g *sg) bool {
	st := goroutineStatuses()
	if schedArriving.Load() > 0 {
		return true
	}
	for _, o := range sc.all {
		if o != g && o.goid != 0 && (o.state == sParked || o.state == sExpected) && holderBusy(st[o.goid]) {
			return true
		}
	}
	return false
}

// holderStatus is goroutineStatus for the monitor's look at the holder
// (a test makes the holder arrive while it looks).
var holderStatus = goroutineStatus

// goroutineStatuses returns the Go runtime's status of every goroutine,
// by goid.
func goroutineStatuses() map[uint64]string {
	m := map[uint64]string{}
	for _, line := range strings.Split(string(allStacks()), "\n") {
		rest, ok := strings.CutPrefix(line, "goroutine ")
		if !ok {
			continue
		}
		i := strings.Index(rest, " [")
		if i < 0 {
			continue
		}
		id, err := strconv.ParseUint(rest[:i], 10, 64)
		if err != nil {
			continue
		}
		st := rest[i+2:]
		if j := strings.IndexAny(st, ",]"); j >= 0 {
			st = st[:j]
		}
		m[id] = st
	}
	return m
}

// allStacks is runtime.Stack of all goroutines.
func allStacks() []byte {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		if len(buf) >= 64<<20 {
			return buf
		}
		buf = make([]byte, 2*len(buf))
	}
}

// goroutineStatus returns the Go runtime's status of goroutine id ("running",
// "chan receive", ...), "" if it does not exist.
func goroutineStatus(id uint64) string {
	return goroutineStatuses()[id]
}

// schedDeadlock reports a deadlock (Algorithm 1, line 31) and exits with
// status 3. sc.mu is held.
func schedDeadlock() {
	var b strings.Builder
	b.WriteString("racekit: deadlock: no goroutine can proceed\n")
	for _, g := range sc.all {
		switch g.state {
		case sWaiting:
			fmt.Fprintf(&b, "\t%s blocked at %s\n", g.name, g.pt)
			schedNote(sched.Note{Kind: "deadlock", Text: g.pt.String()})
		case sParked:
			fmt.Fprintf(&b, "\t%s parked in %s\n", g.name, g.pt)
			schedNote(sched.Note{Kind: "deadlock", Text: g.pt.String() + " (parked)"})
		}
	}
	sc.flushOut()
	os.Stderr.WriteString(b.String())
	schedExit(3)
}

// schedExit is os.Exit (tests replace it).
var schedExit = os.Exit
