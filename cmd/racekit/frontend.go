package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/instrument"
	"github.com/racekit/racekit/report"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// frontendFlags are the flags racekit run and racekit test share.
type frontendFlags struct {
	algo     *string
	keep     *string
	include  *string
	exclude  *string
	tags     *string
	verbose  *bool
	noReport *bool
	predict  *bool
}

func addFrontendFlags(fs *flag.FlagSet) *frontendFlags {
	ff := addBuildFlags(fs)
	ff.algo = fs.String("algo", "fasttrack", "detectors to run on each trace, comma-separated: "+algoNames())
	ff.keep = fs.String("keep-trace", "", "copy each trace into this directory (for racekit analyze)")
	ff.predict = fs.Bool("predict", false, "also report the races other interleavings would show (rdit), labelled as predicted")
	return ff
}

// addBuildFlags defines the flags of the instrumented build alone (racekit
// fuzz, hatch and replay, which choose their own detectors): algo, keep
// and predict stay nil.
func addBuildFlags(fs *flag.FlagSet) *frontendFlags {
	return &frontendFlags{
		include: fs.String("include", "", "comma-separated import-path patterns (... wildcard) to trace besides the main module's packages"),
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
	return names, true
}

// prepare instruments the packages; errors are printed.
func prepare(c *command, ff *frontendFlags, patterns []string, tests bool) (*instrument.Prepared, bool) {
	start := time.Now()
	prep, err := instrument.Prepare(instrument.Config{
		Patterns:   patterns,
		Tests:      tests,
		Include:    splitList(*ff.include),
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
// FuncEnter/FuncExit: the function (its declaration's site) and the site
// of the last event the frame executed.
type frame struct {
	fn, cur trace.SiteID
}

// stacks tracks every goroutine's shadow stack while a trace is read. It is
// a detect.Detector placed before the real detectors, so that a race they
// report sees the stack as of its current access. It also opens the
// reporting gate at the first entry into startFunc ("" opens it at once).
type stacks struct {
	m         map[trace.GID][]frame
	meta      *trace.Meta
	startFunc string
	started   bool
}

func (s *stacks) Finish() {}

func (s *stacks) Handle(e *trace.Event) {
	if !s.started && e.Op == trace.OpFuncEnter && s.meta.Site(e.Site).Func == s.startFunc {
		s.started = true
	}
	st := s.m[e.G]
	switch e.Op {
	case trace.OpFuncEnter:
		st = append(st, frame{fn: e.Site, cur: e.Site})
	case trace.OpFuncExit:
		// Pop to the frame of this function (a frame left by a panic
		// that was recovered further up goes with it).
		for i := len(st) - 1; i >= 0; i-- {
			if st[i].fn == e.Site {
				st = st[:i]
				break
			}
		}
	default:
		if len(st) > 0 && e.Site != trace.NoSite {
			st[len(st)-1].cur = e.Site
		}
	}
	s.m[e.G] = st
}

// stack returns g's stack, innermost first: each frame at the last site it
// executed, named by its function.
func (s *stacks) stack(m *trace.Meta, g trace.GID) []trace.Site {
	st := s.m[g]
	out := make([]trace.Site, 0, len(st))
	for i := len(st) - 1; i >= 0; i-- {
		site := m.Site(st[i].cur)
		site.Func = m.Site(st[i].fn).Func
		out = append(out, site)
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
	warns   []string
}

// analyzeTrace runs the detectors over one trace, keeping for each
// distinct race the current access's stack.
func analyzeTrace(path string, algos []string) (*analysis, error) {
	return analyzeTraceFrom(path, algos, "")
}

// analyzeTraceFrom is analyzeTrace counting only the races whose second
// access comes at or after the first entry into function startFunc (all
// races when startFunc is "").
func analyzeTraceFrom(path string, algos []string, startFunc string) (*analysis, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	meta := f.Meta()
	st := &stacks{m: map[trace.GID][]frame{}, meta: meta, startFunc: startFunc, started: startFunc == ""}
	type run struct {
		det    detect.Detector
		col    *finding.Collector
		stacks map[finding.Pair][]trace.Site
	}
	runs := make([]*run, len(algos))
	for i, name := range algos {
		r := &run{col: finding.NewCollector(), stacks: map[finding.Pair][]trace.Site{}}
		sink := finding.SinkFunc(func(race *finding.Race) {
			if !st.started {
				return
			}
			p := race.Pair()
			if _, ok := r.stacks[p]; !ok {
				r.stacks[p] = st.stack(meta, race.Cur.G)
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
	start := time.Now()
	n, err := detect.Run(f, dets...)
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
	for i, r := range runs {
		var gs []finding.Group
		for _, g := range r.col.Groups() {
			if g.Evidence != finding.Predicted || !observed[g.Pair()] {
				gs = append(gs, g)
			}
		}
		a.results = append(a.results, report.Result{Detector: algos[i], Groups: gs, Stacks: r.stacks})
		a.races += len(gs)
	}
	if w, ok := f.Reader.(trace.Warner); ok {
		a.warns = w.Warnings()
	}
	return a, nil
}

// print writes the races of one analysis like Go's race detector.
func (a *analysis) print(w io.Writer) error {
	if a.races == 0 {
		return nil
	}
	return report.Text(w, a.meta, a.results)
}

// keepTraces copies trace files into dir.
func keepTraces(dir string, paths []string) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), data, 0o666); err != nil {
			return err
		}
	}
	return nil
}
