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

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/confirm"
	"github.com/racekit/racekit/instrument"
	"github.com/racekit/racekit/progress"
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
	ff.quiet = fs.Bool("q", false, "print no progress lines on stderr (instrumenting, go test and each analysis say every 5s how they go once they take longer)")
	ff.leaksIgnore = fs.String("leaks-ignore", "", "with --leaks, comma-separated functions (pkg.F, pkg.(*T).M): a leak blocked with one of them on its stack is not reported (goleak's IgnoreAnyFunction)")
	return ff
}

// isQuiet reports -q: the command's own -q for fuzz and hatch (whose flag
// sets define it), none for replay, which has no -q.
func (ff *frontendFlags) isQuiet() bool { return ff.quiet != nil && *ff.quiet }

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

// recordEnv is the part of the instrumented program's environment that
// the detectors chosen decide (recordEnvFor), or nothing for a kept trace,
// which racekit analyze may hand to any detector.
func (ff *frontendFlags) recordEnv(algos []string) []string {
	if *ff.keep != "" {
		return nil
	}
	return recordEnvFor(algos)
}

// recordEnvFor is the recording the detectors algos need, no more.
// BarrierPairs (rt/barrier.go: at each call into untraced code, a walk of
// the memory its operands reach) are read by rdit alone; the walk can cost
// more than the rest of the recording (a loop calling math/rand's Intn
// walks the generator's state each time). FastTrack skips an access its
// goroutine repeats in one epoch of its own clock, which only a release
// ends, so for FastTrack alone rt's dedup keeps an epoch across acquires
// (RACEKIT_DEDUP=release, rt/dedup.go dedupAcquires): the other detectors
// see each critical section's accesses or each site. RACEKIT_BARRIERS and
// RACEKIT_DEDUP, when set, decide instead.
func recordEnvFor(algos []string) []string {
	var env []string
	barriers, release := false, true
	for _, a := range algos {
		barriers = barriers || algorithms[a].barriers
		release = release && (a == "fasttrack" || a == analyze.DeadlockAlgo || a == analyze.LeakAlgo)
	}
	if !barriers && os.Getenv("RACEKIT_BARRIERS") == "" {
		env = append(env, "RACEKIT_BARRIERS=0")
	}
	if release && os.Getenv("RACEKIT_DEDUP") == "" {
		env = append(env, "RACEKIT_DEDUP=release")
	}
	return env
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
		names = append(names, analyze.DeadlockAlgo)
	}
	if *ff.leaks {
		names = append(names, analyze.LeakAlgo)
	}
	return names, true
}

// ignoredLeaks is --leaks-ignore's list of functions.
func (ff *frontendFlags) ignoredLeaks() []string {
	return splitList(*ff.leaksIgnore)
}

// prepare instruments the packages; errors are printed.
// toolexec, if not nil, is the -toolexec the build will run under, for
// the overlay (instrument.Config.Toolexec).
func prepare(c *command, ff *frontendFlags, patterns []string, tests bool, toolexec func(overlay string) (string, error)) (*instrument.Prepared, bool) {
	start := time.Now()
	var status instrument.Status
	stop := progress.New(c.name, ff.isQuiet()).Every(status.String)
	prep, err := instrument.Prepare(instrument.Config{
		Patterns:   patterns,
		Tests:      tests,
		Include:    splitList(*ff.include),
		Deps:       *ff.deps,
		Exclude:    splitList(*ff.exclude),
		BuildFlags: ff.buildFlags(),
		Log:        os.Stderr,
		Status:     &status,
		Toolexec:   toolexec,
	})
	stop()
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

// testBinaries instruments the packages and builds the test binary of
// each one that has tests into a new temporary directory (name is its
// prefix), which the caller removes. It prints the error and returns false
// on failure, or when no package has tests.
func testBinaries(c *command, ff *frontendFlags, pkgs []string, name string) ([]*confirm.Target, string, bool) {
	prep, ok := prepare(c, ff, pkgs, true, nil)
	if !ok {
		return nil, "", false
	}
	tmp, err := os.MkdirTemp("", name)
	if err != nil {
		c.errorf("%v", err)
		return nil, "", false
	}
	targets, err := confirm.BuildTargets(prep, ff.buildFlags(), pkgs, tmp)
	if err == nil && len(targets) == 0 {
		err = fmt.Errorf("no test binary: %s has no tests", strings.Join(pkgs, " "))
	}
	if err != nil {
		os.RemoveAll(tmp)
		c.errorf("%v", err)
		return nil, "", false
	}
	return targets, tmp, true
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
