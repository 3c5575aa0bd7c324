package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/racekit/racekit/confirm"
	"github.com/racekit/racekit/detect/anomaly"
	"github.com/racekit/racekit/gotestline"
	"github.com/racekit/racekit/progress"
)

var cmdHatch = register(&command{
	name:      "hatch",
	usageLine: "hatch [-from pecan|rdit|mcm] [-use-trace FILE | -record-seed N[/P][,N[/P]...]] [-record-preempt P] [-recordings N] [-dedup] [-kinds K] [-patterns FILE] [-atomic-funcs NAMES] [-control auto|anomaly|clip] [-shard K/N] [-atomfuzz=false] [-runs N] [-j N] [-seed S] [-json] [-html DIR] [-keep DIR] [-timeout D] [-q] [-deps=false] [-include P] [-exclude P] [-tags T] [-stats] [go test flags] [package] [go test flags] [-args test binary arguments...]",
	short:     "re-execute predicted anomalies along their clips to confirm or prune them (PECAN hatching)",
	long: `
Hatch is PECAN's bug hatching (Huang and Zhang, ISSTA'11, section 6) for Go
tests. It records a trace of the package's tests (under the controlled
random scheduler with -record-seed N, whose schedules show contention a
quiet machine rarely does; or reads -use-trace, kept by racekit test
-keep-trace from the same tests), predicts anomalies on it,
and re-executes the test binary along each anomaly's clip on racekit's
controlled scheduler: every goroutine runs its part of
the clip in the clip's order, the accesses of the anomaly being scheduling
points. An anomaly is confirmed when the run performed its events in the
pattern's order on the same variables (and, for a race, back to back);
it is pruned when a goroutine departed from the clip (it took another
branch, blocked, or never came) or the run hung. Each result says what the
program did: a panic, a test failure, a deadlock, or nothing.

A race that no clip run made happen is not pruned when the recorded run
had it already: when the happens-before detector (racekit analyze
-algo=hb) reports the same two statements racing on the same variable
in the recorded trace, the two accesses were unordered by happens-before
in a real execution, a data race as the Go memory model and go test -race
define it. Its verdict is "observed". Such races are often ones no
interleaving brings back to back: the read runs only after a flag that
the writer sets after its write, plain variables both (a race of the
memory model, not of the interleaving).

One recorded run shows only the paths it took: -recordings N records N
runs (seeds N, N+1, ... with -record-seed; Go's scheduler otherwise) and
predicts on each. A prediction (kind, pattern and source lines) counts
once; it is hatched along the clip of the first recording that made it,
and, if no run confirmed it, along the next one's, and so on. A list
gives each recording's seed: -record-seed 0,1,2 records once under Go's
scheduler (real timing: a timeout that fires while the work runs) and
then under the random scheduler with seeds 1 and 2.

Under the random scheduler only synchronization is a scheduling point,
so a check and the store it guards (if p.cache == nil { p.cache = ... })
never interleave with another goroutine's in a recording, and the races
that need it are never predicted. -record-preempt P makes each data
access of a random-scheduler recording a scheduling point too, with
probability P drawn from the seed (so a seed still gives one run); in a
list, N/P gives one recording its own (-record-seed 0,1,2,1/0.5,2/0.5).
A clip of a random-scheduler recording runs on the same virtual clock as
the recording (timers, sleeps, time.Now; see racekit fuzz), so that an
expiry or a timeout comes at the same place; a clip of a run under Go's
scheduler, or of -use-trace, runs on the real clock.

-from selects the predictions: pecan (default: races, atomicity violations
and atomic-set serializability violations with their clips, as racekit
anomalies gives them; -kinds selects families), or rdit / mcm (predicted
races, each with its witness: a reordering of the trace that makes the two
accesses adjacent).

Positions in a clip count each goroutine's synchronization, goroutine
life, atomics and accesses at the anomaly's statements in the recorded
trace; other plain accesses, which vary with the data, do not move them.
Those accesses must still be recorded alike: hatch records every access,
where racekit test by default drops an access a goroutine repeats with no
synchronization in between (how many it drops depends on timing); give
-dedup for a -use-trace that racekit test recorded, and never a trace
recorded with -sample or -filter.
A run that departs from its clip is pruned and stopped there (outcome
"stopped").
Functions marked //racekit:atomic are atomic regions (as in racekit
anomalies); -atomic-funcs makes invocations of the named functions
(comma-separated, package-qualified as in the trace, or "all") atomic
regions too, and -patterns adds user patterns from FILE (racekit help
anomalies gives the notation), whose anomalies are hatched like the
built-in ones (-kinds= leaves only them). A run is deterministic as long as no goroutine leaves the
scheduler's control (see racekit fuzz).

PECAN predicts from the events a run showed: a check-then-act on a
locked counter (if s.available() { s.take() }, each method locked) whose
recorded run never shows the second goroutine's act (it saw the item gone)
is out of its reach. So hatch also runs AtomFuzzer (as racekit fuzz
-atomicity; -atomfuzz=false leaves it out) on the recordings' atomic
regions whose critical sections on one lock are split in two: -runs runs
each (at least 4) that pause a goroutine between its two sections. A
region is confirmed when a run that interleaved it failed, with the
test's own message and a racekit replay -split command.

Hatch reports its progress on standard error: a line per recording (its
events and predictions) and per clip hatched (its runs, and how many
confirmed it), with the time since the start; -q prints none.

-shard K/N hatches part K of N of the distinct predictions (and of
AtomFuzzer's regions), as racekit fuzz -shard does (Bazel's variables
used when -shard is not given); racekit merge joins the shards' -json
results. Each shard records its own runs: the shards agree with
-record-seed or -use-trace, not with recordings under Go's scheduler.

Exit status: 66 if an anomaly was confirmed or a race observed, 0 if
none, 1 on a build or run error, 2 on a usage error.
`,
})

var (
	hatchFlags   *frontendFlags
	hatchFrom    = cmdHatch.flags.String("from", "pecan", "predictions to hatch: pecan, rdit or mcm")
	hatchTrace   = cmdHatch.flags.String("use-trace", "", "predict on this trace (racekit test -keep-trace of the same tests) instead of a new recorded run")
	hatchKinds   = cmdHatch.flags.String("kinds", "race,atomicity,asv", "with -from=pecan: pattern families (race, atomicity, asv; empty: none)")
	hatchPattern = cmdHatch.flags.String("patterns", "", "with -from=pecan: file of user patterns (as racekit anomalies -patterns)")
	hatchFuncs   = cmdHatch.flags.String("atomic-funcs", "", "with -from=pecan: functions whose invocations are atomic regions: comma-separated names, or all")
	hatchRuns    = cmdHatch.flags.Int("runs", 1, "runs per anomaly (seeds -seed, -seed+1, ... for the choices after the clip)")
	hatchJobs    = cmdHatch.flags.Int("j", runtime.NumCPU(), "runs in parallel")
	hatchSeed    = cmdHatch.flags.Uint64("seed", 1, "first seed")
	hatchJSON    = cmdHatch.flags.Bool("json", false, "print the result as JSON")
	hatchHTML    = cmdHatch.flags.String("html", "", "with -from=pecan: write the clip pages, with their verdicts, to DIR")
	hatchKeep    = cmdHatch.flags.String("keep", "", "keep each run's clip, schedule and trace in DIR")
	hatchTimeout = cmdHatch.flags.Duration("timeout", time.Minute, "time limit of one run")
	hatchControl = cmdHatch.flags.String("control", "auto", "with -from=pecan: accesses under control in a run: anomaly (the anomaly's statements), clip (every access of a full clip), auto (anomaly, then clip after a departure)")
	hatchRecSeed = cmdHatch.flags.String("record-seed", "0", "record under the controlled random scheduler with this seed (0: Go's scheduler), for schedules a quiet machine rarely shows; a comma list (0,1,2) gives each recording's seed, N/P with preemption P (-record-preempt)")
	hatchPreempt = cmdHatch.flags.Float64("record-preempt", 0, "with -record-seed: each data access of a recording is also a scheduling point with this probability, so that a check and its store may interleave")
	hatchDedup   = cmdHatch.flags.Bool("dedup", false, "record as racekit test does by default, dropping an access a goroutine repeats with no synchronization in between (needed for a -use-trace racekit test recorded)")
	hatchQuiet   = cmdHatch.flags.Bool("q", false, "print no progress lines on stderr")
	hatchAtoms   = cmdHatch.flags.Bool("atomfuzz", true, "also run AtomFuzzer on the recordings' atomic regions whose critical sections on one lock are split in two (as racekit fuzz -atomicity; -runs runs each, at least 4)")
	hatchShard   = cmdHatch.flags.String("shard", "", "hatch part K of N of the predictions (K/N); racekit merge joins the shards' -json results")
	hatchRecs    = cmdHatch.flags.Int("recordings", 1, "record this many runs (-record-seed N, N+1, ...; or Go's scheduler each time; or the seeds of a -record-seed list) and hatch what any of them predicts; a prediction not confirmed along one recording's clip is tried along the next's")
)

func init() {
	cmdHatch.run = runHatch
	cmdHatch.goTest = gotestline.Runs
	hatchFlags = addBuildFlags(cmdHatch.flags)
	hatchFlags.quiet = hatchQuiet
}

// runHatch is racekit hatch: its flags checked and the test binary built,
// the campaign runs in package confirm (record, hatch, classify) and its
// result is printed, with the clip pages of -html.
func runHatch(c *command, args []string) int {
	o, code := hatchOptions(c, args)
	if code != exitOK {
		return code
	}
	targets, tmp, ok := testBinaries(c, hatchFlags, args, "racekit-hatch-")
	if !ok {
		return exitError
	}
	defer os.RemoveAll(tmp)
	o.Targets, o.Tmp = targets, tmp
	res, shown, err := confirm.Hatch(o)
	if err == nil && *hatchHTML != "" && o.From == "pecan" {
		err = writeClipPages(*hatchHTML, hatchTitle(&res), shown)
	}
	if err == nil && *hatchJSON {
		err = writeJSON(os.Stdout, res)
	} else if err == nil {
		confirm.PrintHatch(os.Stdout, &res)
	}
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if res.Found() {
		return exitRaces
	}
	return exitOK
}

// hatchTitle is the clip pages' title: the recordings' traces.
func hatchTitle(res *confirm.HatchResult) string {
	if len(res.Recordings) > 1 {
		return fmt.Sprintf("%s and %d more recordings", res.Trace, len(res.Recordings)-1)
	}
	return res.Trace
}

// hatchOptions checks the package and the flags before anything is built,
// so that a usage error costs nothing (exit 2; 1 for an unreadable
// -patterns file), and returns the campaign's options but its targets.
func hatchOptions(c *command, pkgs []string) (*confirm.HatchOptions, int) {
	if len(pkgs) != 1 {
		c.errorf("hatch takes one package, got %d", len(pkgs))
		return nil, exitUsage
	}
	o := &confirm.HatchOptions{
		Campaign: confirm.Campaign{
			TestArgs: c.line.BinaryArgs(), GoFlags: c.line.GoTestArgs(),
			Runs: *hatchRuns, Jobs: *hatchJobs, Seed: *hatchSeed, Timeout: *hatchTimeout, Trace: *hatchTrace,
			Progress: progress.New("hatch", *hatchQuiet),
		},
		From: *hatchFrom, Control: *hatchControl, Dedup: *hatchDedup, Keep: *hatchKeep,
		AtomFuzz: *hatchAtoms, MaxSplits: *fuzzMaxSplits, Verbose: *hatchFlags.verbose,
		Anomaly: anomaly.Options{AtomicFunc: atomicFuncs(*hatchFuncs)},
		Warn:    c.warn,
	}
	switch *hatchFrom {
	case "pecan", "rdit", "mcm":
	default:
		c.errorf("-from %q: want pecan, rdit or mcm", *hatchFrom)
		return nil, exitUsage
	}
	if *hatchFrom == "pecan" {
		var code int
		if o.Patterns, code = anomalyPatterns(c, *hatchKinds, *hatchPattern); code != exitOK {
			return nil, code
		}
	} else if *hatchPattern != "" || *hatchFuncs != "" {
		c.errorf("-patterns and -atomic-funcs select PECAN's predictions: give -from=pecan")
		return nil, exitUsage
	}
	switch *hatchControl {
	case "auto", "anomaly", "clip":
	default:
		c.errorf("-control %q: want auto, anomaly or clip", *hatchControl)
		return nil, exitUsage
	}
	if *hatchRuns < 1 || *hatchJobs < 1 || *hatchRecs < 1 {
		c.errorf("-runs, -recordings and -j must be at least 1")
		return nil, exitUsage
	}
	if *hatchPreempt < 0 || *hatchPreempt > 1 {
		c.errorf("-record-preempt %v: want a probability from 0 to 1", *hatchPreempt)
		return nil, exitUsage
	}
	recs, err := confirm.RecordSpecs(*hatchRecSeed, *hatchRecs, *hatchPreempt)
	if err != nil {
		c.errorf("%v", err)
		return nil, exitUsage
	}
	if len(recs) > 1 && *hatchTrace != "" {
		c.errorf("-recordings records runs; -use-trace reads one")
		return nil, exitUsage
	}
	if *hatchPreempt > 0 && !slices.ContainsFunc(recs, func(r confirm.RecordSpec) bool { return r.Seed != 0 }) {
		c.errorf("-record-preempt acts on the random scheduler's recordings: give -record-seed N")
		return nil, exitUsage
	}
	o.Recordings = recs
	if o.Shard, err = shardFlag(*hatchShard); err != nil {
		c.errorf("%v", err)
		return nil, exitUsage
	}
	return o, exitOK
}
