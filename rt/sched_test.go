package rt

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/trace"
)

// These tests run real goroutines under the controlled scheduler, calling
// its hooks (schedPoint, schedFork, ...) where instrumented code calls rt's
// hooks. Go's race detector (go test -race) checks that the token really
// orders the goroutines: the programs race on purpose, in Go terms, on x
// and z, and only the token's handoffs order them.

// schedFileSites registers a file of n lines, one site per line, and
// returns the site of line l as base+l-1.
func schedFileSites(file string, n int) uint32 {
	var sites []uint32
	for l := 1; l <= n; l++ {
		sites = append(sites, uint32(l), 1, 0)
	}
	return schedFile(file, sites, 0)
}

// controlled runs body as the root goroutine under strategy s and returns
// the recorded schedule.
func controlled(t *testing.T, s sched.Strategy, mode string, seed uint64, pair sched.SitePair, body func()) *sched.Schedule {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sched.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	schedStart(s, mode, seed, pair, f, 50*time.Millisecond, 5*time.Second)
	done := make(chan struct{})
	go func() {
		defer close(done)
		body()
		schedEnd(false)
	}()
	<-done
	schedStop()
	f.Close()
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sch, err := sched.ReadSchedule(r, path)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// goCtl starts f as a child under control, as an instrumented go
// statement does; wg is Done when it ends.
func goCtl(site uint32, wg *sync.WaitGroup, f func()) {
	schedFork(site)
	go func() {
		schedBegin()
		defer schedEnd(false)
		f()
		schedPoint(sched.KindDone, uint64(uintptr(unsafe.Pointer(wg))), nil, site, nil)
		wg.Done()
	}()
}

func lockCtl(m *sync.Mutex, site uint32) {
	schedPoint(sched.KindLock, uint64(uintptr(unsafe.Pointer(m))), nil, site, nil)
	m.Lock()
}

func unlockCtl(m *sync.Mutex, site uint32) {
	schedPoint(sched.KindUnlock, uint64(uintptr(unsafe.Pointer(m))), nil, site, nil)
	m.Unlock()
}

func waitCtl(wg *sync.WaitGroup, site uint32) {
	schedPoint(sched.KindWait, uint64(uintptr(unsafe.Pointer(wg))), unsafe.Pointer(wg), site, nil)
	wg.Wait()
}

// figure1 is the program of Figure 1 (RaceFuzzer paper); it returns which
// ERRORs were reached.
func figure1(base uint32) (err1, err2 bool) {
	s := func(line int) uint32 { return base + uint32(line) - 1 }
	var x, y, z int
	var L sync.Mutex
	var wg sync.WaitGroup
	wg.Add(2)
	goCtl(s(1), &wg, func() {
		schedAccess(sched.KindWrite, unsafe.Pointer(&x), s(1))
		x = 1
		lockCtl(&L, s(2))
		schedAccess(sched.KindWrite, unsafe.Pointer(&y), s(3))
		y = 1
		unlockCtl(&L, s(4))
		schedAccess(sched.KindRead, unsafe.Pointer(&z), s(5))
		if z == 1 {
			err1 = true
		}
	})
	goCtl(s(7), &wg, func() {
		schedAccess(sched.KindWrite, unsafe.Pointer(&z), s(7))
		z = 1
		lockCtl(&L, s(8))
		schedAccess(sched.KindRead, unsafe.Pointer(&y), s(9))
		if y == 1 {
			schedAccess(sched.KindRead, unsafe.Pointer(&x), s(10))
			if x != 1 {
				err2 = true
			}
		}
		unlockCtl(&L, s(14))
	})
	waitCtl(&wg, s(14))
	return
}

func TestSchedFigure1(t *testing.T) {
	base := schedFileSites("/src/fig1.go", 14)
	runs := 40
	if testing.Short() {
		runs = 16
	}
	created, errs := 0, 0
	for seed := uint64(0); seed < uint64(runs); seed++ {
		var e1, e2 bool
		sch := controlled(t, sched.NewRaceFuzzer(seed), "racefuzzer", seed, sched.SitePair{"fig1.go:5", "fig1.go:7"}, func() { e1, e2 = figure1(base) })
		races := sch.NotesOf("race")
		if len(races) > 0 {
			created++
			if !strings.Contains(races[0], "fig1.go:5") || !strings.Contains(races[0], "fig1.go:7") {
				t.Errorf("seed %d: race %q", seed, races[0])
			}
			// "FIRST | SECOND": 7 first reaches ERROR1.
			if first7 := strings.Contains(strings.Split(races[0], "|")[0], "fig1.go:7"); first7 != e1 {
				t.Errorf("seed %d: ERROR1 %v, race %q", seed, e1, races[0])
			}
		}
		if e1 {
			errs++
		}
		if e2 {
			t.Errorf("seed %d: ERROR2 reached", seed)
		}
		if esc := sch.NotesOf("escape"); len(esc) > 0 {
			t.Errorf("seed %d: escapes %v", seed, esc)
		}
	}
	t.Logf("race (5,7) created in %d of %d runs, ERROR1 in %d", created, runs, errs)
	if created != runs {
		t.Errorf("race (5,7) created in %d of %d runs", created, runs)
	}
	if errs < runs/4 || errs > runs*3/4 {
		t.Errorf("ERROR1 in %d of %d runs, want about half", errs, runs)
	}
	// The pair (1,10) is never created.
	for seed := uint64(0); seed < 10; seed++ {
		sch := controlled(t, sched.NewRaceFuzzer(seed), "racefuzzer", seed, sched.SitePair{"fig1.go:1", "fig1.go:10"}, func() { figure1(base) })
		if r := sch.NotesOf("race"); len(r) > 0 {
			t.Errorf("seed %d: false race created: %v", seed, r)
		}
	}
}

// TestSchedReplaySameSchedule: the same seed gives the same schedule, step
// for step, and the Replay strategy follows a recorded one.
func TestSchedReplaySameSchedule(t *testing.T) {
	base := schedFileSites("/src/fig1b.go", 14)
	pair := sched.SitePair{"fig1b.go:5", "fig1b.go:7"}
	for seed := uint64(0); seed < 4; seed++ {
		first := controlled(t, sched.NewRaceFuzzer(seed), "racefuzzer", seed, pair, func() { figure1(base) })
		for i := 0; i < 3; i++ {
			again := controlled(t, sched.NewRaceFuzzer(seed), "racefuzzer", seed, pair, func() { figure1(base) })
			if !sameSteps(first.Steps, again.Steps) {
				t.Fatalf("seed %d: run %d differs:\n%v\n%v", seed, i, first.Steps, again.Steps)
			}
		}
		rp := sched.NewReplay(first.Steps)
		re := controlled(t, rp, "replay", 0, pair, func() { figure1(base) })
		if !sameSteps(first.Steps, re.Steps) || rp.Diverged() {
			t.Fatalf("seed %d: replay differs (%v):\n%v\n%v", seed, re.NotesOf("divergence"), first.Steps, re.Steps)
		}
	}
}

func sameSteps(a, b []sched.Step) bool { return sched.DiffSteps(a, b) == "" }

// TestSchedChannels: unbuffered and buffered channels, where the chosen
// goroutine parks and its partner brings it back; names follow creation
// order; no escape is needed.
func TestSchedChannels(t *testing.T) {
	base := schedFileSites("/src/chan.go", 10)
	for seed := uint64(0); seed < 20; seed++ {
		var sum int
		sch := controlled(t, sched.NewRandom(seed), "random", seed, sched.SitePair{}, func() {
			c := make(chan int)
			b := make(chan int, 1)
			var wg sync.WaitGroup
			wg.Add(2)
			goCtl(base, &wg, func() {
				for i := 1; i <= 3; i++ {
					schedPoint(sched.KindSend, chanAddr(c), nil, base+1, c)
					c <- i
					schedResume(base + 1)
				}
				schedPoint(sched.KindClose, chanAddr(c), nil, base+2, c)
				close(c)
			})
			goCtl(base, &wg, func() {
				for {
					schedPoint(sched.KindRecv, chanAddr(c), nil, base+3, c)
					v, ok := <-c
					schedResume(base + 3)
					if !ok {
						break
					}
					schedPoint(sched.KindSend, chanAddr(b), nil, base+4, b)
					b <- v
					schedResume(base + 4)
					schedPoint(sched.KindRecv, chanAddr(b), nil, base+5, b)
					sum += <-b
					schedResume(base + 5)
				}
			})
			waitCtl(&wg, base+6)
		})
		if sum != 6 {
			t.Fatalf("seed %d: sum %d", seed, sum)
		}
		if esc := sch.NotesOf("escape"); len(esc) > 0 {
			t.Errorf("seed %d: escapes %v", seed, esc)
		}
		names := map[string]bool{}
		for _, s := range sch.Steps {
			names[s.G] = true
		}
		if !names["g0"] || !names["g0.1"] || !names["g0.2"] || len(names) != 3 {
			t.Errorf("seed %d: goroutines %v", seed, names)
		}
	}
}

// TestSchedEscape: a goroutine that sleeps (blocked where rt cannot see)
// leaves control, and the others run meanwhile.
func TestSchedEscape(t *testing.T) {
	base := schedFileSites("/src/esc.go", 4)
	sch := controlled(t, sched.NewRandom(1), "random", 1, sched.SitePair{}, func() {
		var wg sync.WaitGroup
		wg.Add(2)
		var m sync.Mutex
		goCtl(base, &wg, func() {
			lockCtl(&m, base+1)
			unlockCtl(&m, base+1)
			time.Sleep(300 * time.Millisecond)
			lockCtl(&m, base+1)
			unlockCtl(&m, base+1)
		})
		goCtl(base, &wg, func() {
			lockCtl(&m, base+2)
			unlockCtl(&m, base+2)
		})
		waitCtl(&wg, base+3)
	})
	if len(sch.NotesOf("escape")) == 0 {
		t.Errorf("no escape noted: %v", sch.Notes)
	}
}

// A holder that reaches its next point while the monitor holds sc.mu
// (reading every goroutine's stack, slow on a loaded machine) waits for
// sc.mu: the Go runtime shows it blocked on a mutex, but it has not left
// control. Here a goroutine holds sc.mu for 150 ms while the holder works
// past the escape delay (50 ms) and arrives; the monitor, waiting for
// sc.mu longer than the holder, gets it first (Go's mutex hands off to the
// longest waiter) and must not take the holder for escaped.
func TestSchedArrivingIsNotEscape(t *testing.T) {
	base := schedFileSites("/src/arrive.go", 4)
	sch := controlled(t, sched.NewRandom(1), "random", 1, sched.SitePair{}, func() {
		var wg sync.WaitGroup
		wg.Add(1)
		var m sync.Mutex
		goCtl(base, &wg, func() {
			lockCtl(&m, base+1)
			held := make(chan struct{})
			go func() {
				sc.mu.Lock()
				close(held)
				time.Sleep(150 * time.Millisecond)
				sc.mu.Unlock()
			}()
			<-held
			for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
			}
			unlockCtl(&m, base+2)
		})
		waitCtl(&wg, base+3)
	})
	if e := sch.NotesOf("escape"); len(e) > 0 {
		t.Errorf("a holder arriving at a point was taken for escaped: %v", e)
	}
}

// The holder may reach its next point while the monitor reads the stacks
// (with sc.mu held): it then shows as blocked in sync.Mutex.Lock, and was
// let out of control ("left control (sync.Mutex.Lock)" in buggyprogram's
// runs on a loaded machine), so its replays differed. Here the status
// reader makes the holder arrive while it looks.
func TestSchedArrivingDuringStatusIsNotEscape(t *testing.T) {
	base := schedFileSites("/src/arrive2.go", 4)
	proceed := make(chan struct{})
	var once sync.Once
	holderStatus = func(id uint64) string {
		st := "sync.Mutex.Lock"
		once.Do(func() {
			close(proceed)
			for schedArriving.Load() == 0 {
				runtime.Gosched()
			}
		})
		return st
	}
	defer func() { holderStatus = goroutineStatus }()
	sch := controlled(t, sched.NewRandom(1), "random", 1, sched.SitePair{}, func() {
		var wg sync.WaitGroup
		wg.Add(1)
		var m sync.Mutex
		goCtl(base, &wg, func() {
			lockCtl(&m, base+1)
			<-proceed // holds the token until the monitor looks
			unlockCtl(&m, base+2)
		})
		waitCtl(&wg, base+3)
	})
	if e := sch.NotesOf("escape"); len(e) > 0 {
		t.Errorf("a holder arriving while its status was read was taken for escaped: %v", e)
	}
}

// A holder blocked in a channel operation whose partner rt has let go
// (parked in it) but which has not reached the operation yet has not left
// control: on a loaded machine the Go scheduler ran the receiver after the
// escape time ("g0.3 left control (chan send)", TestSchedChannelSinks in
// CI). Here the receiver spins for three escape times between its point
// and its receive; in either order of the two goroutines (the seeds) no
// goroutine may be taken for escaped.
func TestSchedPartnerInTransitIsNotEscape(t *testing.T) {
	base := schedFileSites("/src/transit.go", 4)
	for seed := uint64(0); seed < 4; seed++ {
		got := 0
		sch := controlled(t, sched.NewRandom(seed), "random", seed, sched.SitePair{}, func() {
			c := make(chan int)
			var wg sync.WaitGroup
			wg.Add(2)
			goCtl(base, &wg, func() {
				g := RecvRangeG(c, base+1, nil)
				for start := time.Now(); time.Since(start) < 150*time.Millisecond; {
				}
				got = <-c
				RecvPost(c, base+1, g)
			})
			goCtl(base, &wg, func() {
				SendPreG(c, base+2, true, nil)
				c <- 1
				SendPost(c, base+2, nil)
			})
			waitCtl(&wg, base+3)
		})
		if e := sch.NotesOf("escape"); len(e) > 0 || got != 1 {
			t.Errorf("seed %d: got %d, escapes %v", seed, got, e)
		}
	}
}

// Finish (the program's exit: rt.Exit in the generated TestMain) writes
// the schedule's buffered steps: the last steps, younger than the
// monitor's flush period, were lost when the process exited at once, so a
// run and its replay had schedules of different lengths.
func TestSchedFinishFlushes(t *testing.T) {
	base := schedFileSites("/src/finish.go", 4)
	path := filepath.Join(t.TempDir(), "sched.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	schedStart(sched.NewRandom(1), "random", 1, sched.SitePair{}, f, 50*time.Millisecond, 5*time.Second)
	defer schedStop()
	const n = 20
	done := make(chan struct{})
	go func() {
		defer close(done)
		var m sync.Mutex
		for i := 0; i < n; i++ {
			lockCtl(&m, base+1)
			unlockCtl(&m, base+2)
		}
	}()
	<-done
	Finish()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sch, err := sched.ReadSchedule(bytes.NewReader(data), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(sch.Steps) < 2*n {
		t.Errorf("after Finish the schedule file has %d steps, want at least %d", len(sch.Steps), 2*n)
	}
}

// With RACEKIT_CLIP_STOP a clip run ends at its first departure, with
// the departure in its schedule and exit status sched.DepartedExit: here
// the run records no trace, so the clip's positions are unknown.
func TestSchedClipStop(t *testing.T) {
	base := schedFileSites("/src/stop.go", 2)
	exited := make(chan int, 1)
	schedExit = func(code int) { exited <- code }
	clipStop = true
	defer func() { schedExit, clipStop = os.Exit, false }()
	path := filepath.Join(t.TempDir(), "s.txt")
	f, _ := os.Create(path)
	defer f.Close()
	c := sched.NewClip([]sched.ClipStep{{G: "g0", Ev: 1}}, 1)
	schedStart(c, "clip", 1, sched.SitePair{}, f, 50*time.Millisecond, time.Second)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		goCtl(base, &wg, func() {})
		waitCtl(&wg, base+1)
	}()
	select {
	case code := <-exited:
		if code != sched.DepartedExit {
			t.Errorf("exit status %d, want %d", code, sched.DepartedExit)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not stop at its departure")
	}
	schedStop()
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "note\tdeparture\t") {
		t.Errorf("no departure in the schedule:\n%s", data)
	}
}

// TestSchedDeadlock: a lock-order deadlock is reported with each
// goroutine's blocked operation.
func TestSchedDeadlock(t *testing.T) {
	base := schedFileSites("/src/dl.go", 4)
	var a, b sync.Mutex
	var wg sync.WaitGroup
	wg.Add(2)
	// A seed whose random schedule deadlocks.
	data := deadlockRun(t, sched.NewRandom(3), 3, func() {
		goCtl(base, &wg, func() {
			lockCtl(&a, base+1)
			lockCtl(&b, base+1)
		})
		goCtl(base, &wg, func() {
			lockCtl(&b, base+2)
			lockCtl(&a, base+2)
		})
		waitCtl(&wg, base+3)
	})
	// The Wait, and one or two Locks (a goroutine that took both locks
	// ended holding them).
	if n := strings.Count(data, "note\tdeadlock\t"); n < 2 || !strings.Contains(data, " lock ") || !strings.Contains(data, " wait ") {
		t.Errorf("want the Wait and the Locks as deadlock notes, got:\n%s", data)
	}
}

// TestSchedAllParkedDeadlock: goroutines that are all parked inside
// channel operations (none waiting at a point: a receive waiting for a
// send that never comes, as after a lost Cond wakeup) are a deadlock too,
// reported with each parked operation, not left to hang until the test's
// time limit.
func TestSchedAllParkedDeadlock(t *testing.T) {
	base := schedFileSites("/src/parked.go", 3)
	never, done := make(chan int), make(chan int)
	var wg sync.WaitGroup
	wg.Add(1)
	data := deadlockRun(t, sched.NewRandom(1), 1, func() {
		goCtl(base, &wg, func() {
			ctlRecv(never, base+1)
			<-never
		})
		ctlRecv(done, base+2)
		<-done
	})
	if n := strings.Count(data, "note\tdeadlock\t"); n != 2 || strings.Count(data, " recv ") < 2 || !strings.Contains(data, "(parked)") {
		t.Errorf("want both parked receives as deadlock notes, got:\n%s", data)
	}
}

// lastEnabled is a strategy that always runs the goroutine created last
// among those that can proceed: a fixed schedule for the tests below.
type lastEnabled struct{}

func (lastEnabled) Next(w []sched.Point) int {
	for i := len(w) - 1; i >= 0; i-- {
		if w[i].Enabled {
			return i
		}
	}
	return 0
}

// TestSchedRWMutexPendingWriter: a writer's Lock while a reader holds an
// RWMutex goes in and waits (parked), and no reader gets in meanwhile, as
// sync.RWMutex does: the reader's second RLock then deadlocks against it
// (Go's read-write-read), reported with the RLock blocked and the Lock
// parked. Without the second RLock, the reader's RUnlock gives the writer
// the lock and the run ends.
func TestSchedRWMutexPendingWriter(t *testing.T) {
	base := schedFileSites("/src/rwr.go", 5)
	rlock := func(rw *sync.RWMutex, site uint32) {
		schedPoint(sched.KindRLock, uint64(uintptr(unsafe.Pointer(rw))), nil, site, nil)
		rw.RLock()
	}
	var rw sync.RWMutex
	var wg sync.WaitGroup
	wg.Add(1)
	data := deadlockRun(t, lastEnabled{}, 1, func() {
		rlock(&rw, base+1)
		goCtl(base+2, &wg, func() {
			schedPoint(sched.KindLock, uint64(uintptr(unsafe.Pointer(&rw))), nil, base+3, nil)
			rw.Lock()
		})
		rlock(&rw, base+4)
	})
	if !strings.Contains(data, "note\tdeadlock\tg0#") || !strings.Contains(data, " rlock /src/rwr.go:5\n") || !strings.Contains(data, " lock /src/rwr.go:4 (parked)") {
		t.Errorf("want the second RLock blocked and the Lock parked, got:\n%s", data)
	}

	var rw2 sync.RWMutex
	var wg2 sync.WaitGroup
	controlled(t, lastEnabled{}, "random", 1, sched.SitePair{}, func() {
		rlock(&rw2, base+1)
		wg2.Add(1)
		goCtl(base+2, &wg2, func() {
			obj := uint64(uintptr(unsafe.Pointer(&rw2)))
			schedPoint(sched.KindLock, obj, nil, base+3, nil)
			rw2.Lock()
			schedPoint(sched.KindUnlock, obj, nil, base+3, nil)
			rw2.Unlock()
		})
		schedPoint(sched.KindRUnlock, uint64(uintptr(unsafe.Pointer(&rw2))), nil, base+4, nil)
		rw2.RUnlock()
		waitCtl(&wg2, base+5)
	})
}

// deadlockRun runs body as a controlled root goroutine under the random
// strategy s with seed (a deadlock is declared after 300ms), waits until
// rt reports a deadlock (exit status 3; the program's goroutines stay
// blocked) and returns the schedule file's text.
func deadlockRun(t *testing.T, s sched.Strategy, seed uint64, body func()) string {
	t.Helper()
	exited := make(chan int, 1)
	schedExit = func(code int) { exited <- code }
	defer func() { schedExit = os.Exit }()
	path := filepath.Join(t.TempDir(), "s.txt")
	f, _ := os.Create(path)
	defer f.Close()
	schedStart(s, "random", seed, sched.SitePair{}, f, 50*time.Millisecond, 300*time.Millisecond)
	go body()
	select {
	case code := <-exited:
		if code != 3 {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no deadlock reported")
	}
	sc.mu.Lock()
	ctl = false
	sc.mu.Unlock()
	data, _ := os.ReadFile(path)
	return string(data)
}

// figure2Hooks is Figure 2 written with rt's own hooks, as the
// instrumenter rewrites it (Fork/Begin/End, MutexLock, R1/W1, WaitGroup):
// n lock operations on M stand for the statements before statement 8.
func figure2Hooks(base uint32, n int) (errReached bool) {
	s := func(line int) uint32 { return base + uint32(line) - 1 }
	var x int
	var L, M sync.Mutex
	var wg sync.WaitGroup
	WaitGroupAdd(&wg, 2, s(1), true)
	c1 := Fork(s(1))
	go func() {
		Begin(c1)
		defer End(c1)
		defer WaitGroupDone(&wg, s(1), true)
		MutexLock(&L, s(1), true)
		for i := 0; i < n; i++ {
			MutexLock(&M, s(2), true)
			MutexUnlock(&M, s(2), true)
		}
		MutexUnlock(&L, s(7), true)
		if *R1(&x, s(8), true) == 0 {
			errReached = true
		}
		c1.Ok()
	}()
	c2 := Fork(s(10))
	go func() {
		Begin(c2)
		defer End(c2)
		defer WaitGroupDone(&wg, s(10), true)
		*W1(&x, s(10), true) = 1
		MutexLock(&L, s(11), true)
		MutexLock(&M, s(12), true)
		MutexUnlock(&M, s(12), true)
		MutexUnlock(&L, s(13), true)
		c2.Ok()
	}()
	WaitGroupWait(&wg, s(13), true)
	return
}

// TestSchedHooks: Figure 2 through rt's hooks: the race on x is created in
// every run and ERROR is reached in about half, for several lengths.
func TestSchedHooks(t *testing.T) {
	base := schedFileSites("/src/fig2.go", 13)
	runs := 30
	if testing.Short() {
		runs = 12
	}
	for _, n := range []int{1, 10, 100} {
		created, errs := 0, 0
		for seed := uint64(0); seed < uint64(runs); seed++ {
			var e bool
			sch := controlled(t, sched.NewRaceFuzzer(seed), "racefuzzer", seed, sched.SitePair{"fig2.go:8", "fig2.go:10"}, func() { e = figure2Hooks(base, n) })
			if len(sch.NotesOf("race")) > 0 {
				created++
			}
			if e {
				errs++
			}
			if esc := sch.NotesOf("escape"); len(esc) > 0 {
				t.Errorf("n=%d seed %d: escapes %v", n, seed, esc)
			}
		}
		t.Logf("n=%d: created %d/%d, ERROR %d/%d", n, created, runs, errs, runs)
		if created != runs || errs < runs/4 || errs > runs*3/4 {
			t.Errorf("n=%d: created %d of %d runs, ERROR in %d; want all, and about half", n, created, runs, errs)
		}
	}
}

// BenchmarkSchedOff measures what controlled mode costs when it is off
// (RACEKIT_SCHED unset, and no trace): the hooks of a lock, an unlock and
// a read, against the bare operations in the same run (ops/s each).
func BenchmarkSchedOff(b *testing.B) {
	if ctl || on {
		b.Skip("controlled mode or tracing is on")
	}
	var m sync.Mutex
	var x int
	b.Run("bare", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			m.Lock()
			_ = x
			m.Unlock()
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	})
	b.Run("hooks", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			MutexLock(&m, 1, true)
			_ = *R1(&x, 2, true)
			MutexUnlock(&m, 3, true)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	})
}

// BenchmarkSchedOn measures a scheduling point under control: two
// goroutines alternating on a mutex, every Lock and Unlock a decision of
// the Random strategy (decisions/s).
func BenchmarkSchedOn(b *testing.B) {
	if ctl || on {
		b.Skip("controlled mode or tracing is on")
	}
	base := schedFileSites("/src/bench.go", 3)
	schedStart(sched.NewRandom(1), "random", 1, sched.SitePair{}, nil, time.Second, time.Minute)
	defer schedStop()
	var m sync.Mutex
	var wg sync.WaitGroup
	b.ResetTimer()
	done := make(chan struct{})
	go func() {
		defer close(done)
		wg.Add(2)
		for k := 0; k < 2; k++ {
			goCtl(base, &wg, func() {
				for i := 0; i < b.N/2; i++ {
					MutexLock(&m, base+1, true)
					MutexUnlock(&m, base+2, true)
				}
			})
		}
		waitCtl(&wg, base+2)
		schedEnd(false)
	}()
	<-done
	b.ReportMetric(float64(2*(b.N/2))/b.Elapsed().Seconds(), "decisions/s")
}

// figure1Traced is figure1 written with rt's recording hooks, as package
// instrument rewrites it; it returns which ERRORs were reached. With a
// prologue, goroutine 1 first writes a scratch slice that many times
// (at statement 1, not under test): a loop over data that differs from
// run to run.
func figure1Traced(base uint32, prologue int) (err1, err2 bool) {
	s := func(line int) uint32 { return base + uint32(line) - 1 }
	var x, y, z int
	scratch := make([]int, prologue)
	var L sync.Mutex
	var wg sync.WaitGroup
	WaitGroupAdd(&wg, 2, s(14), true)
	c1 := Fork(s(1))
	go func() {
		Begin(c1)
		defer End(c1)
		defer WaitGroupDone(&wg, s(1), true)
		for i := range scratch {
			*W(&scratch[i], s(1), true) = i
		}
		*W(&x, s(1), true) = 1
		MutexLock(&L, s(2), true)
		*W(&y, s(3), true) = 1
		MutexUnlock(&L, s(4), true)
		if *R(&z, s(5), true) == 1 {
			err1 = true
		}
		c1.Ok()
	}()
	c2 := Fork(s(7))
	go func() {
		Begin(c2)
		defer End(c2)
		defer WaitGroupDone(&wg, s(7), true)
		*W(&z, s(7), true) = 1
		MutexLock(&L, s(8), true)
		if *R(&y, s(9), true) == 1 {
			if *R(&x, s(10), true) != 1 {
				err2 = true
			}
		}
		MutexUnlock(&L, s(14), true)
		c2.Ok()
	}()
	WaitGroupWait(&wg, s(14), true)
	return
}

// lineSites is RegisterFile's site list for lines 1..n of a file, column
// 1, no function.
func lineSites(n int) []uint32 {
	var lines []uint32
	for l := 1; l <= n; l++ {
		lines = append(lines, uint32(l), 1, 0)
	}
	return lines
}

// zAccesses finds in tr the read of z at file:5 and its write at file:7,
// as clip steps at their positions (pair: the statements under test), and
// the read's index among its goroutine's events.
func zAccesses(tr *trace.Trace, pair sched.SitePair, file string) (read, write sched.ClipStep, readIdx int) {
	names, pos := sched.Names(tr), sched.Positions(tr, pair)
	idx := map[trace.GID]int{}
	for i, e := range tr.Events {
		site := tr.M.Site(e.Site)
		if strings.HasSuffix(site.File, file) && site.Line == 5 && e.Op == trace.OpRead {
			read, readIdx = sched.ClipStep{G: names[e.G], Ev: pos[i], Kind: sched.KindRead, Site: file + ":5"}, idx[e.G]
		}
		if strings.HasSuffix(site.File, file) && site.Line == 7 && e.Op == trace.OpWrite {
			write = sched.ClipStep{G: names[e.G], Ev: pos[i], Kind: sched.KindWrite, Site: file + ":7"}
		}
		idx[e.G]++
	}
	return read, write, readIdx
}

// TestSchedClip: PECAN's clips and predicted races' witnesses are
// schedules read off a recorded trace, as (goroutine, position) steps.
// A traced controlled run of Figure 1 in which statement 5 read z before
// statement 7 wrote it gives the positions of the two accesses; the clip
// "7 then 5" then makes every run reach ERROR1, whatever the seed of the
// free choices, and each point of the schedule carries its position.
func TestSchedClip(t *testing.T) {
	pair := sched.SitePair{"fig1c.go:5", "fig1c.go:7"}
	lines := lineSites(14)
	run := func(s sched.Strategy, seed uint64) (tr *trace.Trace, sch *sched.Schedule, e1 bool) {
		tr = record(t, true, func(uint32) {
			sch = controlled(t, s, "clip", seed, pair, func() {
				e1, _ = figure1Traced(RegisterFile("/src/fig1c.go", nil, lines), 0)
			})
		})
		return tr, sch, e1
	}
	// Find a run without ERROR1, and in it the two accesses of z.
	var tr *trace.Trace
	var sch *sched.Schedule
	for seed := uint64(0); ; seed++ {
		var e1 bool
		if tr, sch, e1 = run(sched.NewRandom(seed), seed); !e1 {
			break
		}
		if seed == 50 {
			t.Fatal("no random run read z before it was written")
		}
	}
	read, write, _ := zAccesses(tr, pair, "fig1c.go")
	if read.G != "g0.1" || write.G != "g0.2" {
		t.Fatalf("read by %q, write by %q; want g0.1 and g0.2 (names %v)", read.G, write.G, sched.Names(tr))
	}
	// The recorded schedule's points carry the same positions.
	found := 0
	for _, st := range sch.Steps {
		if (st.G == read.G && st.Kind == sched.KindRead && st.Ev == read.Ev) || (st.G == write.G && st.Kind == sched.KindWrite && st.Ev == write.Ev) {
			found++
		}
	}
	if found != 2 {
		t.Fatalf("the schedule has %d of the two access points at their positions: %+v", found, sch.Steps)
	}
	clip := []sched.ClipStep{write, read}
	for seed := uint64(0); seed < 10; seed++ {
		c := sched.NewClip(clip, seed)
		_, sch, e1 := run(c, seed)
		if !e1 || !c.Done() {
			t.Errorf("seed %d: ERROR1 %v, clip done %v, notes %v", seed, e1, c.Done(), sch.Notes)
		}
		if d := sch.NotesOf("departure"); len(d) > 0 {
			t.Errorf("seed %d: departures %v", seed, d)
		}
	}
}

// TestSchedClipPlainDrift: a clip read off one run is followed in a run
// whose goroutine records more plain accesses before the clip's events
// (a loop over data that differs), because positions count only what
// orders a schedule (sched.Positional). By event index the read of z
// moved by three; by position it did not, and the clip "7 then 5" reaches
// ERROR1 without a departure.
func TestSchedClipPlainDrift(t *testing.T) {
	pair := sched.SitePair{"drift.go:5", "drift.go:7"}
	lines := lineSites(14)
	run := func(s sched.Strategy, seed uint64, n int) (tr *trace.Trace, sch *sched.Schedule, e1 bool) {
		tr = record(t, false, func(uint32) {
			sch = controlled(t, s, "clip", seed, pair, func() {
				e1, _ = figure1Traced(RegisterFile("/src/drift.go", nil, lines), n)
			})
		})
		return tr, sch, e1
	}
	tr, _, _ := run(sched.NewRandom(1), 1, 2)
	read, write, idx2 := zAccesses(tr, pair, "drift.go")
	if read.G != "g0.1" || write.G != "g0.2" {
		t.Fatalf("read by %q, write by %q; want g0.1 and g0.2", read.G, write.G)
	}
	clip := []sched.ClipStep{write, read}
	for seed := uint64(0); seed < 5; seed++ {
		c := sched.NewClip(clip, seed)
		tr5, sch, e1 := run(c, seed, 5)
		if d := sch.NotesOf("departure"); len(d) > 0 || !c.Done() || !e1 {
			t.Errorf("seed %d: departures %v, clip done %v, ERROR1 %v", seed, d, c.Done(), e1)
		}
		r5, _, idx5 := zAccesses(tr5, pair, "drift.go")
		if idx5 != idx2+3 || r5.Ev != read.Ev {
			t.Errorf("seed %d: the read's event index %d (recording %d), position %d (recording %d); want the index 3 later, the position equal", seed, idx5, idx2, r5.Ev, read.Ev)
		}
	}
}

// A root that records events but reaches no scheduling point and ends (a
// test function without synchronization, run before the one under test)
// has run its steps: the clip goes on with the next root, no departure.
func TestSchedClipRootWithoutPoints(t *testing.T) {
	pair := sched.SitePair{"root.go:2", "root.go:2"}
	lines := []uint32{1, 1, 0, 2, 1, 0}
	var x, y int
	// Each root's position 0 is its Begin: g0 reads x (not at a statement
	// under test: still position 0), g1 writes y (position 1).
	clip := []sched.ClipStep{{G: "g0", Ev: 0}, {G: "g1", Ev: 1, Kind: sched.KindWrite, Site: "root.go:2"}}
	c := sched.NewClip(clip, 1)
	var sch *sched.Schedule
	record(t, false, func(uint32) {
		sch = controlled(t, c, "clip", 1, pair, func() {
			base := RegisterFile("/src/root.go", nil, lines)
			done := make(chan struct{})
			go func() {
				_ = *R(&x, base, true)
				close(done)
			}()
			<-done
			*W(&y, base+1, true) = 1
		})
	})
	if d := sch.NotesOf("departure"); len(d) > 0 || !c.Done() {
		t.Fatalf("departures %v, clip done %v; notes %v", d, c.Done(), sch.Notes)
	}
	if g := sch.NotesOf("gone"); len(g) != 1 || !strings.HasPrefix(g[0], "g0 ") {
		t.Errorf("gone notes %v, want g0's", g)
	}
}

// copy and append are scheduling points before they run, with or without
// a trace (racekit fuzz runs untraced): RaceFuzzer creates the race of a
// copy into a slice with a read of its elements, and of an append into
// spare capacity with that read.
func TestSchedRangePoints(t *testing.T) {
	base := schedFileSites("/src/rng.go", 3)
	s := func(line int) uint32 { return base + uint32(line) - 1 }
	for _, tc := range []struct {
		name  string
		write func(dst []int)
	}{
		{"copy", func(dst []int) { Copy(dst, []int{1, 2}, s(1), true) }},
		{"append", func(dst []int) { _ = Append(dst[:0], s(1), true, 7) }},
	} {
		created := 0
		for seed := uint64(0); seed < 10; seed++ {
			dst := make([]int, 2)
			sch := controlled(t, sched.NewRaceFuzzer(seed), "racefuzzer", seed, sched.SitePair{"rng.go:1", "rng.go:2"}, func() {
				var wg sync.WaitGroup
				WaitGroupAdd(&wg, 1, s(3), true)
				c := Fork(s(3))
				go func() {
					Begin(c)
					defer End(c)
					defer WaitGroupDone(&wg, s(3), true)
					tc.write(dst)
					c.Ok()
				}()
				_ = Elems(dst, s(2), true)
				WaitGroupWait(&wg, s(3), true)
			})
			if len(sch.NotesOf("race")) > 0 {
				created++
			}
		}
		if created == 0 {
			t.Errorf("%s: the race was never created in 10 runs", tc.name)
		}
	}
}

// TestSchedDepart: a test function's departure (rttest.Stop) is its last
// point and waits for the goroutines it did not wait for, so the run's
// tail is part of the schedule: the child's steps all come before the
// root's end, in every seed, and a replay follows them; a child that
// never stops does not keep the root beyond departCap choices.
func TestSchedDepart(t *testing.T) {
	base := schedFileSites("/src/depart.go", 4)
	for seed := uint64(0); seed < 10; seed++ {
		var m sync.Mutex
		body := func() {
			var wg sync.WaitGroup
			wg.Add(1)
			goCtl(base, &wg, func() {
				for i := 0; i < 5; i++ {
					lockCtl(&m, base+1)
					unlockCtl(&m, base+1)
				}
			})
			lockCtl(&m, base+2)
			unlockCtl(&m, base+2)
			schedDepart()
		}
		sch := controlled(t, sched.NewRandom(seed), "random", seed, sched.SitePair{}, body)
		steps := sch.Steps
		last := steps[len(steps)-1]
		if last.G != "g0" || last.Kind != sched.KindEnd {
			t.Fatalf("seed %d: last step %+v, want g0's end", seed, last)
		}
		child := 0
		for _, s := range steps {
			if s.G == "g0.1" {
				child++
			}
		}
		// Begin, 10 lock and unlock points, Done.
		if child != 12 {
			t.Fatalf("seed %d: %d steps of the child before the root departed, want 12:\n%v", seed, child, steps)
		}
		rp := sched.NewReplay(steps)
		re := controlled(t, rp, "replay", 0, sched.SitePair{}, body)
		if !sameSteps(steps, re.Steps) || rp.Diverged() {
			t.Fatalf("seed %d: replay differs:\n%v\n%v", seed, steps, re.Steps)
		}
	}

	var stop atomic.Bool
	var spins atomic.Int64
	done := make(chan struct{})
	sch := controlled(t, sched.NewRandom(1), "random", 1, sched.SitePair{}, func() {
		schedFork(base)
		go func() {
			schedBegin()
			defer close(done)
			defer schedEnd(false)
			for !stop.Load() {
				schedPoint(sched.KindAtomic, 1, nil, base+3, nil)
				spins.Add(1)
			}
		}()
		schedDepart()
		stop.Store(true)
	})
	<-done
	end := -1
	for i, s := range sch.Steps {
		if s.G == "g0" && s.Kind == sched.KindEnd {
			end = i
		}
	}
	if end < departCap {
		t.Fatalf("the root departed at step %d while its child could run (cap %d)", end, departCap)
	}
}

// Recorded under control, a Cond.Wait that rt carries out (ctlCondWait)
// records its release of c.L before it unlocks it: the goroutine the
// point lets in next takes c.L and records its acquire after that
// release, so happens-before sees the lock's order. Three goroutines
// meet at a Cond barrier, each writing its own slot before it and
// reading the others' after it: no race, under every seed. (When the
// release was recorded after the point, hb reported the barrier's count
// as racing between two holders of its mutex.)
func TestSchedCondWaitRecordsReleaseFirst(t *testing.T) {
	for seed := uint64(0); seed < 8; seed++ {
		var races []string
		tr := record(t, false, func(uint32) {
			base := schedFileSites("/src/condbar.go", 10)
			var mu sync.Mutex
			cond := sync.NewCond(&mu)
			count, gen := 0, 0
			var slots [3]int
			wait := func() {
				MutexLock(&mu, base+1, true)
				g := *R1(&gen, base+2, true)
				if *RW1(&count, base+3, true)++; count == 3 {
					*W1(&count, base+4, true) = 0
					*RW1(&gen, base+4, true)++
					CondBroadcast(cond, base+5)
				} else {
					for g == *R1(&gen, base+6, true) {
						CondWait(cond, base+6)
					}
				}
				MutexUnlock(&mu, base+7, true)
			}
			controlled(t, sched.NewRandom(seed), "random", seed, sched.SitePair{}, func() {
				var wg sync.WaitGroup
				for i := 0; i < 3; i++ {
					WaitGroupAdd(&wg, 1, base+8, true)
					c := Fork(base + 8)
					go func() {
						Begin(c)
						defer End(c)
						defer WaitGroupDone(&wg, base+8, true)
						*W1(&slots[i], base+9, true) = i
						wait()
						_ = *R1(&slots[(i+1)%3], base+10, true)
						c.Ok()
					}()
				}
				WaitGroupWait(&wg, base+8, true)
			})
		})
		d := hb.New(finding.SinkFunc(func(r *finding.Race) {
			races = append(races, fmt.Sprintf("%#x (goroutines %d and %d)", r.Addr, r.Prev.G, r.Cur.G))
		}))
		for i := range tr.Events {
			d.Handle(&tr.Events[i])
		}
		d.Finish()
		if len(races) > 0 {
			t.Errorf("seed %d: hb reports %v", seed, races)
		}
	}
}

// lazyInit is buggyprogram's table: each of two workers checks the shared
// pointer and, if nil, stores its own. It returns how many stored.
func lazyInit(base uint32) int {
	s := func(line int) uint32 { return base + uint32(line) - 1 }
	var cache *int
	var stores atomic.Int32
	var wg sync.WaitGroup
	wg.Add(2)
	for w := 0; w < 2; w++ {
		goCtl(s(1), &wg, func() {
			schedAccess(sched.KindRead, unsafe.Pointer(&cache), s(2))
			if cache == nil {
				schedAccess(sched.KindWrite, unsafe.Pointer(&cache), s(3))
				cache = new(int)
				stores.Add(1)
			}
		})
	}
	waitCtl(&wg, s(4))
	return int(stores.Load())
}

// TestSchedPreempt: under the random strategy alone a check and its store
// never interleave (only synchronization is a point); with
// RACEKIT_SCHED_PREEMPT both workers see nil in some runs, and a seed still
// gives one schedule.
func TestSchedPreempt(t *testing.T) {
	base := schedFileSites("/src/lazy.go", 4)
	runs := 40
	both := func(p float64) int {
		sc.preempt = p
		defer func() { sc.preempt = 0 }()
		n := 0
		for seed := uint64(0); seed < uint64(runs); seed++ {
			var stores int
			first := controlled(t, sched.NewRandom(seed), "random", seed, sched.SitePair{}, func() { stores = lazyInit(base) })
			if stores == 2 {
				n++
			}
			again := controlled(t, sched.NewRandom(seed), "random", seed, sched.SitePair{}, func() { lazyInit(base) })
			if !sameSteps(first.Steps, again.Steps) {
				t.Fatalf("preempt %v, seed %d: the same seed gave another schedule:\n%v\n%v", p, seed, first.Steps, again.Steps)
			}
		}
		return n
	}
	if n := both(0); n != 0 {
		t.Errorf("without preemption both workers stored in %d of %d runs", n, runs)
	}
	n := both(0.5)
	t.Logf("with preemption 0.5 both workers stored in %d of %d runs", n, runs)
	if n == 0 || n == runs {
		t.Errorf("with preemption 0.5 both workers stored in %d of %d runs, want some", n, runs)
	}
}

// TestSchedPreemptNoStarvation: a preemption steers only the choice it
// makes. Here a spinner polls a flag at atomic points while a worker,
// preempted at every access, must still get the token back to set it (a
// yield that stayed on its point kept it waiting forever while the spinner
// was enabled).
func TestSchedPreemptNoStarvation(t *testing.T) {
	base := schedFileSites("/src/spin.go", 4)
	s := func(line int) uint32 { return base + uint32(line) - 1 }
	sc.preempt = 1
	defer func() { sc.preempt = 0 }()
	for seed := uint64(0); seed < 8; seed++ {
		done := make(chan struct{})
		go func() {
			defer close(done)
			controlled(t, sched.NewRandom(seed), "random", seed, sched.SitePair{}, func() {
				var flag atomic.Bool
				var x [4]int
				var wg sync.WaitGroup
				wg.Add(2)
				goCtl(s(1), &wg, func() {
					for {
						schedPoint(sched.KindAtomic, uint64(uintptr(unsafe.Pointer(&flag))), nil, s(2), nil)
						if flag.Load() {
							return
						}
					}
				})
				goCtl(s(3), &wg, func() {
					for i := range x {
						schedAccess(sched.KindWrite, unsafe.Pointer(&x[i]), s(3))
						x[i] = i
					}
					schedPoint(sched.KindAtomic, uint64(uintptr(unsafe.Pointer(&flag))), nil, s(4), nil)
					flag.Store(true)
				})
				waitCtl(&wg, s(4))
			})
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("seed %d: the preempted worker never got the token back", seed)
		}
	}
}
