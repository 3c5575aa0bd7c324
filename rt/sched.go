package rt

// Controlled mode: rt runs the program's traced goroutines one at a time
// and lets a strategy of package sched choose, at each scheduling point,
// which one runs next (RaceFuzzer's Phase 2, replay of a recorded
// schedule, PECAN's clips).
//
//	RACEKIT_SCHED=random|racefuzzer|deadlockfuzzer|atomfuzzer|replay|clip   switch it on
//	RACEKIT_SEED=N                  seed of the run's one PCG generator
//	RACEKIT_CYCLE=held>req,held>req deadlockfuzzer: the lock-order cycle to
//	                                close (sched.ParseCycle)
//	RACEKIT_SPLIT=first>second      atomfuzzer: the two critical sections
//	                                of an atomic region (sched.ParseSplit)
//	RACEKIT_PAIR=file:line~file:line  the statements under test: accesses
//	                                there are scheduling points (RaceFuzzer's
//	                                racing pair; a clip's access sites)
//	RACEKIT_PAIR_FILE=FILE          the same, read from FILE (a clip may put
//	                                hundreds of statements under test)
//	RACEKIT_SCHEDULE_IN=FILE        replay: a recorded schedule; clip: a
//	                                clip (lines "G EV [kind [file:line]]",
//	                                sched.ClipStep; needs RACEKIT_TRACE)
//	RACEKIT_SCHEDULE_OUT=FILE       record this run's schedule (sched.Schedule)
//	RACEKIT_CLIP_STOP=1             clip: end the run at its first departure
//	                                (exit status sched.DepartedExit)
//	RACEKIT_SCHED_ESCAPE=DUR        see "Leaving control" (default 5ms)
//	RACEKIT_SCHED_DEADLOCK=DUR      see "Deadlocks" (default 5s)
//	RACEKIT_SCHED_WANT=DUR          how long a clip or replay waits for a root
//	                                it wants that has not come (default 250ms)
//	RACEKIT_SCHED_TICK=DUR          virtual time per scheduling step (default 1µs; vtime.go)
//	RACEKIT_SCHED_TIME=real         keep real timers and clock under control
//	RACEKIT_SCHED_PREEMPT=P         random: each data access is also a
//	                                scheduling point with probability P
//	                                (see "Preemption")
//
// # The token
//
// Exactly one traced goroutine holds the token and runs; every other one
// that reached a scheduling point waits on its own channel. A scheduling
// point is a hook called before a synchronization operation (Lock, RLock,
// Unlock, RUnlock, a channel send, receive, close or select case,
// WaitGroup Wait and Done, Once.Do, Cond Wait, Signal and Broadcast, an
// atomic operation or a sync.Map method), a go statement (Fork), the start
// of a goroutine (Begin), and a data access at one of the statements of
// RACEKIT_PAIR (or one drawn, see "Preemption"). When the holder reaches a
// point it gives the token up; once no goroutine is on its way (a child
// forked but not yet begun, a partner released by a channel operation),
// the strategy picks one of the waiting goroutines that are enabled, and
// that one gets the token. So the order of the program's traced
// operations is the sequence of choices, and the same choices give the
// same run.
//
// # Enabled
//
// rt tracks what it needs to know that an operation will not block: the
// holder of each mutex (write mode) and its readers, from the Lock and
// Unlock points it let through; a WaitGroup's counter (read from the
// WaitGroup itself); whether a Once is running its function; the goroutines
// parked in a channel operation or a Cond.Wait. Lock is enabled when the
// mutex is free, RLock when no writer holds it, Wait when the counter is 0,
// Once.Do when the Once is done or not running. A channel operation is
// always enabled: if it cannot complete at once (its len and cap, whether
// the channel was closed, who is parked on it), the goroutine chosen for
// it leaves the token at once and is parked; the operation that completes
// it (a send to a parked receiver, a receive from a parked sender, a close,
// a Signal once the lock is free) makes the parked goroutine "expected",
// and the next choice waits until it is back at its resume point (the hook
// after the operation). A select announces its cases (one point each) and
// then asks SelectWait: of the cases that can proceed, the run's seeded
// generator picks one and the others' channels are made nil for this
// select (the Go runtime would pick with its own random source); with
// none, the default is taken, or the goroutine parks on all its cases like
// a blocking channel operation. TryLock and the sync.OnceFunc family are
// not modelled.
//
// # Time
//
// Timers, sleeps and the clock of instrumented code run on a virtual
// clock (vtime.go) in every mode but clip: a timer's firing is a choice
// of the strategy, so a run's timeouts are decided by its seed. A clip
// runs on it too with RACEKIT_SCHED_TIME=virtual (racekit hatch sets it
// for clips of a random-scheduler recording, which ran on it).
//
// # Leaving control
//
// A goroutine may block where rt cannot see it: I/O, real timers, syscalls,
// a select on a channel untraced code feeds, a lock held by untraced code,
// a sleep in untraced code; or it may return into
// untraced code (an HTTP handler returning to net/http). When
// the holder has not reached its next point RACEKIT_SCHED_ESCAPE after it
// was chosen, the monitor looks at its state in the Go runtime (one
// runtime.Stack of all goroutines): a goroutine that is running or runnable
// keeps the token, and so does one waiting for the scheduler's own lock on
// its way into a point (schedArriving); one that is blocked, or gone, runs
// free from then on and the next goroutine is chosen (a goroutine that
// ended in untraced code is noted "gone" and forgotten). A schedule that waits for a goroutine which
// is not at a point learns the same way that it is gone: a free one that
// returned into untraced code, or a root (numbered by the trace) that ended
// before its first point, a test function without synchronization; and a
// Parker strategy is told when the goroutine it waits for is parked inside
// its last point's operation. A free goroutine rejoins at its next
// scheduling point. A goroutine that started a real timer (a ticker, a
// context deadline; any timer in a clip run) and then reaches a select
// leaves control at once: the select may wait for the timer, in real time. A run in which a goroutine left control this way may
// not replay exactly: when it rejoins depends on time, not on the seed.
// The schedule file notes each such escape. A test function does not
// leave this way: it departs at a point of its own (schedDepart), once
// nobody else can run.
//
// # Deadlocks
//
// RaceFuzzer's own deadlock (every enabled goroutine postponed) is broken
// by the strategy (Algorithm 1, line 26). When goroutines wait at points
// and none is enabled, nobody runs and nobody is expected for
// RACEKIT_SCHED_DEADLOCK, the program is deadlocked (Algorithm 1, line
// 31): rt writes each waiting and parked goroutine's operation to the
// schedule and to stderr, and exits with status 3.
//
// # Goroutine names
//
// Creation order, as package sched documents: roots g0, g1, ... in the
// order they reach their first scheduling point, P.k for the k-th child
// forked by P. A child is named when its parent passes Fork and claims the
// name at Begin: a parent cannot pass its next point before the child
// arrived, so children claim the names in their order.
//
// # Preemption
//
// Under the random strategy only synchronization is a scheduling point, so
// a check and the store it guards (if p.cache == nil { p.cache = ... })
// never interleave with another goroutine's: a recorded run shows only
// the orders in which such code runs as one block. RACEKIT_SCHED_PREEMPT=P
// makes each data access of the goroutine holding the token a scheduling
// point with probability P, drawn from a generator of its own seeded by
// RACEKIT_SEED, so that the same seed still gives the same run (the holder
// is the only controlled goroutine running; free goroutines do not draw).
// The point is marked (sched.Point.Yield) and the random strategy then
// chooses among the other enabled goroutines, for that one choice only: a
// preemption that handed the token back to the holder would be wasted,
// and one that kept it back later would starve it behind a spinner.
// It is for recordings that a predictor reads (racekit hatch
// --record-preempt); a replay does not redo the draws.
//
// # Recording
//
// RACEKIT_SCHEDULE_OUT receives the schedule as the run goes (package
// sched's text format): one step per choice, and notes (a race created,
// an escape, a deadlock). Notes are written at once, steps within a few
// milliseconds. A goroutine forked by a go statement that ends without
// returning (a panic that will kill the program) stops the choices for
// three seconds (a loaded machine may take long to kill the program), so
// that the recorded schedule ends where the run did; a
// panic in a goroutine born in untraced code (a test function) does not:
// its departure, deferred, waits until nobody else can run, then the
// panic goes on.
//
// Controlled mode works with or without a trace (RACEKIT_TRACE): without
// one, rt numbers the sites itself, and only the scheduling hooks run.
//
// Without RACEKIT_SCHED, each hook pays one predictable branch on ctl.

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/trace"
)

// ctl is true in controlled mode. It is set at init (or by a test) before
// the goroutines it controls start, and read by every hook.
var ctl bool

// sgState is where a controlled goroutine is.
type sgState uint8

const (
	sRunning  sgState = iota // holds the token
	sWaiting                 // at a scheduling point
	sParked                  // in a channel operation or Cond.Wait that blocks
	sExpected                // will arrive at a point soon (a child, a partner)
	sFree                    // out of control (see "Leaving control")
	sDone
)

// sg is a controlled goroutine.
type sg struct {
	name  string
	order int // creation order, the order of w given to the strategy
	goid  uint64
	forks int
	n     int // scheduling points reached
	pt    sched.Point
	ch    any            // the channel of a pending channel operation
	ptr   unsafe.Pointer // the WaitGroup or Once of a pending Wait or Do
	lock  uint64
	state sgState
	wake  chan struct{}
	since time.Time // chosen, or expected, at
	// Parked on park (a channel or Cond), in order parkSeq.
	park     uint64
	parkKind sched.Kind
	parkSeq  int
	woken    bool // a parked Cond waiter that was signalled
	// A Cond waiter whose Wait rt carries out itself (ctlCondWait): it
	// waits on cond for its signal and then takes the lock at a point.
	condEmu bool
	cond    chan struct{}
	timer   bool // started a timer: its next select may wait for it
	skipSel bool // the next select point is the receive's own (Recv calls RecvPre)
	// The cases of the select it is in (announced by RecvPre and
	// SelectSendPre), kept while it is parked in it.
	sel []selCase
	// Parked behind these goroutines on the same channel: it enters the
	// operation once they are blocked in it (schedQueue).
	behind []queued
	// At its departure point (schedDepart) since step departFrom.
	departFrom int
	// Free since it departed (schedDepart), until it rejoins: back in the
	// testing framework, it delivers nothing a timer should wait for (vNext).
	departed bool
}

// selCase is one channel case of a select.
type selCase struct {
	obj  uint64 // the channel, 0 for nil
	ch   any
	send bool
}

type lockState struct {
	writer  *sg
	readers int
}

// schedT is the scheduler's state, under mu.
type schedT struct {
	mu       sync.Mutex
	stopping bool // a departure ends the run (clipStop)
	strat    sched.Strategy
	byGoid   map[uint64]*sg
	all      []*sg
	roots    int
	running  *sg
	pending  []*sg // forked children not begun, oldest first
	locks    map[uint64]*lockState
	// The closed channels by address; each is kept (the value), so that
	// its address is not reused by a new channel, which would look closed.
	closed    map[uint64]any
	onces     map[uint64]*sg
	parkSeq   int
	out       *bufio.Writer
	outFile   *os.File
	steps     int
	escape    time.Duration
	deadlock  time.Duration
	stuck     time.Time // since when nothing can run
	hold      time.Time // nobody is chosen before (see schedEnd)
	want      time.Time // since when the strategy's wanted goroutine is awaited
	wantName  string
	wantCheck time.Time // when schedGone last looked for it
	// The monitor (schedMonitor): its timer, whether it is due or its
	// callback runs, and when it last flushed the schedule.
	mon        *monitorTimer
	monArmed   bool
	monFlushed time.Time

	vc     vclock     // virtual time (vtime.go)
	rng    *rand.Rand // which of a select's ready cases proceeds
	mapRng *rand.Rand // the order of a range over a map (maprange.go)
	// preempt is RACEKIT_SCHED_PREEMPT's probability (0: off), set before
	// the goroutines it controls start; preRng draws for it.
	preempt float64
	preRng  *rand.Rand

	// Sites: names and pair membership by site ID (copy on write).
	sites  atomic.Pointer[[]schedSite]
	pair   sched.SitePair
	nsites uint32 // sites numbered by sched when not tracing
}

// sc is the scheduler.
var sc schedT

type schedSite struct {
	name      string // file:line
	file      string
	line, col int
	// r and w say which statements of the pair (sched.SitePair.Stmts) a
	// read and a write at the site are at: the pair names accesses (a
	// column, a kind), so a harmless read on the line of a racing write
	// is not a point (RaceFuzzer §3.2: postponing it lowers the
	// probability of creating the race, which Example 2 argues is 1).
	r, w uint8
}

// at returns the pair's statements an access of kind k at s is at (0: not
// a point of the pair).
func (s schedSite) at(k sched.Kind) uint8 {
	switch k {
	case sched.KindRead:
		return s.r
	case sched.KindWrite:
		return s.w
	}
	return 0
}

// atOp is at for a recorded access's op (its position, buf.go, counts
// the accesses that are points).
func (s schedSite) atOp(op trace.Op) bool {
	switch op {
	case trace.OpRead:
		return s.r != 0
	case trace.OpWrite:
		return s.w != 0
	}
	return false
}

// matchSite names a site and matches it against the pair.
func matchSite(p sched.SitePair, file string, line, col int) schedSite {
	s := schedSite{name: file + ":" + strconv.Itoa(line), file: file, line: line, col: col}
	if len(p) > 0 {
		s.r = p.Stmts(file, line, col, sched.KindRead)
		s.w = p.Stmts(file, line, col, sched.KindWrite)
	}
	return s
}

// wantTimeout is how long a clip or a replay waits for a root goroutine it
// wants that has not come (born in untraced code, it reaches its first
// point when the program, not the schedule, decides; net/http's connection
// goroutines come when a client connects) before it lets others go on:
// RACEKIT_SCHED_WANT, default 250ms. It was 1s: on the same recordings
// (racekit hatch --trace) httpsvc, jobsys, synclist and syncset confirmed
// the same anomalies with 250ms, and httpsvc's clips, which wait for its
// connection goroutines several times each, hatched in 28 s instead of 108.
var wantTimeout = envDuration("RACEKIT_SCHED_WANT", 250*time.Millisecond)

const (
	expectTimeout = 200 * time.Millisecond
	panicHold     = 3 * time.Second
	goneEvery     = 10 * time.Millisecond // schedGone reads every goroutine's stack
	queueWait     = 100 * time.Millisecond
	pollEvery     = time.Millisecond
	// departCap bounds the choices a departing test function waits for
	// (schedDepart): goroutines that never stop (a spin on a flag that a
	// cleanup sets) cannot keep it from returning.
	departCap = 10000
)

func init() {
	mode := os.Getenv("RACEKIT_SCHED")
	if mode == "" {
		return
	}
	seed, _ := strconv.ParseUint(os.Getenv("RACEKIT_SEED"), 10, 64)
	var pair sched.SitePair
	s := os.Getenv("RACEKIT_PAIR")
	if f := os.Getenv("RACEKIT_PAIR_FILE"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "racekit: RACEKIT_PAIR_FILE: %v\n", err)
		}
		s = strings.TrimSpace(string(data))
	}
	if s != "" {
		p, err := sched.ParsePair(s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "racekit: RACEKIT_PAIR: %v\n", err)
		}
		pair = p
	}
	var strat sched.Strategy
	in := os.Getenv("RACEKIT_SCHEDULE_IN")
	switch mode {
	case "random":
		strat = sched.NewRandom(seed)
	case "racefuzzer":
		strat = sched.NewRaceFuzzer(seed)
	case "deadlockfuzzer":
		c, err := sched.ParseCycle(os.Getenv("RACEKIT_CYCLE"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "racekit: RACEKIT_CYCLE: %v\n", err)
		} else {
			strat = sched.NewDeadlockFuzzer(seed, c)
		}
	case "atomfuzzer":
		sp, err := sched.ParseSplit(os.Getenv("RACEKIT_SPLIT"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "racekit: RACEKIT_SPLIT: %v\n", err)
		} else {
			strat = sched.NewAtomFuzzer(seed, sp)
		}
	case "replay":
		f, err := os.Open(in)
		if err == nil {
			var s *sched.Schedule
			s, err = sched.ReadSchedule(f, in)
			f.Close()
			if err == nil {
				strat = sched.NewReplay(s.Steps)
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "racekit: RACEKIT_SCHED=replay: %v\n", err)
		}
	case "clip":
		steps, err := readClip(in)
		if err != nil {
			fmt.Fprintf(os.Stderr, "racekit: RACEKIT_SCHED=clip: %v\n", err)
		} else {
			strat = sched.NewClip(steps, seed)
		}
	default:
		fmt.Fprintf(os.Stderr, "racekit: RACEKIT_SCHED=%s: want random, racefuzzer, deadlockfuzzer, atomfuzzer, replay or clip\n", mode)
	}
	if strat == nil {
		return // not controlled; the error is printed
	}
	var out *os.File
	if p := os.Getenv("RACEKIT_SCHEDULE_OUT"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "racekit: RACEKIT_SCHEDULE_OUT: %v\n", err)
		} else {
			out = f
		}
	}
	if goidOff == 0 {
		probeGoid()
	}
	if mode == "random" {
		if p, err := strconv.ParseFloat(os.Getenv("RACEKIT_SCHED_PREEMPT"), 64); err == nil && p > 0 && p <= 1 {
			sc.preempt = p
		}
	}
	schedStart(strat, mode, seed, pair, out, envDuration("RACEKIT_SCHED_ESCAPE", 5*time.Millisecond), envDuration("RACEKIT_SCHED_DEADLOCK", 5*time.Second))
	vclockFromEnv(mode)
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil && d > 0 {
		return d
	}
	return def
}

// readClip reads a clip: one step per line, "G EV [kind [file:line]]"
// (sched.ClipStep).
func readClip(path string) ([]sched.ClipStep, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var steps []sched.ClipStep
	for i, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		st := sched.ClipStep{G: f[0]}
		if len(f) < 2 {
			return nil, fmt.Errorf("%s:%d: want G EV [kind [file:line]]", path, i+1)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s:%d: bad position %q", path, i+1, f[1])
		}
		st.Ev = n
		if len(f) > 2 {
			k, ok := sched.ParseKind(f[2])
			if !ok {
				return nil, fmt.Errorf("%s:%d: unknown kind %q", path, i+1, f[2])
			}
			st.Kind = k
		}
		if len(f) > 3 {
			st.Site = f[3]
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// schedStart switches controlled mode on (tests call it directly; the
// goroutines it controls must start afterwards).
func schedStart(strat sched.Strategy, mode string, seed uint64, pair sched.SitePair, out *os.File, escape, deadlock time.Duration) {
	sc.mu.Lock()
	sc.strat = strat
	sc.stopping = false
	sc.byGoid = map[uint64]*sg{}
	sc.all, sc.roots, sc.running, sc.pending = nil, 0, nil, nil
	sc.locks = map[uint64]*lockState{}
	sc.closed = map[uint64]any{}
	sc.onces = map[uint64]*sg{}
	sc.parkSeq, sc.steps = 0, 0
	sc.escape, sc.deadlock = escape, deadlock
	sc.stuck, sc.want, sc.wantName, sc.hold = time.Time{}, time.Time{}, "", time.Time{}
	sc.pair = pair
	sc.rng = rand.New(rand.NewPCG(seed, 0x5e1ec7))
	sc.mapRng = rand.New(rand.NewPCG(seed, 0x3a9e))
	sc.preRng = rand.New(rand.NewPCG(seed, 0x9e3e))
	sc.outFile, sc.out = out, nil
	if out != nil {
		sc.out = bufio.NewWriter(out)
		label := pair.String()
		switch mode {
		case "deadlockfuzzer":
			label = os.Getenv("RACEKIT_CYCLE") // the statements under test
		case "atomfuzzer":
			label = os.Getenv("RACEKIT_SPLIT")
		}
		sc.out.WriteString(sched.FormatHeader(mode, seed, label))
		sc.flushOut()
	}
	// Sites registered before (tests) are matched against the new pair.
	if old := sc.sites.Load(); old != nil {
		ns := make([]schedSite, len(*old))
		for i, s := range *old {
			if s.name != "" {
				ns[i] = matchSite(pair, s.file, s.line, s.col)
			}
		}
		sc.sites.Store(&ns)
	}
	if sc.mon != nil {
		sc.mon.t.Stop()
	}
	m := &monitorTimer{}
	m.t = time.AfterFunc(pollEvery, m.fire)
	sc.mon, sc.monArmed, sc.monFlushed = m, true, time.Now()
	ctl = true
	sc.mu.Unlock()
}

// schedStop switches controlled mode off (tests).
func schedStop() {
	sc.mu.Lock()
	ctl = false
	if sc.mon != nil {
		sc.mon.t.Stop()
	}
	sc.flushOut()
	sc.mu.Unlock()
}

// schedFile notes the sites of one instrumented file (RegisterFile's
// flat list of (line, col, func) triples) and returns their first ID:
// base when the recorder numbered them, else sched's own numbering.
func schedFile(file string, sites []uint32, base uint32) uint32 {
	schedLock()
	defer sc.mu.Unlock()
	n := uint32(len(sites) / 3)
	if base == 0 {
		if sc.nsites == 0 {
			sc.nsites = 1
		}
		base = sc.nsites
		sc.nsites += n
	}
	var old []schedSite
	if p := sc.sites.Load(); p != nil {
		old = *p
	}
	ns := make([]schedSite, max(len(old), int(base+n)))
	copy(ns, old)
	for k := uint32(0); k < n; k++ {
		ns[base+k] = matchSite(sc.pair, file, int(sites[3*k]), int(sites[3*k+1]))
	}
	sc.sites.Store(&ns)
	return base
}

// siteOf returns the site's name and whether it is a statement of the pair.
func siteOf(site uint32) schedSite {
	if p := sc.sites.Load(); p != nil && int(site) < len(*p) {
		return (*p)[site]
	}
	return schedSite{}
}

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
	case sched.KindLock:
		if l := sc.locks[p.Obj]; l != nil {
			return l.writer == nil && l.readers <= 0
		}
	case sched.KindRLock:
		if l := sc.locks[p.Obj]; l != nil {
			return l.writer == nil
		}
	case sched.KindWait:
		if g.ptr != nil && unsafe.Sizeof(sync.WaitGroup{}) == 16 {
			// WaitGroup.state: the counter in the high 32 bits.
			return int32((*atomic.Uint64)(g.ptr).Load()>>32) == 0
		}
	case sched.KindOnce:
		if g.ptr != nil {
			if (*atomic.Bool)(g.ptr).Load() {
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
			if vtime && len(sc.vc.pending) > 0 && sc.stuck.IsZero() {
				sc.stuck = time.Now() // vNext's grace counts from here
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
						continue // the step was its operation's own
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
						continue
					}
				}
				if !present && coming {
					if sc.want.IsZero() {
						sc.want = time.Now()
						schedKick()
					}
					if time.Since(sc.want) < wantTimeout {
						return
					}
					sc.wantName = name // waited long enough for it
				}
			}
			sc.want = time.Time{}
		}
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
		g.since = time.Now()
		sc.running = g
		schedEffects(g)
		schedFlushSoon()
		schedKick()
		g.wake <- struct{}{}
	}
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
			lockOf(p.Obj).writer = g
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
			lockOf(p.Obj).readers--
		}
	case sched.KindOnce:
		if g.ptr != nil && !(*atomic.Bool)(g.ptr).Load() {
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
	o.since = time.Now()
	schedKick()
}

func schedNote(n sched.Note) {
	if sc.out != nil {
		sc.out.WriteString(sched.FormatNote(n))
		sc.flushOut()
	}
	if n.Kind == "departure" && clipStop && !sc.stopping {
		// Finish takes sc.mu (held here) to flush the schedule.
		sc.stopping = true
		go func() {
			Finish()
			schedExit(sched.DepartedExit)
		}()
	}
}

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
	for _, g := range sc.all {
		if g.state == sExpected && now.Sub(g.since) > expectTimeout {
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
var schedArriving atomic.Int32

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

func ctlLock(p unsafe.Pointer, site uint32)    { ctlSync(sched.KindLock, p, site) }
func ctlUnlock(p unsafe.Pointer, site uint32)  { ctlSync(sched.KindUnlock, p, site) }
func ctlRLock(p unsafe.Pointer, site uint32)   { ctlSync(sched.KindRLock, p, site) }
func ctlRUnlock(p unsafe.Pointer, site uint32) { ctlSync(sched.KindRUnlock, p, site) }
func ctlDone(p unsafe.Pointer, site uint32)    { ctlSync(sched.KindDone, p, site) }
func ctlWait(p unsafe.Pointer, site uint32)    { ctlSync(sched.KindWait, p, site) }
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
