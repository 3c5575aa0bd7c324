package confirm

import (
	"regexp"
	"slices"
	"time"

	"github.com/racekit/racekit/progress"

	"github.com/racekit/racekit/sched"
)

// Target is one package's instrumented test binary.
type Target struct {
	Pkg string `json:"package"`
	Dir string `json:"-"` // the package's directory: go test runs its binary there
	Bin string `json:"-"`
}

// Campaign is what the runs of one confirmation share: the test binaries,
// a directory for their traces and schedules, the binaries' arguments,
// and how many runs, with which seeds, at most how long each.
type Campaign struct {
	Targets  []*Target
	Tmp      string   // the runs' traces and schedules; the caller removes it
	TestArgs []string // the test binaries' own arguments (-test.run=...)
	GoFlags  []string // go test's flags, repeated in the replay commands printed
	Runs     int      // controlled runs per candidate
	Jobs     int      // runs at a time
	Seed     uint64   // the first seed of each candidate's runs: Seed, Seed+1, ...
	Timeout  time.Duration
	// Phase 1 records Record runs of each target's tests (at least one;
	// none with RandomOnly, when the caller has its own: racekit test's
	// run) under Go's scheduler and RecordRandom more under the
	// controlled random scheduler (seeds Seed, Seed+1, ...), or reads
	// Trace instead.
	Record, RecordRandom int
	RandomOnly           bool
	Trace                string
	// Traces are runs recorded before the campaign, per package (racekit
	// test's own): FuzzDeadlocks and FuzzAtomicity read them first.
	Traces map[string][]string
	// Shard runs only this shard's part of phase 2 (Shard.Of); the
	// zero Shard runs all of it.
	Shard    Shard
	Progress *progress.Lines // nil: no progress lines
	// Deadline, if set, is when phase 2 stops starting runs (a time
	// budget): a candidate's runs not made count as Skipped.
	Deadline time.Time
	// LeaksIgnore are functions whose leaks ExploreBlocking does not
	// report (racekit test's --leaks-ignore; leak.Without).
	LeaksIgnore []string
}

// pastDeadline reports whether the campaign's time budget is spent.
func (c *Campaign) pastDeadline() bool {
	return !c.Deadline.IsZero() && time.Now().After(c.Deadline)
}

// testFlags are go test's flags with -run restricting the runs to test
// ("": goFlags as they are): a replay command's flags.
func testFlags(goFlags []string, test string) []string {
	if test == "" {
		return goFlags
	}
	return append(slices.Clone(goFlags), "-run", "^"+regexp.QuoteMeta(test)+"$")
}

// records is how many recorded runs phase 1 makes per target.
func (c *Campaign) records() int { return c.plain() + c.RecordRandom }

// plain is how many of them run under Go's scheduler.
func (c *Campaign) plain() int {
	if c.RandomOnly {
		return 0
	}
	return max(c.Record, 1)
}

// Run is the result of one controlled run.
type Run struct {
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
	// Index is the pair's number among phase 1's candidates, from 1:
	// the order of the unsharded campaign's result (MergeFuzz).
	Index   int    `json:"index"`
	Pair    string `json:"pair"`
	Package string `json:"package"`
	Real    bool   `json:"real"` // created in at least one run
	// Observed: hb reported the pair on a recorded run of phase 1 (the
	// two accesses were unordered by happens-before there: a data race of
	// that execution as the Go memory model defines it).
	Observed bool `json:"observed"`
	// Verdict is "confirmed" (Real), else "observed" (Observed), else
	// "not created".
	Verdict string `json:"verdict"`
	Runs    int    `json:"runs"`
	// Skipped counts the runs not made: the time budget ran out.
	Skipped     int           `json:"skipped,omitempty"`
	Test        string        `json:"test,omitempty"` // its runs ran this test alone
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
	BaselineRuns int `json:"baseline_runs"`
	// Baselines are the baseline runs' outcomes, per package: each
	// outcome's Baseline counts those of its package.
	Baselines []BaselineOutcome `json:"baselines"`
	Pairs     []FuzzPair        `json:"pairs"`
	// Shard is the shard of the campaign this result is ("K/N"), "" for
	// a whole campaign (or shards merged).
	Shard string `json:"shard,omitempty"`
	// Recorded are the traces phase 1 recorded, per package, left in the
	// campaign's Tmp: a later campaign's Traces (racekit test -confirm's
	// deadlocks) reads them instead of recording the same seeds again.
	Recorded map[string][]string `json:"-"`
}

// BaselineOutcome groups one package's baseline runs with one outcome.
type BaselineOutcome struct {
	Package string   `json:"package"`
	Outcome string   `json:"outcome"`
	Detail  string   `json:"detail,omitempty"`
	Seeds   []uint64 `json:"seeds"`
}
