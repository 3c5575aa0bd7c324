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
// its way into a point (schedArriving), and, for up to transitCap, one
// blocked while a goroutine rt let go towards its operation (parked in it,
// or expected) is still runnable on a loaded machine; likewise an expected
// goroutine that is runnable past expectTimeout. One that is blocked, or gone, runs
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
// and none is enabled, or every goroutine is parked (none at a point: a
// receive waiting for a waiter whose Signal was lost) with none running
// free, and nobody runs and nobody is expected for RACEKIT_SCHED_DEADLOCK,
// the program is deadlocked (Algorithm 1, line 31): rt writes each
// waiting and parked goroutine's operation to the schedule and to stderr,
// and exits with status 3.
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
	"strconv"
	"strings"
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
	// The monitor's first wait past its timeout for g on its way (or its
	// partner), since g was chosen or expected: inTransit.
	transitFrom time.Time
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

// lockState is what rt knows of a lock under control: its holder or its
// readers, and for an RWMutex a writer parked in Lock until the readers
// leave. sync.RWMutex lets no new reader in while a writer waits (a
// recursive RLock deadlocks against it: Go's read-write-read), so a
// writer enters Lock while readers hold the lock, and parks there.
type lockState struct {
	writer  *sg
	readers int
	pending *sg
}

// schedT is the scheduler's state, under mu.
type schedT struct {
	mu       OwnMutex
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
	sites  OwnPointer[[]schedSite]
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
	settleWait    = 100 * time.Millisecond // schedSettle
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
	case "delayfuzzer":
		strat = sched.NewDelayFuzzer(seed)
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
		fmt.Fprintf(os.Stderr, "racekit: RACEKIT_SCHED=%s: want random, racefuzzer, deadlockfuzzer, delayfuzzer, atomfuzzer, replay or clip\n", mode)
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
	departExit.Store(false)
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
	noteOwnFD(ownScheduleFD, out)
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
