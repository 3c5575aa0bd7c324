package rt

// Virtual time (controlled mode). A timer that fires in real time makes a
// run depend on the machine, not on the seed: a select waiting for it
// rejoins the schedule whenever the timer fires. So under control (except
// for clips, RACEKIT_SCHED=clip, which follow a recorded run's real
// timing, unless it was recorded on the virtual clock) the timers that
// instrumented code starts run on a virtual clock:
//
//   - time.Sleep, time.NewTimer, time.After and (*time.Timer).Stop and
//     Reset are rewritten into the hooks below;
//   - the clock advances by RACEKIT_SCHED_TICK (default 1µs) per
//     scheduling step, and jumps to the earliest deadline when no
//     goroutine can proceed, or when the strategy postpones all those
//     that can (sched.Postponer: RaceFuzzer's postponed goroutine waits,
//     and the program's sleeps and timeouts run meanwhile, up to
//     vPostponeMax: a goroutine held back for a minute would fail
//     selecttimeout's TestAnswered, whose backend has a minute). 1µs is
//     about a real step; with 10µs, cache4j's 200µs entries expired
//     while a Get was postponed, and its race on the entry was never
//     created;
//   - a timer whose deadline has passed fires when the strategy chooses
//     it: it is offered as goroutine sched.TimerG, kind timer, among the
//     waiting goroutines (the earliest pending timer only; ties in
//     creation order). Firing sends the deadline's time on the timer's
//     channel, which wakes whoever waits for it (a receive, a select, a
//     Sleep), as a send does;
//   - when nothing can proceed while goroutines run out of control (I/O,
//     untraced code), a timer that is not due yet fires after the real
//     time it would have waited (at most vGrace): they may still deliver.
//     A test function that departed (schedDepart) does not count: it
//     returned into the testing framework, which delivers nothing to the
//     program's goroutines, and every later test of the binary would
//     otherwise spend real time on each of its sleeps (a test whose
//     goroutines sleep a millisecond each, run after another test, waited
//     a monitor period or more per sleep). So when every controlled
//     goroutine waits for a timer, the clock jumps to the earliest
//     deadline at once, and no real time is spent (vclock.waited counts
//     the timers that fired only after a real wait);
//
//   - time.Now, time.Since and time.Until read the virtual clock (each
//     reading advances it by vRead, so that a loop polling the clock
//     without a scheduling point still ends): a cache's expiry or a
//     deadline check takes the same branch in every run of a seed.
//
// So the same seed fires the same timers at the same steps. The virtual
// clock has no goroutine: a virtual timer is a real one that never fires
// (vForever) whose channel rt sends on when the schedule fires it, and the
// clock moves only inside the hooks and the monitor's looks (sched.go). Tickers,
// time.Tick, context deadlines and time.AfterFunc keep real timers (a
// select after starting one leaves control, see sched.go).
//
//	RACEKIT_SCHED_TIME=real     keep real timers under control too
//	RACEKIT_SCHED_TIME=virtual  a clip too runs on the virtual clock: for a
//	                            clip of a run recorded on it (random
//	                            scheduler), whose expiries and timeouts it
//	                            must take alike; the clip's strategy fires a
//	                            timer when the goroutine it wants waits

import (
	"os"
	"time"

	"github.com/racekit/racekit/sched"
)

// vtime is true when controlled mode runs timers on the virtual clock.
// Set with ctl, before the goroutines it controls start.
var vtime bool

const (
	vForever = time.Duration(1<<63 - 1)
	vGrace   = 100 * time.Millisecond
	vRead    = 100 * time.Nanosecond
	// vPostponeMax bounds the virtual time that passes while the strategy
	// holds back every goroutine that could proceed.
	vPostponeMax = 100 * time.Millisecond
)

// vtimer is a timer on the virtual clock.
type vtimer struct {
	when    time.Duration // deadline, since vclock.base
	seq     int           // creation (or reset) order: ties fire in it
	c       chan time.Time
	site    string
	pending bool
}

// vclock is the virtual clock, under sc.mu.
type vclock struct {
	base    time.Time
	now     time.Duration
	tick    time.Duration
	seq     int
	fired   int
	pending []*vtimer
	timers  map[*time.Timer]*vtimer
	// waited counts the timers fired only after a real wait (vGrace), for
	// tests.
	waited int
}

// vRealSleeps counts the sleeps Sleep took in real time (not controlled,
// or on the real clock), for tests.
var vRealSleeps OwnInt64

// vclockStart switches the virtual clock on or off for a controlled run
// (init; tests) before the goroutines it controls start.
func vclockStart(on bool, tick time.Duration) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	vtime = on
	sc.vc = vclock{base: time.Now(), tick: tick, timers: map[*time.Timer]*vtimer{}}
}

// vclockFromEnv is vclockStart for a run of mode (RACEKIT_SCHED).
func vclockFromEnv(mode string) {
	t := os.Getenv("RACEKIT_SCHED_TIME")
	vclockStart(t == "virtual" || mode != "clip" && t != "real", envDuration("RACEKIT_SCHED_TICK", time.Microsecond))
}

// vAdd starts a virtual timer firing after d. sc.mu is held.
func vAdd(d time.Duration, site uint32) *vtimer {
	t := &vtimer{c: make(chan time.Time, 1), site: siteOf(site).name}
	vArm(t, d)
	return t
}

// vArm (re)starts t to fire after d. sc.mu is held.
func vArm(t *vtimer, d time.Duration) {
	sc.vc.seq++
	t.seq = sc.vc.seq
	t.when = sc.vc.now + max(d, 0)
	if !t.pending {
		t.pending = true
		sc.vc.pending = append(sc.vc.pending, t)
	}
}

// vDisarm stops t and drops a value it delivered that nobody received:
// after Stop or Reset returns, no stale time is received (Go 1.23's
// timers). It reports whether t was pending. sc.mu is held.
func vDisarm(t *vtimer) bool {
	was := t.pending
	if was {
		t.pending = false
		for i, p := range sc.vc.pending {
			if p == t {
				sc.vc.pending = append(sc.vc.pending[:i], sc.vc.pending[i+1:]...)
				break
			}
		}
	}
	select {
	case <-t.c:
	default:
	}
	return was
}

// vNext returns the timer to offer the strategy, or nil: the earliest
// pending one, if its deadline has passed, or if nothing else can proceed
// (and, while goroutines run out of control, once the real time it would
// wait has passed since then), or if only postponed goroutines can and it
// is due within vPostponeMax. sc.mu is held.
func vNext(anyEnabled, onlyPostponed bool) *vtimer {
	if !vtime || len(sc.vc.pending) == 0 {
		return nil
	}
	e := sc.vc.pending[0]
	for _, t := range sc.vc.pending[1:] {
		if t.when < e.when || t.when == e.when && t.seq < e.seq {
			e = t
		}
	}
	switch {
	case e.when <= sc.vc.now:
		return e
	case onlyPostponed:
		if e.when-sc.vc.now <= vPostponeMax {
			return e
		}
		return nil
	case anyEnabled:
		return nil
	}
	for _, g := range sc.all {
		if g.state == sFree && !g.departed {
			if sc.stuck.IsZero() || time.Since(sc.stuck) < min(e.when-sc.vc.now, vGrace) {
				return nil
			}
			sc.vc.waited++
			break
		}
	}
	return e
}

// vFire fires t: the clock reaches its deadline and its time is sent on
// its channel, waking the goroutine that waits for it. sc.mu is held.
func vFire(t *vtimer) {
	vDisarm(t)
	sc.vc.now = max(sc.vc.now, t.when)
	sc.vc.fired++
	select {
	case t.c <- sc.vc.base.Add(t.when):
	default:
	}
	if o := schedParked(chanAddr(t.c), sched.KindRecv); len(o) > 0 {
		schedExpect(o[0])
	}
	sc.stuck = time.Time{}
}

// vPoint is the point under which the strategy is offered t's firing.
func vPoint(t *vtimer) sched.Point {
	return sched.Point{G: sched.TimerG, N: sc.vc.fired, Kind: sched.KindTimer, Site: t.site, Ev: -1, Enabled: true}
}

// Sleep is time.Sleep(d): on the virtual clock, a scheduling point after
// which the goroutine waits for its timer.
func Sleep(d time.Duration, site uint32) {
	if !ctl || !vtime {
		vRealSleeps.Add(1)
		parkCur(nil) // not holding the writer's frontier while it sleeps
		time.Sleep(d)
		return
	}
	schedLock()
	t := vAdd(d, site)
	sc.mu.Unlock()
	schedPoint(sched.KindSleep, chanAddr(t.c), nil, site, t.c)
	if !ctl {
		return // control ended (a test): its timer will not fire
	}
	<-t.c
	schedResume(site)
}

// NewTimer is time.NewTimer(d), recording the new *time.Timer's allocation
// (a dead object's accesses at its address would otherwise carry over:
// go-quartz, corpus session 25). On the virtual clock the *time.Timer is a
// real one that never fires (so that untraced code may still stop or
// reset it), with the virtual timer's channel as C.
func NewTimer(d time.Duration, site uint32) *time.Timer {
	if !ctl || !vtime {
		TimerStart(site)
		return New(time.NewTimer(d), site)
	}
	timerEvent(site)
	tm := time.NewTimer(vForever)
	schedLock()
	t := vAdd(d, site)
	sc.vc.timers[tm] = t
	sc.mu.Unlock()
	tm.C = t.c
	return New(tm, site)
}

// After is time.After(d).
func After(d time.Duration, site uint32) <-chan time.Time {
	if !ctl || !vtime {
		TimerStart(site)
		return time.After(d)
	}
	timerEvent(site)
	schedLock()
	t := vAdd(d, site)
	sc.mu.Unlock()
	return t.c
}

// TimerStop is tm.Stop().
func TimerStop(tm *time.Timer, site uint32) bool {
	if t := vTimerOf(tm, site); t != nil {
		defer sc.mu.Unlock()
		return vDisarm(t)
	}
	return tm.Stop()
}

// TimerReset is tm.Reset(d).
func TimerReset(tm *time.Timer, d time.Duration, site uint32) bool {
	if t := vTimerOf(tm, site); t != nil {
		defer sc.mu.Unlock()
		was := vDisarm(t)
		vArm(t, d)
		return was
	}
	return tm.Reset(d)
}

// vTimerOf records a stop or reset of tm and returns tm's virtual timer
// with sc.mu held, or nil (not held) for a real timer (one started out of
// control, or by untraced code).
func vTimerOf(tm *time.Timer, site uint32) *vtimer {
	if ctl && vtime {
		schedLock()
		t := sc.vc.timers[tm]
		sc.mu.Unlock()
		if t != nil {
			timerEvent(site)
			schedLock()
			return t
		}
	}
	TimerStart(site)
	return nil
}

// Now is time.Now().
func Now() time.Time {
	if !ctl || !vtime {
		return time.Now()
	}
	schedLock()
	defer sc.mu.Unlock()
	sc.vc.now += vRead
	return sc.vc.base.Add(sc.vc.now)
}

// Since is time.Since(t).
func Since(t time.Time) time.Duration { return Now().Sub(t) }

// Until is time.Until(t).
func Until(t time.Time) time.Duration { return t.Sub(Now()) }
