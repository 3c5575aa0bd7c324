package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/clock"
	"github.com/racekit/racekit/detect/deadlock"
	"github.com/racekit/racekit/detect/leak"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/instrument"
	"github.com/racekit/racekit/report"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// frontendFlags are the flags racekit run and racekit test share.
type frontendFlags struct {
	algo      *string
	keep      *string
	include   *string
	exclude   *string
	deps      *bool
	tags      *string
	verbose   *bool
	predict   *bool
	deadlocks *bool
	leaks     *bool
	// leaksIgnore: functions whose leaks --leaks does not report.
	leaksIgnore *string
	quiet       *bool // no progress lines on stderr
}

func addFrontendFlags(fs *flag.FlagSet) *frontendFlags {
	ff := addBuildFlags(fs)
	ff.algo = fs.String("algo", "fasttrack", "detectors to run on each trace, comma-separated: "+algoNames())
	ff.keep = fs.String("keep-trace", "", "copy each trace into this directory (for racekit analyze)")
	ff.predict = fs.Bool("predict", false, "also report the races other interleavings would show (rdit), labelled as predicted")
	ff.deadlocks = fs.Bool("deadlocks", false, "also report lock-order cycles other interleavings could deadlock on (iGoodlock, as racekit deadlocks), labelled potential")
	ff.leaks = fs.Bool("leaks", false, "also report goroutines the run left blocked forever on channel, lock, WaitGroup or Cond operations (as racekit leaks)")
	ff.quiet = fs.Bool("q", false, "print no progress lines on stderr (an analysis longer than 5s says how it goes every 10s)")
	ff.leaksIgnore = fs.String("leaks-ignore", "", "with --leaks, comma-separated functions (pkg.F, pkg.(*T).M): a leak blocked with one of them on its stack is not reported (goleak's IgnoreAnyFunction)")
	return ff
}

// addBuildFlags defines the flags of the instrumented build alone (racekit
// fuzz, hatch and replay, which choose their own detectors): algo, keep
// and predict stay nil.
func addBuildFlags(fs *flag.FlagSet) *frontendFlags {
	return &frontendFlags{
		include: fs.String("include", "", "comma-separated import-path patterns (... wildcard) to trace besides the main module's packages, with -deps=false"),
		deps:    fs.Bool("deps", true, "trace the dependency modules' packages too, as go test -race instruments them (the standard library is never traced); -deps=false traces the main module's packages and -include's"),
		exclude: fs.String("exclude", "", "comma-separated import-path patterns never to trace"),
		tags:    fs.String("tags", "", "build tags, as go build -tags"),
		verbose: fs.Bool("stats", false, "print racekit's own progress and counters to stderr (go test's -v is go test's)"),
	}
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func (ff *frontendFlags) buildFlags() []string {
	if *ff.tags != "" {
		return []string{"-tags=" + *ff.tags}
	}
	return nil
}

// checkAlgos validates -algo.
func (ff *frontendFlags) checkAlgos(c *command) ([]string, bool) {
	names := splitList(*ff.algo)
	if len(names) == 0 {
		c.errorf("-algo names no detector")
		return nil, false
	}
	for _, n := range names {
		if _, ok := algorithms[n]; !ok {
			c.errorf("unknown -algo %q (want %s)", n, algoNames())
			return nil, false
		}
	}
	if *ff.predict && !slices.Contains(names, "rdit") {
		names = append(names, "rdit")
	}
	if *ff.deadlocks {
		names = append(names, deadlockAlgo)
	}
	if *ff.leaks {
		names = append(names, leakAlgo)
	}
	return names, true
}

// ignoredLeaks is --leaks-ignore's list of functions.
func (ff *frontendFlags) ignoredLeaks() []string {
	return splitList(*ff.leaksIgnore)
}

// prepare instruments the packages; errors are printed.
func prepare(c *command, ff *frontendFlags, patterns []string, tests bool) (*instrument.Prepared, bool) {
	start := time.Now()
	prep, err := instrument.Prepare(instrument.Config{
		Patterns:   patterns,
		Tests:      tests,
		Include:    splitList(*ff.include),
		Deps:       *ff.deps,
		Exclude:    splitList(*ff.exclude),
		BuildFlags: ff.buildFlags(),
		Log:        os.Stderr,
	})
	if err != nil {
		c.errorf("%v", err)
		return nil, false
	}
	if *ff.verbose {
		fmt.Fprintf(os.Stderr, "racekit %s: instrumented %d files of %d packages in %v\n", c.name, prep.Files, len(prep.Instrumented), time.Since(start).Round(time.Millisecond))
		for _, s := range prep.Skipped {
			fmt.Fprintf(os.Stderr, "racekit %s: not traced: %s: %s\n", c.name, s.Pkg, s.Reason)
		}
	}
	return prep, true
}

// goCommand returns a go command with the instrumented build's flags and
// environment; output goes to the user.
func goCommand(prep *instrument.Prepared, verb string, args ...string) *exec.Cmd {
	all := append([]string{verb}, prep.BuildArgs()...)
	all = append(all, args...)
	cmd := exec.Command("go", all...)
	cmd.Env = append(os.Environ(), prep.Env...)
	cmd.Stdin = os.Stdin
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	return cmd
}

// frame is one entry of a goroutine's shadow call stack, rebuilt from
// FuncEnter/FuncExit: the function (its declaration's site), the site of
// the last event the frame executed, and the frame as a node of the
// goroutine's stack history.
type frame struct {
	fn, cur trace.SiteID
	node    *snode
}

// snode is a frame of a stack as it was when the frame was entered: its
// function, the site its caller had reached (the call's line, as far as
// the trace knows it: the caller's last event) and the caller's node. A
// stack at any past moment is its innermost node; nodes are shared and
// never change, so keeping one costs nothing more than the node.
type snode struct {
	fn, call trace.SiteID
	parent   *snode
}

// histEntry says that from event seq on the goroutine's innermost frame
// was top (nil: no frame).
type histEntry struct {
	seq uint64
	top *snode
}

// histMax bounds the stack history kept per goroutine (as Go's race
// detector's history_size): a previous access older than the history's
// last histMax stack changes of its goroutine is shown at its site only.
const histMax = 1 << 13

// gstack is one goroutine's shadow stack, stack history and test.
type gstack struct {
	frames  []frame
	hist    []histEntry
	trimmed bool   // entries were dropped from hist
	test    string // the test the goroutine runs (or was created by)
}

// creation is where a goroutine was created: its parent's stack then.
type creation struct {
	top  *snode
	site trace.SiteID
}

// TestMarkFile is the file of the sites rt/rttest records a test's name
// at (rttest.markFile): a release of a fresh object, by the test's
// goroutine, at a site whose function is the test's name.
const TestMarkFile = "racekit:test"

// stacks tracks every goroutine's shadow stack while a trace is read. It is
// a detect.Detector placed before the real detectors, so that a race they
// report sees the stack as of its current access; the stack history gives
// the previous access's, and each fork the child's creation stack. It
// also opens the reporting gate at the first entry into startFunc (""
// opens it at once).
type stacks struct {
	m         map[trace.GID]*gstack
	lastG     trace.GID // the goroutine of the last event, and its stack:
	last      *gstack   // most events follow one of the same goroutine
	created   map[trace.GID]creation
	meta      *trace.Meta
	startFunc string
	started   bool
	startSeq  uint64 // the seq of startFunc's entry
}

func newStacks(meta *trace.Meta, startFunc string) *stacks {
	return &stacks{m: map[trace.GID]*gstack{}, created: map[trace.GID]creation{}, meta: meta, startFunc: startFunc, started: startFunc == ""}
}

func (s *stacks) Finish() {}

func (s *stacks) g(id trace.GID) *gstack {
	if s.last != nil && id == s.lastG {
		return s.last
	}
	st := s.m[id]
	if st == nil {
		st = &gstack{}
		s.m[id] = st
	}
	s.lastG, s.last = id, st
	return st
}

func (st *gstack) top() *snode {
	if len(st.frames) == 0 {
		return nil
	}
	return st.frames[len(st.frames)-1].node
}

// changed records that the stack changed at event seq.
func (st *gstack) changed(seq uint64) {
	if len(st.hist) >= 2*histMax {
		st.hist = append(st.hist[:0], st.hist[len(st.hist)-histMax:]...)
		st.trimmed = true
	}
	st.hist = append(st.hist, histEntry{seq, st.top()})
}

func (s *stacks) Handle(e *trace.Event) {
	if !s.started && e.Op == trace.OpFuncEnter && s.meta.Site(e.Site).Func == s.startFunc {
		s.started, s.startSeq = true, e.Seq
	}
	st := s.g(e.G)
	switch e.Op {
	case trace.OpFuncEnter:
		call := trace.NoSite
		if len(st.frames) > 0 {
			call = st.frames[len(st.frames)-1].cur
		}
		st.frames = append(st.frames, frame{fn: e.Site, cur: e.Site, node: &snode{fn: e.Site, call: call, parent: st.top()}})
		st.changed(e.Seq)
	case trace.OpFuncExit:
		// Pop to the frame of this function (a frame left by a panic
		// that was recovered further up goes with it).
		for i := len(st.frames) - 1; i >= 0; i-- {
			if st.frames[i].fn == e.Site {
				clear(st.frames[i:])
				st.frames = st.frames[:i]
				break
			}
		}
		st.changed(e.Seq)
	case trace.OpFork:
		child := trace.GID(e.Obj)
		s.created[child] = creation{top: st.top(), site: e.Site}
		if st.test != "" {
			s.g(child).test = st.test
		}
	case trace.OpSyncRelease:
		if site := s.meta.Site(e.Site); site.File == TestMarkFile {
			st.test = site.Func
			return
		}
	}
	if e.Op != trace.OpFuncEnter && e.Op != trace.OpFuncExit && len(st.frames) > 0 && e.Site != trace.NoSite {
		st.frames[len(st.frames)-1].cur = e.Site
	}
}

// stack returns g's stack, innermost first: each frame at the last site it
// executed, named by its function.
func (s *stacks) stack(m *trace.Meta, g trace.GID) []trace.Site {
	st := s.m[g]
	if st == nil {
		return nil
	}
	out := make([]trace.Site, 0, len(st.frames))
	for i := len(st.frames) - 1; i >= 0; i-- {
		out = append(out, frameSite(m, st.frames[i].fn, st.frames[i].cur))
	}
	return out
}

// stackAt returns the stack of access a as it was when a was made, from
// its goroutine's stack history; nil when the history no longer reaches
// back to it.
func (s *stacks) stackAt(m *trace.Meta, a finding.Access) []trace.Site {
	st := s.m[a.G]
	if st == nil {
		return nil
	}
	i := sort.Search(len(st.hist), func(i int) bool { return st.hist[i].seq > a.Seq })
	if i == 0 {
		if st.trimmed {
			return nil
		}
		return []trace.Site{m.Site(a.Site)}
	}
	return nodeStack(m, st.hist[i-1].top, a.Site)
}

// nodeStack is the stack whose innermost frame is top, at site.
func nodeStack(m *trace.Meta, top *snode, site trace.SiteID) []trace.Site {
	if top == nil {
		return []trace.Site{m.Site(site)}
	}
	out := []trace.Site{frameSite(m, top.fn, site)}
	for n := top; n.parent != nil; n = n.parent {
		out = append(out, frameSite(m, n.parent.fn, n.call))
	}
	return out
}

// frameSite is a frame of function fn at site cur (the function's own
// site when cur is unknown).
func frameSite(m *trace.Meta, fn, cur trace.SiteID) trace.Site {
	if cur == trace.NoSite {
		cur = fn
	}
	site := m.Site(cur)
	site.Func = m.Site(fn).Func
	return site
}

// creationStacks returns the creation stacks of the goroutines of results'
// races.
func (s *stacks) creationStacks(m *trace.Meta, gids map[trace.GID]bool) map[trace.GID][]trace.Site {
	out := map[trace.GID][]trace.Site{}
	for g := range gids {
		if c, ok := s.created[g]; ok {
			out[g] = nodeStack(m, c.top, c.site)
		}
	}
	return out
}

// analysis is what the detectors found in one trace.
type analysis struct {
	path    string
	program string // the traced binary's main package, from the trace
	events  int64
	elapsed time.Duration
	meta    *trace.Meta
	results []report.Result
	races   int
	// cycles are the lock-order cycles (with deadlockAlgo among the
	// algorithms), created the creation stacks of their goroutines.
	cycles []deadlock.Cycle
	// leaks are the goroutines left blocked on channel operations (with
	// leakAlgo among the algorithms).
	leaks []leak.Leak
	// stalled: the run stalled (rt.FinishStalled) while stallTests ran;
	// these are its blocked goroutines, the deadlock.
	stalled    []leak.Leak
	stallTests []string
	created    map[trace.GID][]trace.Site
	warns      []string
	// goroutines and the width of the detectors' vector clocks: IDs of
	// goroutines that ended are recycled (detect/clock, "Recycled IDs").
	goroutines, clockIDs int64
}

// analyzeTrace runs the detectors over one trace, keeping for each
// distinct race the stacks of both accesses, the creation stacks of their
// goroutines and the test the current access ran in.
func analyzeTrace(path string, algos []string) (*analysis, error) {
	return analyzeTraceFrom(path, algos, "", nil)
}

// analyzeTraceFrom is analyzeTrace counting only the races whose second
// access comes at or after the first entry into function startFunc (all
// races when startFunc is ""), calling progress (if not nil) with the
// events read so far every few million events.
func analyzeTraceFrom(path string, algos []string, startFunc string, progress func(n int64)) (*analysis, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return analyzeFile(f, path, algos, startFunc, progress)
}

// analyzeFollowing is analyzeTrace of a trace its test binary is still
// writing (tracefile.Follow): it ends after the binary does. A run that
// stalled is analyzed again from its finished file, since what the stall
// report needs is chosen before the events are read (readStall).
func analyzeFollowing(path string, algos []string, progress func(n int64)) (*analysis, error) {
	f, err := tracefile.Follow(path)
	if err != nil {
		return nil, err
	}
	a, err := analyzeFile(f, path, algos, "", progress)
	f.Close()
	if _, stalled := readStall(path); stalled && err == nil && a.stallTests == nil {
		return analyzeTraceFrom(path, algos, "", progress)
	}
	return a, err
}

// analyzeFile is analyzeTraceFrom of an open trace.
func analyzeFile(f *tracefile.File, path string, algos []string, startFunc string, progress func(n int64)) (*analysis, error) {
	meta := f.Meta()
	st := newStacks(meta, startFunc)
	type run struct {
		det        detect.Detector
		col        *finding.Collector
		stacks     map[finding.Pair][]trace.Site
		prevStacks map[finding.Pair][]trace.Site
		tests      map[finding.Pair]string
	}
	var dl *deadlock.Detector
	if i := slices.Index(algos, deadlockAlgo); i >= 0 {
		algos = slices.Delete(slices.Clone(algos), i, i+1)
		dl = deadlock.New(deadlock.Options{Stack: func(g trace.GID) []trace.Site { return st.stack(meta, g) }})
	}
	var lk *leak.Detector
	leaks := false
	if i := slices.Index(algos, leakAlgo); i >= 0 {
		algos = slices.Delete(slices.Clone(algos), i, i+1)
		leaks = true
	}
	stallTests, stalled := readStall(path)
	if leaks || stalled {
		lk = leak.New(leak.Options{Stack: func(g trace.GID) []trace.Site { return st.stack(meta, g) }})
	}
	runs := make([]*run, len(algos))
	for i, name := range algos {
		r := &run{col: finding.NewCollector(), stacks: map[finding.Pair][]trace.Site{}, prevStacks: map[finding.Pair][]trace.Site{}, tests: map[finding.Pair]string{}}
		sink := finding.SinkFunc(func(race *finding.Race) {
			// A race is the test's when its later access is: a
			// predictive detector reports when it analyzes a window,
			// which may be after the start for a race before it.
			if !st.started || max(race.Cur.Seq, race.Prev.Seq) < st.startSeq {
				return
			}
			p := race.Pair()
			if _, ok := r.stacks[p]; !ok {
				// At the access, not at the goroutine's latest event: a
				// predictive detector reports after later events of it.
				if cs := st.stackAt(meta, race.Cur); cs != nil {
					r.stacks[p] = cs
				} else {
					r.stacks[p] = st.stack(meta, race.Cur.G)
				}
				if ps := st.stackAt(meta, race.Prev); ps != nil {
					r.prevStacks[p] = ps
				}
				if g := st.m[race.Cur.G]; g != nil && g.test != "" {
					r.tests[p] = g.test
				} else if g := st.m[race.Prev.G]; g != nil && g.test != "" {
					r.tests[p] = g.test
				}
			}
			r.col.Report(race)
		})
		r.det = algorithms[name].make(sink)
		runs[i] = r
	}
	dets := []detect.Detector{st}
	for _, r := range runs {
		dets = append(dets, r.det)
	}
	if dl != nil {
		dets = append(dets, dl) // after st: a request's stack ends at it
	}
	if lk != nil {
		dets = append(dets, lk) // after st: an operation's stack ends at it
	}
	start := time.Now()
	n, err := detect.RunProgress(f, progress, dets...)
	if err != nil {
		return nil, err
	}
	a := &analysis{path: path, events: n, elapsed: time.Since(start), meta: meta}
	a.program = strings.TrimPrefix(meta.NameOf(0), "program ")
	// A predicted race that an observing detector also reported is shown
	// once, as observed: prediction adds only what the run did not show.
	observed := map[finding.Pair]bool{}
	for _, r := range runs {
		for _, g := range r.col.Groups() {
			if g.Evidence != finding.Predicted {
				observed[g.Pair()] = true
			}
		}
	}
	gids := map[trace.GID]bool{}
	for i, r := range runs {
		var gs []finding.Group
		for _, g := range r.col.Groups() {
			if g.Evidence != finding.Predicted || !observed[g.Pair()] {
				gs = append(gs, g)
				gids[g.Cur.G], gids[g.Prev.G] = true, true
			}
		}
		a.results = append(a.results, report.Result{Detector: algos[i], Groups: gs, Stacks: r.stacks, PrevStacks: r.prevStacks, Tests: r.tests})
		a.races += len(gs)
	}
	if dl != nil {
		for _, c := range dl.Cycles() {
			// Only the test's: a cycle whose requests all come before
			// startFunc belongs to the program's start.
			if st.started && c.Deps[0].Seq >= st.startSeq {
				a.cycles = append(a.cycles, c)
				for _, d := range c.Deps {
					gids[d.G] = true
				}
			}
		}
	}
	if stalled && lk != nil && !traceCut(f) {
		a.stalled, a.stallTests = lk.Blocked(), stallTests
		for _, l := range a.stalled {
			gids[l.G] = true
		}
	}
	if !leaks {
		lk = nil
	}
	if lk != nil && traceCut(f) {
		a.warns = append(a.warns, "--leaks: the run did not finish (its trace has no end block): goroutines blocked when it stopped are not reported as leaked")
		lk = nil
	}
	if lk != nil {
		for _, l := range lk.Leaks() {
			// Only the test's, as for cycles.
			if st.started && l.Ops[0].Seq >= st.startSeq {
				a.leaks = append(a.leaks, l)
				gids[l.G] = true
			}
		}
	}
	created := st.creationStacks(meta, gids)
	for i := range a.results {
		a.results[i].Created = created
	}
	if err := report.LocateHeap(path, meta, a.results); err != nil {
		a.warns = append(a.warns, "heap blocks of the raced addresses: "+err.Error())
	}
	a.created = created
	if w, ok := f.Reader.(trace.Warner); ok {
		a.warns = w.Warnings()
	}
	for i, r := range runs {
		s, ok := r.det.(detect.Stats)
		if !ok {
			continue
		}
		st := s.Stats()
		a.goroutines, a.clockIDs = max(a.goroutines, st["goroutines"]), max(a.clockIDs, st["clock_ids"])
		if n := st["joins_approximated"]; n > 0 {
			a.warns = append(a.warns, fmt.Sprintf("%s: %d join(s) of goroutines whose final clock was let go (past %d retired clock entries) joined the clocks of all those let go: races with them may be missed", algos[i], n, clock.MaxRetired()))
		}
		if n := st["ids_recycled_unordered"]; n > 0 {
			a.warns = append(a.warns, fmt.Sprintf("%s: %d goroutine(s) that ended unordered with later ones gave their clock ID to a later goroutine, to keep clocks at %d entries: races with their accesses may be missed", algos[i], n, clock.MaxIDs()))
		}
	}
	return a, nil
}

// deadlockAlgo is the name --deadlocks adds to the algorithms: the
// lock-order cycles of detect/deadlock, reported beside the races.
const deadlockAlgo = "deadlock"

// leakAlgo is the name --leaks adds: detect/leak's blocked goroutines.
const leakAlgo = "leak"

// readStall reads the file rt writes beside a trace whose run stalled
// (trace.StallSuffix): the tests that were running.
func readStall(path string) (tests []string, ok bool) {
	b, err := os.ReadFile(path + trace.StallSuffix)
	if err != nil {
		return nil, false
	}
	return strings.Fields(string(b)), true
}

// traceCut reports whether f, read to its end, ended without an end block
// (the run crashed or was killed: its goroutines stopped wherever they
// were, which is no leak).
func traceCut(f *tracefile.File) bool {
	c, ok := f.Reader.(interface{ Cut() bool })
	return ok && c.Cut()
}

// print writes the races of one analysis like Go's race detector, then
// its lock-order cycles.
func (a *analysis) print(w io.Writer) error {
	if a.races > 0 {
		if err := report.Text(w, a.meta, a.results); err != nil {
			return err
		}
	}
	if len(a.cycles) > 0 {
		if err := report.Deadlocks(w, a.meta, a.cycles, a.created); err != nil {
			return err
		}
		fmt.Fprintf(w, "Found %d potential deadlock(s)\n", len(a.cycles))
	}
	if len(a.leaks) > 0 {
		if err := report.Leaks(w, a.meta, a.leaks, a.created); err != nil {
			return err
		}
		fmt.Fprintf(w, "Found %d leaked goroutine(s)\n", len(a.leaks))
	}
	if a.stallTests != nil {
		if err := report.Stall(w, a.meta, a.stallTests, a.stalled, a.created); err != nil {
			return err
		}
	}
	return nil
}

// keepTraces copies trace files into dir, streaming (a trace may be
// larger than memory).
func keepTraces(dir string, paths []string) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	for _, p := range paths {
		if err := copyFile(filepath.Join(dir, filepath.Base(p)), p); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
