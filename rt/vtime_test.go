package rt

import (
	"fmt"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/racekit/racekit/sched"
)

// controlledV is controlled with the virtual clock on (tick 10µs).
func controlledV(t *testing.T, s sched.Strategy, seed uint64, body func()) *sched.Schedule {
	t.Helper()
	vclockStart(true, 10*time.Microsecond)
	defer vclockStart(false, 0)
	return controlled(t, s, "random", seed, sched.SitePair{}, body)
}

// selectRecv2 is `select { case <-a: case <-b: [default:] }` as package
// instrument writes it; it returns the case taken (2: the default).
func selectRecv2[A, B any](a chan A, b <-chan B, def bool, site uint32) int {
	RecvPre(a, site)
	RecvPre(b, site+1)
	pick := SelectWait(def)
	a = SelectCase(a, 0, pick)
	b = SelectCase(b, 1, pick)
	if def {
		select {
		case <-a:
			RecvPost(a, site, nil)
			return 0
		case <-b:
			RecvPost(b, site+1, nil)
			return 1
		default:
			return 2
		}
	}
	select {
	case <-a:
		RecvPost(a, site, nil)
		return 0
	case <-b:
		RecvPost(b, site+1, nil)
		return 1
	}
}

// steps works n lock/unlock points.
func steps(m *sync.Mutex, n int, site uint32) {
	for i := 0; i < n; i++ {
		lockCtl(m, site)
		unlockCtl(m, site+1)
	}
}

// A select none of whose cases can proceed parks its goroutine until an
// operation on one of them: it used to block holding the token, which the
// monitor took for an escape (its rejoin depended on time, not the seed).
func TestSchedSelectParks(t *testing.T) {
	base := schedFileSites("/src/selpark.go", 8)
	for seed := uint64(0); seed < 8; seed++ {
		var got [2]int
		var sch [2]*sched.Schedule
		for k := range sch {
			sch[k] = controlled(t, sched.NewRandom(seed), "random", seed, sched.SitePair{}, func() {
				c1, c2 := make(chan int), make(chan int)
				var wg sync.WaitGroup
				var m sync.Mutex
				wg.Add(2)
				goCtl(base, &wg, func() { got[k] = selectRecv2(c1, c2, false, base+1) })
				goCtl(base, &wg, func() {
					steps(&m, 3, base+3)
					SendPreG(c2, base+5, true, nil)
					c2 <- 1
					SendPost(c2, base+5, nil)
				})
				waitCtl(&wg, base+6)
			})
			if esc := sch[k].NotesOf("escape"); len(esc) > 0 {
				t.Fatalf("seed %d: escapes %v", seed, esc)
			}
		}
		if got != [2]int{1, 1} {
			t.Errorf("seed %d: cases %v, want 1", seed, got)
		}
		if d := sched.DiffSteps(sch[0].Steps, sch[1].Steps); d != "" {
			t.Errorf("seed %d: the runs differ: %s", seed, d)
		}
	}
}

// Of several ready cases, the run's seed chooses (the Go runtime's own
// choice would make runs of one seed differ).
func TestSchedSelectChoosesBySeed(t *testing.T) {
	base := schedFileSites("/src/selseed.go", 4)
	seen := map[int]bool{}
	for seed := uint64(0); seed < 16; seed++ {
		var got [3]int
		for k := range got {
			controlled(t, sched.NewRandom(seed), "random", seed, sched.SitePair{}, func() {
				c1, c2 := make(chan int, 1), make(chan int, 1)
				c1 <- 1
				c2 <- 2
				got[k] = selectRecv2(c1, c2, true, base+1)
			})
		}
		if got[0] != got[1] || got[1] != got[2] || got[0] == 2 {
			t.Fatalf("seed %d: cases %v", seed, got)
		}
		seen[got[0]] = true
	}
	if !seen[0] || !seen[1] {
		t.Errorf("cases taken over 16 seeds: %v, want both", seen)
	}
}

// A timeout on the virtual clock: the timer fires when the strategy
// chooses it once its deadline has passed (20 steps of 10µs here), so some
// seeds time out and others see done first, each the same in every run.
func TestSchedVirtualTimer(t *testing.T) {
	base := schedFileSites("/src/vtimer.go", 10)
	outcomes := map[int]int{}
	for seed := uint64(0); seed < 24; seed++ {
		var got [2]int
		var sch [2]*sched.Schedule
		for k := range sch {
			sch[k] = controlledV(t, sched.NewRandom(seed), seed, func() {
				done := make(chan struct{})
				var wg sync.WaitGroup
				var m sync.Mutex
				wg.Add(2)
				goCtl(base, &wg, func() {
					tm := NewTimer(200*time.Microsecond, base+1)
					got[k] = selectRecv2(done, tm.C, false, base+2)
					TimerStop(tm, base+4)
				})
				goCtl(base, &wg, func() {
					steps(&m, 10, base+5)
					Close(done, base+7, true)
				})
				waitCtl(&wg, base+8)
			})
			if esc := sch[k].NotesOf("escape"); len(esc) > 0 {
				t.Fatalf("seed %d: escapes %v", seed, esc)
			}
		}
		if got[0] != got[1] {
			t.Fatalf("seed %d: cases %v", seed, got)
		}
		if d := sched.DiffSteps(sch[0].Steps, sch[1].Steps); d != "" {
			t.Fatalf("seed %d: the runs differ: %s", seed, d)
		}
		fired := false
		for _, s := range sch[0].Steps {
			fired = fired || s.G == sched.TimerG && s.Kind == sched.KindTimer
		}
		if got[0] == 1 && !fired {
			t.Errorf("seed %d: timed out without a timer step", seed)
		}
		outcomes[got[0]]++
	}
	if outcomes[0] == 0 || outcomes[1] == 0 {
		t.Errorf("outcomes over 24 seeds: %v, want both done (0) and timeout (1)", outcomes)
	}
}

// A sleeper waits on the virtual clock: when nothing else can proceed the
// clock jumps to its deadline. With the real clock (off) Sleep is no
// scheduling point.
func TestSchedVirtualSleep(t *testing.T) {
	base := schedFileSites("/src/vsleep.go", 6)
	var sch [2]*sched.Schedule
	for k := range sch {
		var order []int
		sch[k] = controlledV(t, sched.NewRandom(7), 7, func() {
			var wg sync.WaitGroup
			var m sync.Mutex
			wg.Add(2)
			goCtl(base, &wg, func() {
				Sleep(time.Hour, base+1) // an hour of virtual time, at once
				lockCtl(&m, base+2)
				order = append(order, 1)
				unlockCtl(&m, base+3)
			})
			goCtl(base, &wg, func() {
				lockCtl(&m, base+2)
				order = append(order, 2)
				unlockCtl(&m, base+3)
			})
			waitCtl(&wg, base+4)
		})
		if len(order) != 2 || order[0] != 2 {
			t.Fatalf("order %v: the sleeper went first", order)
		}
		var sleep, timer bool
		for _, s := range sch[k].Steps {
			sleep = sleep || s.Kind == sched.KindSleep
			timer = timer || s.G == sched.TimerG
		}
		if !sleep || !timer {
			t.Errorf("sleep point %v, timer step %v; want both", sleep, timer)
		}
	}
	if d := sched.DiffSteps(sch[0].Steps, sch[1].Steps); d != "" {
		t.Errorf("the runs differ: %s", d)
	}
}

// Stop and Reset on the virtual clock keep time.Timer's contract (Go
// 1.23): Stop reports whether the timer was pending, and after Stop or
// Reset no stale time is received.
func TestVirtualTimerStopReset(t *testing.T) {
	base := schedFileSites("/src/vstop.go", 6)
	var errs []string
	check := func(ok bool, what string) {
		if !ok {
			errs = append(errs, what)
		}
	}
	controlledV(t, sched.NewRandom(1), 1, func() {
		tm := NewTimer(time.Millisecond, base+1)
		check(TimerStop(tm, base+2), "Stop of a pending timer reports true")
		check(!TimerStop(tm, base+2), "a second Stop reports false")
		check(!TimerReset(tm, 10*time.Microsecond, base+3), "Reset of a stopped timer reports false")
		v := Recv(tm.C, base+4)
		check(!v.IsZero(), "the timer delivers a time")
		check(!TimerStop(tm, base+2), "Stop after it fired reports false")
		check(TimerReset(tm, time.Hour, base+3) == false, "Reset after it fired reports false")
		check(TimerStop(tm, base+2), "Stop after Reset reports true")
		check(len(tm.C) == 0, "nothing to receive after Stop")
		w := Recv(After(time.Second, base+5), base+5)
		check(w.Sub(v) >= time.Second, "After(1s) delivers a time 1s later on the virtual clock")
	})
	for _, e := range errs {
		t.Error(e)
	}
}

// Two goroutines parked on one channel one right after the other: the Go
// runtime wakes them in the order they blocked in the receive, rt expects
// them in the order it parked them. Here the first is slow to get into
// its receive; the second waits for it (schedQueue), so the send wakes the
// one rt expects (without the wait: "g0.1 did not arrive", an escape).
func TestSchedParkedQueueOrder(t *testing.T) {
	base := schedFileSites("/src/queue.go", 6)
	var first int
	prio := priority{"g0.1", "g0.2", "g0.3"}
	sch := controlled(t, prio, "random", 1, sched.SitePair{}, func() {
		c := make(chan int)
		var wg sync.WaitGroup
		wg.Add(3)
		recv := func(slow bool) func() {
			return func() {
				schedPoint(sched.KindRecv, chanAddr(c), nil, base+1, c)
				if slow {
					time.Sleep(20 * time.Millisecond)
				}
				v := <-c
				schedResume(base + 1)
				if slow {
					first = v
				}
			}
		}
		goCtl(base, &wg, recv(true))
		goCtl(base, &wg, recv(false))
		goCtl(base, &wg, func() {
			for i := 1; i <= 2; i++ {
				schedPoint(sched.KindSend, chanAddr(c), nil, base+2, c)
				c <- i
				schedResume(base + 2)
			}
		})
		waitCtl(&wg, base+3)
	})
	if esc := sch.NotesOf("escape"); len(esc) > 0 {
		t.Errorf("escapes %v", esc)
	}
	if first != 1 {
		t.Errorf("the first parked receiver got %d, want 1", first)
	}
}

// priority is a strategy that runs the first enabled goroutine it names,
// else the first enabled one.
type priority []string

func (p priority) Next(w []sched.Point) int {
	for _, name := range p {
		for i, q := range w {
			if q.G == name && q.Enabled {
				return i
			}
		}
	}
	for i, q := range w {
		if q.Enabled {
			return i
		}
	}
	return 0
}

// Waiters a Broadcast woke take the lock again at Lock points of their
// own, in the order the seed decides (inside sync.Cond.Wait they raced for
// it where rt could not see, and the runs of one seed differed).
func TestSchedCondBroadcast(t *testing.T) {
	base := schedFileSites("/src/condb.go", 8)
	for seed := uint64(0); seed < 6; seed++ {
		var sch [2]*sched.Schedule
		var order [2][]int
		for k := range sch {
			sch[k] = controlled(t, sched.NewRandom(seed), "random", seed, sched.SitePair{}, func() {
				var m sync.Mutex
				c := sync.NewCond(&m)
				ready := 0
				var wg sync.WaitGroup
				const n = 4
				wg.Add(n + 1)
				for i := 0; i < n; i++ {
					goCtl(base, &wg, func() {
						MutexLock(&m, base+1, true)
						for ready == 0 {
							CondWait(c, base+2)
						}
						order[k] = append(order[k], i)
						MutexUnlock(&m, base+3, true)
					})
				}
				goCtl(base, &wg, func() {
					for i := 0; i < 3; i++ {
						MutexLock(&m, base+1, true)
						MutexUnlock(&m, base+3, true)
					}
					MutexLock(&m, base+1, true)
					ready = 1
					CondBroadcast(c, base+4)
					MutexUnlock(&m, base+3, true)
				})
				waitCtl(&wg, base+5)
			})
			if esc := sch[k].NotesOf("escape"); len(esc) > 0 {
				t.Fatalf("seed %d: escapes %v", seed, esc)
			}
		}
		if len(order[0]) != 4 || fmt.Sprint(order[0]) != fmt.Sprint(order[1]) {
			t.Errorf("seed %d: waiters ran in orders %v and %v", seed, order[0], order[1])
		}
		if d := sched.DiffSteps(sch[0].Steps, sch[1].Steps); d != "" {
			t.Errorf("seed %d: the runs differ: %s", seed, d)
		}
	}
}

// Two goroutines range over one unbuffered channel (jobsys's sinks): each
// parks behind the other in turn. A goroutine waits for the one ahead to
// block, or to be back from its receive; waiting for it to block again
// made the two wait for each other while the sender held the token ("left
// control (chan send)"), and not waiting for a woken one let the other in
// first ("did not arrive").
func TestSchedChannelSinks(t *testing.T) {
	base := schedFileSites("/src/sinks.go", 8)
	for seed := uint64(0); seed < 30; seed++ {
		sum := 0
		sch := controlled(t, sched.NewRandom(seed), "random", seed, sched.SitePair{}, func() {
			c := make(chan int)
			var m sync.Mutex
			var wg sync.WaitGroup
			wg.Add(3)
			for k := 0; k < 2; k++ {
				goCtl(base, &wg, func() {
					for g := RecvRangeG(c, base+1, nil); ; g = RecvRangeG(c, base+1, nil) {
						v, ok := <-c
						RecvPost(c, base+1, g)
						if !ok {
							break
						}
						MutexLock(&m, base+2, true)
						sum += v
						MutexUnlock(&m, base+3, true)
					}
				})
			}
			goCtl(base, &wg, func() {
				for i := 1; i <= 20; i++ {
					SendPreG(c, base+4, true, nil)
					c <- i
					SendPost(c, base+4, nil)
				}
				Close(c, base+5, true)
			})
			waitCtl(&wg, base+6)
		})
		if e := sch.NotesOf("escape"); len(e) > 0 || sum != 210 {
			t.Errorf("seed %d: sum %d, escapes %v", seed, sum, e)
		}
	}
}

// rt keeps a closed channel (by its address), so that a new channel the
// allocator puts at a freed closed one's address does not look closed: a
// send on it was not parked and blocked with the token (jobsys's late
// client: "left control (chan send)").
func TestSchedClosedKept(t *testing.T) {
	base := schedFileSites("/src/closed.go", 2)
	var kept any
	controlled(t, sched.NewRandom(1), "random", 1, sched.SitePair{}, func() {
		c := make(chan int)
		Close(c, base+1, true)
		schedLock()
		kept = sc.closed[chanAddr(c)]
		sc.mu.Unlock()
		if kept != any(c) {
			t.Errorf("closed channel kept as %v, want the channel itself", kept)
		}
	})
}

// While RaceFuzzer postpones the only goroutine that could proceed, time
// passes: a sleeper wakes and reaches the other statement of the pair
// (rwmap's readers sleep before their lookups; without this the postponed
// insert was always released first and its race never created).
func TestSchedPostponedLetsTimePass(t *testing.T) {
	base := schedFileSites("/src/postpone.go", 6)
	pair := sched.SitePair{"postpone.go:2", "postpone.go:3"}
	if races := postponedSleeper(t, base, pair, time.Millisecond); races != 6 {
		t.Errorf("a sleep of 1ms: race created in %d of 6 runs, want all", races)
	}
	// Not beyond vPostponeMax: a goroutine held back for a minute is not
	// a schedule to report (a minute's timeout would fire).
	if races := postponedSleeper(t, base, pair, time.Minute); races != 0 {
		t.Errorf("a sleep of 1 minute: race created in %d of 6 runs, want none", races)
	}
}

// postponedSleeper runs a write at the pair's first statement and, after
// a sleep of d, a read at its second, under RaceFuzzer with seeds 1..6,
// and returns in how many runs the race was created.
func postponedSleeper(t *testing.T, base uint32, pair sched.SitePair, d time.Duration) (races int) {
	for seed := uint64(1); seed <= 6; seed++ {
		var x int
		vclockStart(true, time.Microsecond)
		sch := controlled(t, sched.NewRaceFuzzer(seed), "racefuzzer", seed, pair, func() {
			var wg sync.WaitGroup
			wg.Add(2)
			goCtl(base, &wg, func() {
				schedAccess(sched.KindWrite, unsafe.Pointer(&x), base+1)
				x = 1
			})
			goCtl(base, &wg, func() {
				Sleep(d, base+3)
				schedAccess(sched.KindRead, unsafe.Pointer(&x), base+2)
				_ = x
			})
			waitCtl(&wg, base+4)
		})
		vclockStart(false, 0)
		if len(sch.NotesOf("race")) > 0 {
			races++
		}
	}
	return races
}

// A hundred goroutines that each sleep a millisecond, after a test
// function departed (as in a test binary's second test), run without
// spending real time: when every goroutine waits for its timer, the clock
// jumps to the earliest deadline at once (issue 33.5: such a test ran
// into its timeout under control). The departed function is out of
// control, but it went back to the testing framework: no timer waits for
// it. So every sleep is a point and a timer's firing, none is a real
// sleep, no timer waits for real time, and the clock ends a millisecond
// (and a tick per step) after the start, not beyond.
func TestSchedSleepersNoRealTime(t *testing.T) {
	base := schedFileSites("/src/sleepers.go", 6)
	const n = 100
	for _, strat := range []string{"random", "racefuzzer"} {
		t.Run(strat, func(t *testing.T) {
			var s sched.Strategy = sched.NewRandom(3)
			if strat == "racefuzzer" {
				s = sched.NewRaceFuzzer(3)
			}
			sleeps := vRealSleeps.Load()
			vclockStart(true, time.Microsecond)
			defer vclockStart(false, 0)
			var now time.Duration
			var waited, fired int
			sch := controlled(t, s, strat, 3, sched.SitePair{}, func() {
				// The first test function: it departs, and stays out of
				// control.
				departed := make(chan struct{})
				go func() {
					var m sync.Mutex
					lockCtl(&m, base+5)
					unlockCtl(&m, base+5)
					Depart()
					close(departed)
				}()
				<-departed
				var wg sync.WaitGroup
				wg.Add(n)
				for i := 0; i < n; i++ {
					goCtl(base, &wg, func() { Sleep(time.Millisecond, base+1) })
				}
				waitCtl(&wg, base+2)
				sc.mu.Lock()
				now, waited, fired = sc.vc.now, sc.vc.waited, sc.vc.fired
				sc.mu.Unlock()
			})
			var sleepSteps, timerSteps int
			for _, st := range sch.Steps {
				if st.Kind == sched.KindSleep {
					sleepSteps++
				}
				if st.G == sched.TimerG {
					timerSteps++
				}
			}
			if sleepSteps != n || timerSteps != n || fired != n {
				t.Errorf("%d sleep points, %d timer steps, %d timers fired; want %d each", sleepSteps, timerSteps, fired, n)
			}
			if waited != 0 {
				t.Errorf("%d timers fired only after a real wait, want none", waited)
			}
			if d := vRealSleeps.Load() - sleeps; d != 0 {
				t.Errorf("%d sleeps in real time, want none", d)
			}
			if max := time.Millisecond + time.Duration(len(sch.Steps))*time.Microsecond; now < time.Millisecond || now > max {
				t.Errorf("virtual clock at the end %v, want from 1ms to %v (1ms and a tick per step)", now, max)
			}
			if sch.NotesOf("escape") != nil || sch.NotesOf("deadlock") != nil {
				t.Errorf("notes %v, want no escape or deadlock", sch.Notes)
			}
		})
	}
}
