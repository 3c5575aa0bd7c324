// Package conformance measures racekit against a suite nobody here wrote:
// the Go race detector's regression tests in
// $GOROOT/src/runtime/race/testdata. TestRace* functions have a race,
// TestNoRace* functions have none; "Failing" in a name marks a case Go's
// own detector gets wrong. racekit conformance is a command over it.
//
// [Run] copies the suite into a temporary module, builds it once
// instrumented by racekit and, with Options.Race, once with go test -race,
// runs every test alone in each binary (GOMAXPROCS=1, as Go's own harness
// does) and records per test whether a race was reported ([Case]); with
// Options.Blocking each trace also goes to the deadlock and leak
// detectors. [Print] writes the table, the share of TestRace* tests
// racekit detects, the TestNoRace* tests it wrongly reports and each
// miss; [PrintBlocking] the tests the deadlock and leak detectors
// reported, apart from those the suite does leave blocked.
package conformance

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/finding"
)

// Options are a conformance run's.
type Options struct {
	// Algos are the race detectors run on each test's trace, each made by
	// New (as in analyze.Options).
	Algos []string
	New   func(name string, sink finding.Sink) detect.Detector
	// Env is added to each racekit run's environment: the recording the
	// detectors need (RACEKIT_BARRIERS, RACEKIT_DEDUP), as racekit test
	// sets it.
	Env []string
	// Blocking also runs the deadlock and leak detectors
	// (analyze.DeadlockAlgo, analyze.LeakAlgo) on each trace.
	Blocking bool
	// Race also builds the suite with go test -race and runs each test in
	// that binary, for comparison.
	Race bool
	// Filter, when not nil, keeps only the tests whose name it matches.
	Filter *regexp.Regexp
	// Jobs is the number of tests run in parallel (at least 1).
	Jobs int
	// Verbose keeps racekit's report of each test it found a race in
	// (Case.Report).
	Verbose bool
	// Stdout receives the files left out, the "built in" line and the go
	// commands' output; Stderr their errors and the instrumentation's
	// log. Nil discards.
	Stdout, Stderr io.Writer
}

// Case is one test of the suite and what each detector said of it.
type Case struct {
	Name     string
	WantRace bool // a TestRace* test
	Failing  bool // Go's own detector is known to get it wrong
	// GoRace and Race: go test -race and racekit reported a race.
	GoRace, Race bool
	// Err is why racekit's run or analysis gave no verdict.
	Err string
	// Blocking counts the potential deadlocks and leaks reported
	// (Options.Blocking).
	Blocking int
	// Report is racekit's report when it found a race (Options.Verbose).
	Report string
	// GoRan and Ran: the -race binary and racekit's ran the test.
	GoRan, Ran bool
	Skipped    bool // the test skips itself
}

// Result is a conformance run's outcome.
type Result struct {
	Cases    []*Case // by name
	Blocking bool    // Options.Blocking: the cases' Blocking counts are set
}

// Excluded are the suite's files racekit leaves out, and why.
var Excluded = map[string]string{
	"cgo_test.go":      "needs cgo and internal/testenv",
	"cgo_test_main.go": "a cgo program run by cgo_test.go",
	"synctest_test.go": "needs internal/synctest",
}

// Dir is the suite's directory in the Go installation racekit was built
// with.
func Dir() string {
	return filepath.Join(runtime.GOROOT(), "src", "runtime", "race", "testdata")
}

// Run builds the suite of Dir instrumented (and with -race) and runs each
// of its tests alone in each binary. An error is one of the suite's
// setup or builds; a test's failure to run is its Case.Err.
func Run(opts Options) (*Result, error) {
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.Blocking {
		opts.Algos = append(opts.Algos[:len(opts.Algos):len(opts.Algos)], analyze.DeadlockAlgo, analyze.LeakAlgo)
	}
	dir, err := os.MkdirTemp("", "racekit-conformance-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cases, err := writeSuite(Dir(), dir, &opts)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	bins, err := build(dir, &opts)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.Stdout, "built in %v; running %d tests\n", time.Since(start).Round(time.Millisecond), len(cases))
	runAll(cases, dir, bins, &opts)
	return &Result{Cases: cases, Blocking: opts.Blocking}, nil
}

// writeSuite copies the suite's files from src into dir as a module of
// its own (racetest), leaving out the Excluded ones, and returns the
// tests opts.Filter keeps, by name.
func writeSuite(src, dir string, opts *Options) ([]*Case, error) {
	files, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no tests in %s (%v)", src, err)
	}
	var cases []*Case
	for _, f := range files {
		base := filepath.Base(f)
		if why, ok := Excluded[base]; ok {
			fmt.Fprintf(opts.Stdout, "left out %s: %s\n", base, why)
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		// runtime.RaceDisable exists only in -race builds; in racekit's
		// build it has nothing to disable.
		data = bytes.ReplaceAll(data, []byte("runtime.RaceDisable()"), []byte("func() {}()"))
		if err := os.WriteFile(filepath.Join(dir, base), data, 0o666); err != nil {
			return nil, err
		}
		cases = append(cases, casesIn(data, opts.Filter)...)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	gomod := "module racetest\n\ngo " + goLine(runtime.Version()) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o666); err != nil {
		return nil, err
	}
	return cases, nil
}

var testFuncRE = regexp.MustCompile(`(?m)^func (Test\w+)\(`)

// casesIn returns the tests of a test file's source that filter (when not
// nil) matches, in the source's order.
func casesIn(src []byte, filter *regexp.Regexp) []*Case {
	var cases []*Case
	for _, m := range testFuncRE.FindAllSubmatch(src, -1) {
		name := string(m[1])
		if filter != nil && !filter.MatchString(name) {
			continue
		}
		cases = append(cases, &Case{
			Name:     name,
			WantRace: strings.HasPrefix(name, "TestRace"),
			Failing:  strings.Contains(name, "Failing"),
		})
	}
	return cases
}

// goLine is the go line of runtime.Version()'s version v ("go1.26.8 X:y"
// is 1.26.8).
func goLine(v string) string {
	v = strings.TrimPrefix(v, "go")
	if i := strings.IndexAny(v, " -"); i >= 0 {
		v = v[:i]
	}
	return v
}
