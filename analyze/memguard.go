package analyze

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/trace"
)

// The detectors keep a vector clock per goroutine and per sync object, as
// wide as the goroutines alive at once: a test with thousands of
// goroutines passing a million messages over channels of their own needs
// more memory than the machine has (watermill's pub/sub tests:
// bench/results/corpus/run-session34), and a cell per address accessed
// grows with the run (a compressor's byte loops over fresh buffers:
// klauspost/pgzip). Rather than take the machine down, an analysis whose
// process's heap passes MemLimit first forgets its shadow memory and goes
// on, checking the accesses after that point among themselves; if its
// detectors cannot forget, or the heap stays near the limit without the
// shadow memory, it stops reading its trace. Either is said: the races of
// the events read are reported, those that span a forgetting point or
// fall after a stop are not checked.

// errMemLimit stops an analysis whose heap passed its limit.
var errMemLimit = errors.New("analysis memory limit reached")

// MemLimit is the heap, in bytes, past which an analysis stops:
// RACEKIT_ANALYSIS_MEM (bytes, or with a K, M or G suffix), else 40% of
// the machine's memory, else 8 GiB.
var MemLimit = sync.OnceValue(func() uint64 {
	if s := os.Getenv("RACEKIT_ANALYSIS_MEM"); s != "" {
		if n, err := parseBytes(s); err == nil && n > 0 {
			return n
		}
	}
	if n := totalMemory(); n > 0 {
		return n / 10 * 4 // the process heap runs past it between looks, and the test binary needs room too
	}
	return 8 << 30
})

// gcLimitOnce sets the process's GC memory limit below MemLimit, once. A
// large analysis holds a large live heap (a shadow cell per word the run
// touched); at GOGC's default the heap grows to twice that before a
// collection, so garbage alone stopped analyses whose live state fit. A
// limit the user set (GOMEMLIMIT) stays. Under that limit the GC runs
// at analysisGCPercent, unless the user set GOGC: most of an analysis's
// heap lives to its end, and each cycle marks all of it again
// (docs/benchmarks.md, "Atomic operations as one record").
var gcLimitOnce sync.Once

const analysisGCPercent = 200

func setGCLimit() {
	gcLimitOnce.Do(func() {
		if debug.SetMemoryLimit(-1) == math.MaxInt64 {
			debug.SetMemoryLimit(int64(MemLimit() / 10 * 9))
		}
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(analysisGCPercent)
		}
	})
}

// parseBytes reads 123, 123K, 123M or 123G.
func parseBytes(s string) (uint64, error) {
	mult := uint64(1)
	switch strings.ToUpper(s[len(s)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n * mult, err
}

// totalMemory is MemTotal of /proc/meminfo in bytes (0 where there is none).
func totalMemory() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			fs := strings.Fields(v)
			if n, err := strconv.ParseUint(fs[0], 10, 64); err == nil {
				return n << 10
			}
		}
	}
	return 0
}

// heapBytes is the live and not yet swept heap of the process (a variable
// for the tests).
var heapBytes = func() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// MemStop says whether a guarded run stopped at its memory limit, and at
// what heap, and whether its detectors forgot their shadow memory to stay
// under it: Forgot times, first after event FirstForget, last after
// LastForget.
type MemStop struct {
	Stopped                 bool
	Heap, Limit             uint64
	Forgot                  int
	FirstForget, LastForget int64
}

// collect is runtime.GC (a variable for the tests): after its detectors
// forgot, the heap is looked at again once their state is freed.
var collect = runtime.GC

// RunGuarded is detect.RunChecked under the memory guard: the run stops,
// its detectors finished, when the process's heap passes limit (0:
// MemLimit(), with the GC's limit set below it). The heap is looked at
// when progress is due (progress, nil for none, is called then): no cost
// per event. Every analysis of a whole trace goes through it, racekit
// analyze's too, which took 12 GB of a 24 GB machine on ants' 2.4 GB
// trace before the guard reached it.
func RunGuarded(src trace.Reader, limit uint64, progress func(n int64), dets ...detect.Detector) (int64, MemStop, error) {
	if limit == 0 {
		limit = MemLimit()
		setGCLimit()
	}
	stop := MemStop{Limit: limit}
	run := guarded.enter()
	var regrown uint64 // heap past which the detectors forget again
	n, err := detect.RunChecked(src, func(n int64) error {
		if progress != nil {
			progress(n)
		}
		stop.Heap = heapBytes()
		// Shadow memory first (a cell per address the run touched, most
		// of a long run's state): the largest run forgets it below the
		// limit, before the GC, whose own limit is 9/10 of it, spends the
		// run collecting, and goes on checking the accesses after that
		// point. Once more when the heap has grown by an eighth of the
		// limit since, not at every look while clocks hold it up.
		if stop.Heap > limit/4*3 && stop.Heap > regrown && guarded.largest(run, n) && forgetAll(dets) {
			collect()
			stop.Heap = heapBytes()
			regrown = stop.Heap + limit/8
			if stop.Forgot++; stop.Forgot == 1 {
				stop.FirstForget = n
			}
			stop.LastForget = n
		}
		// Then stop: the detectors cannot forget, or what remains
		// (clocks, histories) passed the limit.
		if guarded.over(run, n, stop.Heap, limit, time.Now()) {
			return errMemLimit
		}
		return nil
	}, dets...)
	guarded.leave(run, errors.Is(err, errMemLimit), time.Now())
	if errors.Is(err, errMemLimit) {
		stop.Stopped = true
		for _, d := range dets {
			d.Finish()
		}
		return n, stop, nil
	}
	return n, stop, err
}

// forgetAll makes each detector of dets that can forget its per-address
// state do so, and reports whether one did.
func forgetAll(dets []detect.Detector) bool {
	forgot := false
	for _, d := range dets {
		if f, ok := d.(detect.Forgetter); ok {
			f.Forget()
			forgot = true
		}
	}
	return forgot
}

// guarded holds the process's guarded runs: racekit test analyzes the
// traces of several test binaries at once, and the heap the guard reads
// is all of theirs. Past the limit, the run that has read the most events
// stops, not whichever looks first (a small analysis beside a large one
// stopped and was told its clocks took the whole limit). After a run
// stopped, no other stops until the heap is back under the limit or for
// stoppedFor: its state is freed when its caller is done with it, and
// would meanwhile stop the next largest too. Past the limit by a quarter,
// any run stops.
var guarded runs

const stoppedFor = 30 * time.Second

type runs struct {
	mu   sync.Mutex
	runs map[*guardedRun]bool
}

// guardedRun is one guarded run: the events it read, and when it
// stopped at the limit (zero: it did not).
type guardedRun struct {
	events  int64
	stopped time.Time
}

func (r *runs) enter() *guardedRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs == nil {
		r.runs = map[*guardedRun]bool{}
	}
	g := &guardedRun{}
	r.runs[g] = true
	return g
}

// leave ends g: kept as stopped when it stopped at the limit.
func (r *runs) leave(g *guardedRun, stopped bool, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if stopped {
		g.stopped = now
		return
	}
	delete(r.runs, g)
}

// largest reports whether g, after n events, has read the most events of
// the runs that have not stopped.
func (r *runs) largest(g *guardedRun, n int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	g.events = n
	for o := range r.runs {
		if o != g && o.stopped.IsZero() && o.events > n {
			return false
		}
	}
	return true
}

// over reports whether g, after n events with the process's heap at
// heap, stops.
func (r *runs) over(g *guardedRun, n int64, heap, limit uint64, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	g.events = n
	for o := range r.runs {
		if !o.stopped.IsZero() && (heap <= limit || now.Sub(o.stopped) > stoppedFor) {
			delete(r.runs, o) // its state is freed, or should be by now
		}
	}
	switch {
	case heap <= limit:
		return false
	case heap > limit+limit/4:
		return true
	}
	for o := range r.runs {
		if o != g && (o.events > g.events || !o.stopped.IsZero()) {
			return false // the larger one stops, or one stopped and its state is not freed yet
		}
	}
	return true
}

// Warning is the warning of a run that stopped after n events, of a trace
// with the given goroutines (0: not counted).
func (s MemStop) Warning(n, goroutines int64) string {
	gs := ""
	if goroutines > 0 {
		gs = fmt.Sprintf("%d goroutines, ", goroutines)
	}
	return fmt.Sprintf("the analysis stopped after %d events: its clocks and shadow memory, with those of the analyses beside it, took %d MB (limit %d MB; the largest analysis stops; %sa clock per goroutine and per sync object as wide as the goroutines alive at once, a cell per word accessed): races in the rest of the run are not checked; RACEKIT_ANALYSIS_MEM raises the limit",
		n, s.Heap>>20, s.Limit>>20, gs)
}

// ForgetWarning is the warning of a run whose detectors forgot their
// shadow memory ("" if they did not).
func (s MemStop) ForgetWarning() string {
	if s.Forgot == 0 {
		return ""
	}
	when := fmt.Sprintf("after event %d", s.FirstForget)
	if s.Forgot > 1 {
		when = fmt.Sprintf("%d times, first after event %d, last after event %d", s.Forgot, s.FirstForget, s.LastForget)
	}
	return fmt.Sprintf("the analysis forgot the accesses it had checked (%s) to stay under its memory limit of %d MB (a cell per word accessed): a race between an access before such a point and one after it is not checked; RACEKIT_ANALYSIS_MEM raises the limit",
		when, s.Limit>>20)
}
