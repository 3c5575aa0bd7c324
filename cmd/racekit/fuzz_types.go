package main

import (
	"time"

	"github.com/racekit/racekit/sched"
)

// fuzzTarget is one package's instrumented test binary.
type fuzzTarget struct {
	Pkg string `json:"package"`
	dir string // the package's directory: go test runs its binary there
	bin string
}

// fuzzRun is the result of one controlled run.
type fuzzRun struct {
	Seed       uint64
	Created    bool
	Resolution string // "A before B" (sites), "" if no race was created
	Outcome    string // "none", "panic", "test failure", "deadlock", "timeout", "stopped" (hatch: at a departure), "exit N"
	Detail     string
	Escapes    int
	Steps      int
	Digest     string // sched.DigestSteps of the schedule
	Schedule   *sched.Schedule
	Elapsed    time.Duration
}

// FuzzOutcome groups the runs of one pair with one resolution and outcome.
type FuzzOutcome struct {
	Resolution string   `json:"resolution,omitempty"`
	Outcome    string   `json:"outcome"`
	Detail     string   `json:"detail,omitempty"`
	Runs       int      `json:"runs"`
	Seeds      []uint64 `json:"seeds"`
	// Baseline counts the baseline runs (controlled, random, no pair) of
	// the package with the same outcome: a failure they show too is not
	// the race's doing (a test that depends on timing, say).
	Baseline int `json:"baseline"`
	// With -replay N, outcomes that created the race: the first seed's
	// run replayed N times (Replayed), how many of the replays had the
	// original run's schedule step for step (Identical), and how the first
	// one that did not differed.
	Replayed   int    `json:"replayed,omitempty"`
	Identical  int    `json:"replay_identical,omitempty"`
	ReplayDiff string `json:"replay_diff,omitempty"`
	digest     string // of the first seed's run
	steps      int
}

// FuzzPair is the result for one candidate pair.
type FuzzPair struct {
	Pair    string `json:"pair"`
	Package string `json:"package"`
	Real    bool   `json:"real"` // created in at least one run
	// Observed: hb reported the pair on a recorded run of phase 1 (the
	// two accesses were unordered by happens-before there: a data race of
	// that execution as the Go memory model defines it).
	Observed bool `json:"observed"`
	// Verdict is "confirmed" (Real), else "observed" (Observed), else
	// "not created".
	Verdict     string        `json:"verdict"`
	Runs        int           `json:"runs"`
	Created     int           `json:"created"`
	Probability float64       `json:"probability"`
	Escapes     int           `json:"escapes"`
	Outcomes    []FuzzOutcome `json:"outcomes"`
	Sources     []string      `json:"sources"`          // the phase 1 sources that found it: hybrid, vet, pairs
	Replay      string        `json:"replay,omitempty"` // a command that replays the first run that created it
	Seconds     float64       `json:"seconds"`          // run time, summed over runs
}

// FuzzResult is racekit fuzz's -json output.
type FuzzResult struct {
	Phase1 string `json:"phase1"` // where the pairs came from
	// Phase1Seconds is the time of phase 1: for hybrid, the recorded runs
	// (every access traced) and the hybrid analysis of their traces,
	// summed over packages; for vet, the static analysis.
	Phase1Seconds float64 `json:"phase1_seconds"`
	// Phase1Pairs counts the candidate pairs each source found (a pair
	// two sources found counts for both); Phase1SourceSeconds is each
	// source's share of Phase1Seconds.
	Phase1Pairs         map[string]int     `json:"phase1_pairs"`
	Phase1SourceSeconds map[string]float64 `json:"phase1_source_seconds"`
	// BaselineRuns is the number of baseline runs per package: the test
	// binary under the Random strategy with no pair (-baseline).
	BaselineRuns int        `json:"baseline_runs"`
	Pairs        []FuzzPair `json:"pairs"`
}
