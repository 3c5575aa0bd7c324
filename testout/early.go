package testout

import (
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/trace/tracefile"
)

// earlyAnalyses analyzes each test binary's trace while the binary runs
// (tracefile.Follow), so that a package's verdict comes soon after its
// tests end instead of one analysis later: the detectors take the second
// core while the tests run (issue 32, "the user waits for one, not two").
// A trace is taken up when it appears in the trace directory, looked for
// every earlyScan. RACEKIT_TEST_FOLLOW=0 analyzes each trace after its
// binary instead (the baseline of bench/testwall).
//
// The analyses run at a lower priority than the tests (yieldToTests:
// tests that time themselves failed under racekit where the analysis took
// one of two cores from them); RACEKIT_TEST_NICE=0 runs them at the tests'.
type earlyAnalyses struct {
	dir     string
	options func(progress func(n int64)) analyze.Options
	yield   bool

	mu      sync.Mutex
	started map[string]*earlyAnalysis
	stop    chan struct{}
	wg      sync.WaitGroup
}

const earlyScan = 25 * time.Millisecond

// analysisNice is the nice value of an analysis beside running tests: a
// weight of 110 to their 1,024 where both want a core (Linux's CFS).
const analysisNice = 10

// An earlyAnalysis is one trace's: done is closed when a and err are set.
type earlyAnalysis struct {
	done   chan struct{}
	a      *analyze.Analysis
	err    error
	events atomic.Int64 // read so far
	start  time.Time
}

// startEarly begins watching dir, or returns nil where traces cannot be
// followed (or RACEKIT_TEST_FOLLOW=0).
func startEarly(dir string, options func(progress func(n int64)) analyze.Options) *earlyAnalyses {
	if dir == "" || os.Getenv("RACEKIT_TEST_FOLLOW") == "0" || !tracefile.CanFollow("x."+strconv.Itoa(os.Getpid())+".rkt") {
		return nil
	}
	e := &earlyAnalyses{dir: dir, options: options, started: map[string]*earlyAnalysis{}, stop: make(chan struct{}),
		yield: os.Getenv("RACEKIT_TEST_NICE") != "0"}
	e.wg.Add(1)
	go e.watch()
	return e
}

func (e *earlyAnalyses) watch() {
	defer e.wg.Done()
	t := time.NewTicker(earlyScan)
	defer t.Stop()
	for {
		e.scan()
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
	}
}

// scan starts the analysis of each trace file new in the directory.
func (e *earlyAnalyses) scan() {
	for _, path := range tracefile.List(e.dir) {
		e.mu.Lock()
		_, seen := e.started[path]
		if !seen && tracefile.CanFollow(path) {
			ea := &earlyAnalysis{done: make(chan struct{}), start: time.Now()}
			e.started[path] = ea
			go func() {
				if e.yield {
					yieldToTests()
				}
				ea.a, ea.err = analyze.Follow(path, e.options(ea.events.Store))
				close(ea.done)
			}()
		}
		e.mu.Unlock()
	}
}

// take returns the analysis of path begun early, or nil if there is none
// (the caller analyzes the finished trace itself).
func (e *earlyAnalyses) take(path string) *earlyAnalysis {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started[path]
}

// close stops watching; analyses begun go on until taken.
func (e *earlyAnalyses) close() {
	if e == nil {
		return
	}
	close(e.stop)
	e.wg.Wait()
}
