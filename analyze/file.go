package analyze

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/alloc"
	"github.com/racekit/racekit/detect/clock"
	"github.com/racekit/racekit/detect/deadlock"
	"github.com/racekit/racekit/detect/leak"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/report"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// analyzeFile is Trace of an open trace.
func analyzeFile(f *tracefile.File, path string, o Options) (*Analysis, error) {
	meta := f.Meta()
	x, err := newFileAnalysis(meta, path, o)
	if err != nil {
		return nil, err
	}
	dets := x.detectors()
	start := time.Now()
	n, stop, err := RunGuarded(f, o.MemLimit, o.Progress, dets...)
	if err != nil {
		return nil, err
	}
	stopped := stop.Stopped
	a := &Analysis{path: path, Events: n, Elapsed: time.Since(start), Meta: meta}
	a.Program = strings.TrimPrefix(meta.NameOf(0), "program ")
	gids := x.races(a)
	x.cycles(a, gids)
	x.blocked(a, gids, TraceCut(f) || stopped, stopped)
	created := x.st.CreationStacks(meta, gids)
	for i := range a.Results {
		a.Results[i].Created = created
	}
	a.Created = created
	if w, ok := f.Reader.(trace.Warner); ok {
		a.Warns = append(slices.Clone(w.Warnings()), a.Warns...) // the reader's first; before, they replaced --leaks' warning
	}
	x.statsWarnings(a)
	// The detectors' clocks and shadow memory are done with: they need
	// not stay live if LocateHeap reads the trace again (after a stop at
	// the memory limit they are the whole limit).
	x.release()
	clear(dets)
	if err := report.LocateHeap(path, x.allocs, meta, a.Results); err != nil {
		a.Warns = append(a.Warns, "heap blocks of the raced addresses: "+err.Error())
	}

	if w := stop.ForgetWarning(); w != "" {
		a.Warns = append(a.Warns, w)
	}
	if stopped {
		a.Warns = append(a.Warns, stop.Warning(n, a.Goroutines))
	}
	return a, nil
}

// fileAnalysis is the state of analyzeFile: the detectors it runs over the
// trace, and what the options and the run ask of them.
type fileAnalysis struct {
	meta       *trace.Meta
	st         *Stacks
	allocs     *alloc.Log     // the trace's allocations, for the races' heap blocks (kept by st)
	algos      []string       // the race detectors' names
	runs       []*detectorRun // algos' detectors, in their order
	dl         *deadlock.Detector
	lk         *leak.Detector
	leaks      bool     // LeakAlgo asked: the goroutines left blocked are reported leaked
	stalled    bool     // the run stalled (readStall)
	stallTests []string // the tests running when it stalled
}

// newFileAnalysis makes the detectors o asks for, and the leak detector
// for a run that stalled, for the trace with metadata meta at path.
func newFileAnalysis(meta *trace.Meta, path string, o Options) (*fileAnalysis, error) {
	x := &fileAnalysis{meta: meta, st: NewStacks(meta, o.StartFunc), allocs: &alloc.Log{}}
	x.st.allocs = x.allocs
	algos, st := o.Algos, x.st
	if i := slices.Index(algos, DeadlockAlgo); i >= 0 {
		algos = slices.Delete(slices.Clone(algos), i, i+1)
		x.dl = deadlock.New(deadlock.Options{Stack: func(g trace.GID) []trace.Site { return st.Stack(meta, g) }})
	}
	if i := slices.Index(algos, LeakAlgo); i >= 0 {
		algos = slices.Delete(slices.Clone(algos), i, i+1)
		x.leaks = true
	}
	x.stallTests, x.stalled = readStall(path)
	if x.leaks || x.stalled {
		x.lk = leak.New(leak.Options{Stack: func(g trace.GID) []trace.Site { return st.Stack(meta, g) }})
	}
	if len(algos) > 0 && o.New == nil {
		return nil, fmt.Errorf("analyze: no Options.New to make detector %q", algos[0])
	}
	x.algos = algos
	x.runs = make([]*detectorRun, len(algos))
	for i, name := range algos {
		x.runs[i] = newDetectorRun(o.New, name, st, meta, o.Suppress)
		if sup := x.runs[i].sup; sup != nil && sup.rule.ResetCells {
			st.resets = append(st.resets, sup)
		}
	}
	return x, nil
}

// detectorRun is one race detector's run: the races it reported, with the
// stacks of their accesses and the tests they came in.
type detectorRun struct {
	det        detect.Detector
	col        *finding.Collector
	stacks     map[finding.Pair][]trace.Site
	prevStacks map[finding.Pair][]trace.Site
	tests      map[finding.Pair]string
	again      map[finding.Pair][]string
	running    map[finding.Pair][]string
	sup        *suppressor // nil: every race reported
}

// newDetectorRun makes the race detector name with newDet, reporting to a
// sink that keeps the test's races, with their stacks (from st) and tests,
// but those rule suppresses.
func newDetectorRun(newDet func(name string, sink finding.Sink) detect.Detector, name string, st *Stacks, meta *trace.Meta, rule Suppress) *detectorRun {
	r := &detectorRun{col: finding.NewCollector(), stacks: map[finding.Pair][]trace.Site{}, prevStacks: map[finding.Pair][]trace.Site{}, tests: map[finding.Pair]string{}, again: map[finding.Pair][]string{}, running: map[finding.Pair][]string{}, sup: newSuppressor(rule, meta)}
	// An observed race is reported as its access runs, as go test -race
	// reports it: the tests active then fail with it. A predicted one was
	// not reported by any run.
	observed := name == "hb" || name == "fasttrack"
	// At the access, not at the goroutine's latest event: a predictive
	// detector reports after later events of it.
	stacks := func(race *finding.Race) (cur, prev []trace.Site) {
		if cur = st.stackAt(meta, race.Cur); cur == nil {
			cur = st.Stack(meta, race.Cur.G)
		}
		return cur, st.stackAt(meta, race.Prev)
	}
	sink := finding.SinkFunc(func(race *finding.Race) {
		// A race is the test's when its later access is: a
		// predictive detector reports when it analyzes a window,
		// which may be after the start for a race before it.
		if !st.started || max(race.Cur.Seq, race.Prev.Seq) < st.startSeq {
			return
		}
		if r.sup.applies(race) && !r.sup.seen(race) {
			return
		}
		p := race.Pair()
		test := st.testOf(race)
		if observed {
			test = st.reportedIn(test)
		}
		_, known := r.stacks[p]
		// An occurrence that would be reported: the pair's first, or
		// its first in another test (go test -race fails that test too).
		fresh := !known || test != "" && test != r.tests[p] && !slices.Contains(r.again[p], test)
		if !fresh {
			r.col.Report(race)
			return
		}
		var cs, ps []trace.Site
		made := false
		mk := func() ([]trace.Site, []trace.Site) {
			if !made {
				cs, ps = stacks(race)
				made = true
			}
			return cs, ps
		}
		if r.sup.applies(race) && r.sup.drop(race, p, test, mk) {
			return
		}
		if observed {
			for _, other := range st.activeBesides(test) {
				if other != r.tests[p] && !slices.Contains(r.again[p], other) && !slices.Contains(r.running[p], other) {
					r.running[p] = append(r.running[p], other)
				}
			}
		}
		if known {
			r.again[p] = append(r.again[p], test)
		} else {
			r.stacks[p], r.prevStacks[p] = mk()
			if r.prevStacks[p] == nil {
				delete(r.prevStacks, p)
			}
			if test != "" {
				r.tests[p] = test
			}
		}
		r.col.Report(race)
	})
	r.det = newDet(name, sink)
	return r
}

// detectors returns the detectors to run over the trace: the stacks first
// (which also tell the report rules of allocations), then the race
// detectors, the deadlock and the leak detector.
func (x *fileAnalysis) detectors() []detect.Detector {
	dets := []detect.Detector{x.st}
	for _, r := range x.runs {
		dets = append(dets, r.det)
	}
	if x.dl != nil {
		dets = append(dets, x.dl) // after st: a request's stack ends at it
	}
	if x.lk != nil {
		dets = append(dets, x.lk) // after st: an operation's stack ends at it
	}
	return dets
}

// races adds the race detectors' results to a, and returns the goroutines
// of the races kept, whose creation stacks the report shows.
func (x *fileAnalysis) races(a *Analysis) (gids map[trace.GID]bool) {
	// A predicted race that an observing detector also reported is shown
	// once, as observed: prediction adds only what the run did not show.
	observed := map[finding.Pair]bool{}
	for _, r := range x.runs {
		for _, g := range r.col.Groups() {
			if g.Evidence != finding.Predicted {
				observed[g.Pair()] = true
			}
		}
	}
	gids = map[trace.GID]bool{}
	for i, r := range x.runs {
		var gs []finding.Group
		for _, g := range r.col.Groups() {
			if g.Evidence != finding.Predicted || !observed[g.Pair()] {
				gs = append(gs, g)
				gids[g.Cur.G], gids[g.Prev.G] = true, true
			}
		}
		a.Results = append(a.Results, report.Result{Detector: x.algos[i], Groups: gs, Stacks: r.stacks, PrevStacks: r.prevStacks, Tests: r.tests, Again: r.again, Running: r.running})
		a.Races += len(gs)
		if r.sup != nil {
			a.Suppressed += r.sup.n
		}
	}
	return gids
}

// cycles adds the deadlock detector's cycles to a, and their goroutines
// to gids.
func (x *fileAnalysis) cycles(a *Analysis, gids map[trace.GID]bool) {
	if x.dl == nil {
		return
	}
	st := x.st
	for _, c := range x.dl.Cycles() {
		// Only the test's: a cycle whose requests all come before
		// startFunc belongs to the program's start.
		if st.started && c.Deps[0].Seq >= st.startSeq {
			a.Cycles = append(a.Cycles, c)
			for _, d := range c.Deps {
				gids[d.G] = true
			}
		}
	}
}

// blocked adds to a what the leak detector found: the goroutines blocked
// in a run that stalled, and, for LeakAlgo, the leaked ones, unless the
// trace was cut (with a warning, unless stopped: the analysis stopped at
// the memory limit); their goroutines go to gids.
func (x *fileAnalysis) blocked(a *Analysis, gids map[trace.GID]bool, cut, stopped bool) {
	st, lk := x.st, x.lk
	if x.stalled && lk != nil && !cut {
		a.Stalled, a.StallTests = lk.Blocked(), x.stallTests
		for _, l := range a.Stalled {
			gids[l.G] = true
		}
	}
	if !x.leaks {
		lk = nil
	}
	if lk != nil && cut {
		if !stopped {
			a.Warns = append(a.Warns, "--leaks: the run did not finish (its trace has no end block): goroutines blocked when it stopped are not reported as leaked")
		}
		lk = nil
	}
	if lk != nil {
		for _, l := range lk.Leaks() {
			// Only the test's, as for cycles.
			if st.started && l.Ops[0].Seq >= st.startSeq {
				a.Leaks = append(a.Leaks, l)
				gids[l.G] = true
			}
		}
	}
}

// statsWarnings adds to a the goroutines and clock width the race
// detectors report, and warns of the races their bounded clocks may have
// missed.
func (x *fileAnalysis) statsWarnings(a *Analysis) {
	for i, r := range x.runs {
		s, ok := r.det.(detect.Stats)
		if !ok {
			continue
		}
		st := s.Stats()
		a.Goroutines, a.ClockIDs = max(a.Goroutines, st["goroutines"]), max(a.ClockIDs, st["clock_ids"])
		if n := st["joins_approximated"]; n > 0 {
			a.Warns = append(a.Warns, fmt.Sprintf("%s: %d join(s) of goroutines whose final clock was let go (past %d retired clock entries) joined the clocks of all those let go: races with them may be missed", x.algos[i], n, clock.MaxRetired()))
		}
		if n := st["chan_msgs_folded"]; n > 0 {
			a.Warns = append(a.Warns, fmt.Sprintf("%s: channels' per-message clocks passed %d MB: %d time(s) a channel's were merged (each of its later operations ordered after all its earlier ones): races ordered only by those messages may be missed", x.algos[i], clock.MaxMsgBytes()>>20, n))
		}
		if n := st["ids_recycled_unordered"]; n > 0 {
			a.Warns = append(a.Warns, fmt.Sprintf("%s: %d goroutine(s) that ended unordered with later ones gave their clock ID to a later goroutine, to keep clocks at %d entries: races with their accesses may be missed", x.algos[i], n, clock.MaxIDs()))
		}
		if n := st["ids_preempted"]; n > 0 {
			a.Warns = append(a.Warns, fmt.Sprintf("%s: more goroutines alive at once than %d clock entries: %d time(s) an alive goroutine lent its clock ID to another (as Go's race detector lends its slots): races with its accesses until then may be missed", x.algos[i], clock.MaxIDs(), n))
		}
	}
}

// release lets go of the detectors, so that the garbage collector may
// free their state.
func (x *fileAnalysis) release() {
	for _, r := range x.runs {
		r.det = nil
	}
	x.st, x.dl, x.lk = nil, nil, nil
}
