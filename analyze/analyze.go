// Package analyze runs racekit's detectors over one recorded trace the way
// racekit run and racekit test report it: the chosen race detectors, plus
// lock-order cycles and leaked goroutines on request, and a stalled run's
// deadlock, each finding with the stacks rebuilt from the trace's
// FuncEnter/FuncExit events (Stacks), its goroutines' creation stacks and
// the test it ran in. Any command or benchmark that wants those reports
// from a trace file uses it; the choice of detectors stays the caller's
// (Options.New).
package analyze

import (
	"os"
	"strings"
	"time"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/deadlock"
	"github.com/racekit/racekit/detect/leak"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/report"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// DeadlockAlgo is the name that, among Options.Algos, adds the lock-order
// cycles of detect/deadlock, reported beside the races (--deadlocks).
const DeadlockAlgo = "deadlock"

// LeakAlgo is the name that, among Options.Algos, adds detect/leak's
// goroutines left blocked at the end of the run (--leaks).
const LeakAlgo = "leak"

// Options say which detectors an analysis runs and which findings it keeps.
type Options struct {
	// Algos names the detectors to run: race detectors, each made by
	// New, and DeadlockAlgo and LeakAlgo.
	Algos []string
	// New makes the race detector named name reporting to sink (racekit's
	// -algo table); required when Algos names a race detector.
	New func(name string, sink finding.Sink) detect.Detector
	// StartFunc, when not "", keeps only the findings whose later event
	// comes at or after the first entry into this function.
	StartFunc string
	// Progress, when not nil, is called with the events read so far
	// every few million events.
	Progress func(n int64)
	// MemLimit, when not 0, replaces the package's MemLimit: the heap
	// past which the analysis stops.
	MemLimit uint64
	// Suppress is which observed races are not reported, as go test -race
	// leaves them out (GoRaceSuppress); the zero value reports all.
	Suppress Suppress
}

// Analysis is what the detectors found in one trace.
type Analysis struct {
	path string
	// Program is the traced binary's main package, from the trace.
	Program string
	// Events is the number of events read, in Elapsed.
	Events  int64
	Elapsed time.Duration
	// Meta is the trace's metadata, which the findings' sites refer to.
	Meta *trace.Meta
	// Results holds one result per race detector, in Options.Algos'
	// order, with its distinct races and their stacks; Races counts them.
	Results []report.Result
	Races   int
	// Suppressed counts the occurrences of observed races Options.Suppress
	// left out: with a previous access made on the cell before a race
	// reported there, or with the stacks of a race reported.
	Suppressed int
	// Cycles are the lock-order cycles (with DeadlockAlgo among the
	// algorithms).
	Cycles []deadlock.Cycle
	// Leaks are the goroutines left blocked on channel operations (with
	// LeakAlgo among the algorithms).
	Leaks []leak.Leak
	// Stalled: the run stalled (rt.FinishStalled) while StallTests ran;
	// these are its blocked goroutines, the deadlock.
	Stalled    []leak.Leak
	StallTests []string
	// Created holds the creation stacks of the findings' goroutines.
	Created map[trace.GID][]trace.Site
	// Warns are warnings about the trace and the analysis, to show the
	// user.
	Warns []string
	// Goroutines and ClockIDs are the goroutines and the width of the
	// detectors' vector clocks: IDs of goroutines that ended are
	// recycled (detect/clock, "Recycled IDs").
	Goroutines, ClockIDs int64
}

// Trace runs the detectors over the trace at path, keeping for each
// distinct race the stacks of both accesses, the creation stacks of their
// goroutines and the test the current access ran in.
func Trace(path string, o Options) (*Analysis, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return analyzeFile(f, path, o)
}

// Follow is Trace of a trace its test binary is still writing
// (tracefile.Follow): it ends after the binary does. A run that stalled
// is analyzed again from its finished file, since what the stall report
// needs is chosen before the events are read (readStall).
func Follow(path string, o Options) (*Analysis, error) {
	f, err := tracefile.Follow(path)
	if err != nil {
		return nil, err
	}
	a, err := analyzeFile(f, path, o)
	f.Close()
	if _, stalled := readStall(path); stalled && err == nil && a.StallTests == nil {
		return Trace(path, o)
	}
	return a, err
}

// readStall reads the file rt writes beside a trace whose run stalled
// (trace.StallSuffix): the tests that were running.
func readStall(path string) (tests []string, ok bool) {
	b, err := os.ReadFile(path + trace.StallSuffix)
	if err != nil {
		return nil, false
	}
	return strings.Fields(string(b)), true
}

// TraceCut reports whether f, read to its end, ended without an end block
// (the run crashed or was killed: its goroutines stopped wherever they
// were, which is no leak).
func TraceCut(f *tracefile.File) bool {
	c, ok := f.Reader.(interface{ Cut() bool })
	return ok && c.Cut()
}
