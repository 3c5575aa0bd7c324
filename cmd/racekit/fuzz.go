package main

import (
	"os"
	"runtime"
	"time"

	"github.com/racekit/racekit/confirm"
	"github.com/racekit/racekit/gotestline"
	"github.com/racekit/racekit/progress"
)

var cmdFuzz = register(&command{
	name:      "fuzz",
	usageLine: "fuzz [-deadlocks [-explore N] [-html DIR] | -atomicity [-max-splits N]] [-phase1 hybrid,vet,pairs] [-pairs FILE] [-use-trace FILE] [-record N] [-record-random N] [-baseline N] [-runs N] [-j N] [-seed S] [-json] [-keep DIR] [-replay N] [-timeout D] [-shard K/N] [-q] [-deps=false] [-include P] [-exclude P] [-tags T] [-stats] [go test flags] [packages] [go test flags] [-args test binary arguments...]",
	short:     "confirm potential races by race-directed random scheduling (RaceFuzzer)",
	long: `
Fuzz is RaceFuzzer (Sen, PLDI'08) for Go tests. Phase 1 finds candidate
racing statement pairs from the sources -phase1 names, comma-separated;
the candidates are the union of their pairs:

	hybrid  the hybrid detector (lockset and happens-before, as
	        racekit analyze -algo=hybrid) over -record recorded runs of each
	        package's tests (the union of their pairs; one run by
	        default) and -record-random more under the controlled
	        random scheduler (seeds -seed, -seed+1, ...: schedules
	        the OS scheduler rarely produces, such as contention that
	        a quiet machine never shows), or over -use-trace (a
	        trace kept by racekit test -keep-trace)
	vet     racekit vet's warnings on the packages (RELAY, static; the
	        pairs racekit vet -pairs writes, default filters, test
	        files not analyzed)
	pairs   the pairs listed in -pairs FILE (one per line,
	        file:line~file:line, or the JSON lines racekit vet -pairs
	        writes)

-pairs adds pairs to the sources and -use-trace adds hybrid; with neither
and no -phase1, phase 1 is hybrid (so -pairs alone fuzzes just the
file's pairs). Each pair is reported with the sources that found it. A
vet or file pair is tried on the packages whose directory holds one of
its files (on every package when none does); a hybrid pair on the
package whose run showed it.

Phase 2 builds each package's instrumented test binary once and runs it
-runs times per pair, -j at a time, each run under racekit's controlled
scheduler (RaceFuzzer's strategy) with its own seed: a goroutine about
to execute one of the pair's statements is postponed until another is
about to access the same location at the other statement, then the race
is created and resolved by a coin flip.

For each pair, fuzz reports whether the race is real (created in at least
one run), the probability of creating it (runs that created it / runs),
what each resolution (which statement ran first) led to (a panic, a test
failure, a deadlock with each goroutine's blocked operation, a timeout, or
nothing) and the seeds that reproduce each outcome: racekit replay -seed
S -pair P re-runs one of them exactly. -replay N checks that: it
replays the first seed of every outcome that created the race N times
and reports how many replays had the original run's schedule, step for
step. A pair no run created is still a race when hb reported it on a
recorded run of phase 1 (its two accesses were unordered by
happens-before there, a data race as the Go memory model defines it):
its verdict is "observed", not "confirmed". Such races are typically
published without synchronization (a flag set after the write and read
before the read), so no interleaving brings the two accesses next to
each other. -json prints the same as one JSON object. A failure also seen in
-baseline runs of the package (controlled, random, no pair: seeds
-seed, -seed+1, ...) is marked as such: a test that depends on timing
may fail under any controlled schedule.

Seeds are -seed, -seed+1, ... (one sequence per pair). The seed also
decides which ready case a select takes and when timers fire: timers,
sleeps and time.Now of instrumented code run on a virtual clock that
advances by 1µs per scheduling step (the environment variable
RACEKIT_SCHED_TICK sets another step), and a due timer fires when the
strategy chooses it. Runs are
deterministic for a seed as long as no goroutine leaves the scheduler's
control (blocking in I/O, real timers such as tickers and context
deadlines, untraced code); such runs are counted in "escapes".

Fuzz reports its progress on standard error, a line per recorded run of
phase 1 and per candidate pair of phase 2 (its index, its runs done and
the races created so far, every few seconds while its runs go on), with
the time since the start; -q prints none.

-deadlocks fuzzes lock-order deadlocks instead of races (DeadlockFuzzer:
Joshi, Park, Sen and Naik, PLDI'09). Phase 1 predicts the cycles of each
-record run as racekit deadlocks does (iGoodlock); phase 2 runs the
package -runs times per cycle under a scheduler that pauses a goroutine
about to take a lock at one of the cycle's requests while it holds the
lock taken at that link's other statement, until the cycle's other
goroutines reach theirs (random elsewhere). A cycle is confirmed when a
run deadlocks with the cycle's goroutines blocked at its requests; each
is printed with the blocked operations, the seeds and a racekit replay
-cycle command. Then, for deadlocks no lock-order cycle names (a
WaitGroup.Wait before the channel its workers send on is drained, a
Signal lost between a waiter's test and its Cond.Wait), each package runs
-explore times under random delays: a random scheduler that stalls a
goroutine at a few points of the run while the others go on, their
sleeps and timeouts included (delay-bounded scheduling, Emmi, Qadeer and
Rakamaric, POPL'11). Every such schedule is one a loaded machine can
give, so a run in which every goroutine blocked is a real deadlock, and
goroutines a run left blocked when it ended are a real leak (as racekit
test --leaks reports them); each is printed with the blocked operations,
its seeds and a racekit replay -delays command, and its first seed is run
again to check that it replays; -html DIR draws each deadlock's run.
Exit status 66 if a deadlock or a leak was made to happen.

-atomicity fuzzes atomicity violations of check-then-act code instead
(AtomFuzzer: Park and Sen, FSE'08): code that checks under a lock and
acts under the same lock taken again (if s.available() { s.take() }, each
method locked) has no data race, and a run in which the second goroutine
saw the item gone shows no anomaly to predict from. Phase 1 finds, on
each -record run, the regions (a function invocation) in which a
goroutine took a lock, released it and took it again, on a lock other
goroutines take too (at most -max-splits per package); phase 2 runs the
package -runs times per region under a scheduler that pauses a goroutine
about to take the lock the second time, so that the others run the first
section meanwhile (random elsewhere). A region is confirmed when a run
that made that interleaving failed (the test's own message: "oversold:
-1"), printed with the seeds and a racekit replay -split command;
"interleaved" when the interleaving was made and the tests passed. Exit
status 66 if one was confirmed.

-shard K/N runs part K of N of the campaign, so that a CI matrix or
Bazel's test sharding (TEST_SHARD_INDEX and TEST_TOTAL_SHARDS, used when
-shard is not given) spreads the work: each shard makes its own phase 1,
then phase 2's runs of the candidates whose package and lines hash to K,
and the baseline runs of every N-th seed. racekit merge joins the shards'
-json results into the whole campaign's. The shards agree when phase 1
does: with -pairs, -phase1 vet or -use-trace (runs recorded under Go's
scheduler may show other pairs in each shard).

Exit status: 66 if a race was confirmed or observed, 0 if none, 1 on a build or
run error, 2 on a usage error.
`,
})

var (
	fuzzFlags   *frontendFlags
	fuzzPhase1  = cmdFuzz.flags.String("phase1", "", "phase 1 sources, comma-separated: hybrid, vet, pairs (-pairs adds pairs, -use-trace hybrid; default hybrid)")
	fuzzPairs   = cmdFuzz.flags.String("pairs", "", "candidate pairs: lines file:line~file:line, or racekit vet -pairs JSON lines")
	fuzzTrace   = cmdFuzz.flags.String("use-trace", "", "phase 1 from this recorded trace (racekit test -keep-trace) instead of a new run")
	fuzzRuns    = cmdFuzz.flags.Int("runs", 20, "runs per pair")
	fuzzJobs    = cmdFuzz.flags.Int("j", runtime.NumCPU(), "runs in parallel")
	fuzzSeed    = cmdFuzz.flags.Uint64("seed", 1, "first seed")
	fuzzJSON    = cmdFuzz.flags.Bool("json", false, "print the result as JSON")
	fuzzKeep    = cmdFuzz.flags.String("keep", "", "keep each run's schedule in DIR/PAIR-SEED.sched")
	fuzzTimeout = cmdFuzz.flags.Duration("timeout", time.Minute, "time limit of one run")
	fuzzRecord  = cmdFuzz.flags.Int("record", 1, "phase 1: the union of hybrid's pairs over this many recorded runs")
	fuzzRecRand = cmdFuzz.flags.Int("record-random", 0, "phase 1: this many more recorded runs under the controlled random scheduler")
	fuzzBase    = cmdFuzz.flags.Int("baseline", 10, "controlled runs per package without a pair (Random), to tell the race's failures from the schedule's")
	fuzzReplay  = cmdFuzz.flags.Int("replay", 0, "replay the first seed of every outcome that created a race N times, checking each run's schedule is the original's")
	fuzzQuiet   = cmdFuzz.flags.Bool("q", false, "print no progress lines on stderr")
)

var (
	fuzzDeadlocks = cmdFuzz.flags.Bool("deadlocks", false, "confirm lock-order deadlocks instead of races: phase 1 predicts cycles (iGoodlock) on recorded runs, phase 2 runs DeadlockFuzzer per cycle")
	fuzzAtomicity = cmdFuzz.flags.Bool("atomicity", false, "confirm atomicity violations of check-then-act code instead of races: phase 1 finds atomic regions whose critical sections on one lock are split in two (a lock taken, released and taken again in one function invocation) on recorded runs, phase 2 runs AtomFuzzer per region, pausing a goroutine between its two sections")
	fuzzExplore   = cmdFuzz.flags.Int("explore", 20, "with -deadlocks: runs per package under random delays (DelayFuzzer: a goroutine stalled at a few points while sleepers wake), for deadlocks no lock-order cycle names and leaks; 0: none")
	fuzzHTML      = cmdFuzz.flags.String("html", "", "with -deadlocks: draw each deadlock the exploration made happen (its run's last steps, one lane per goroutine, and each goroutine's blocked operation) as an HTML page in DIR, with an index")
	fuzzMaxSplits = cmdFuzz.flags.Int("max-splits", 20, "with -atomicity: regions to try per package, those on a lock other goroutines take first")
	fuzzShard     = cmdFuzz.flags.String("shard", "", "run shard K of N of the campaign (K/N): a deterministic share of the candidates and baseline seeds; racekit merge joins the shards' -json results (default: Bazel's TEST_SHARD_INDEX/TEST_TOTAL_SHARDS when set)")
)

func init() {
	cmdFuzz.run = runFuzz
	cmdFuzz.goTest = gotestline.Runs
	fuzzFlags = addBuildFlags(cmdFuzz.flags)
	fuzzFlags.quiet = fuzzQuiet
}

// runFuzz is racekit fuzz: its flags checked and the test binaries built,
// the campaign (races, -deadlocks or -atomicity) runs in package confirm
// and its result is printed.
func runFuzz(c *command, args []string) int {
	pkgs := args
	sources, shard, ok := checkFuzzFlags(c)
	if !ok {
		return exitUsage
	}
	targets, tmp, ok := testBinaries(c, fuzzFlags, pkgs, "racekit-fuzz-")
	if !ok {
		return exitError
	}
	defer os.RemoveAll(tmp)
	camp := confirm.Campaign{
		Targets: targets, Tmp: tmp, TestArgs: c.line.BinaryArgs(), GoFlags: c.line.GoTestArgs(),
		Runs: *fuzzRuns, Jobs: *fuzzJobs, Seed: *fuzzSeed, Timeout: *fuzzTimeout,
		Record: *fuzzRecord, RecordRandom: *fuzzRecRand, Trace: *fuzzTrace,
		Shard: shard, Progress: progress.New("fuzz", *fuzzQuiet),
	}
	var result any
	found := false
	var err error
	switch {
	case *fuzzDeadlocks:
		var cycles []confirm.DeadlockCycle
		cycles, err = confirm.FuzzDeadlocks(&camp)
		for _, cy := range cycles {
			found = found || cy.Verdict == "confirmed"
		}
		var explored []confirm.ExploredBlocking
		if err == nil {
			explored, err = confirm.ExploreBlocking(&camp, *fuzzExplore)
		}
		found = found || len(explored) > 0
		result = confirm.DeadlockResult{Shard: shard.String(), Cycles: cycles, Explored: explored}
		if err == nil && !*fuzzJSON {
			confirm.PrintDeadlocks(os.Stdout, cycles)
			confirm.PrintExplored(os.Stdout, explored, *fuzzExplore)
		}
		if err == nil && *fuzzHTML != "" {
			err = writeDeadlockPages(*fuzzHTML, "racekit fuzz -deadlocks", explored)
		}
	case *fuzzAtomicity:
		var splits []confirm.AtomicitySplit
		splits, err = confirm.FuzzAtomicity(&camp, *fuzzMaxSplits)
		for _, s := range splits {
			found = found || s.Verdict == "confirmed"
		}
		result = confirm.AtomicityResult{Shard: shard.String(), Splits: splits}
		if err == nil && !*fuzzJSON {
			confirm.PrintAtomicity(os.Stdout, "fuzz", splits)
		}
	default:
		var res confirm.FuzzResult
		res, err = confirm.FuzzRaces(&confirm.RaceOptions{
			Campaign: camp, Pkgs: pkgs, Sources: sources, PairsFile: *fuzzPairs,
			Baseline: *fuzzBase, Replay: *fuzzReplay, Keep: *fuzzKeep,
			Verbose: *fuzzFlags.verbose, Tags: *fuzzFlags.tags,
		})
		found, result = res.Races(), res
		if err == nil && !*fuzzJSON {
			confirm.PrintFuzz(os.Stdout, res)
		}
	}
	if err == nil && *fuzzJSON {
		err = writeJSON(os.Stdout, result)
	}
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if found {
		return exitRaces
	}
	return exitOK
}

// checkFuzzFlags checks the flags before anything is built, so that a
// usage error costs nothing, and returns phase 1's sources
// (confirm.Phase1Sources) and the shard.
func checkFuzzFlags(c *command) ([]string, confirm.Shard, bool) {
	if *fuzzRuns < 1 || *fuzzJobs < 1 || *fuzzReplay < 0 || *fuzzRecRand < 0 {
		c.errorf("-runs and -j must be at least 1, -replay and -record-random at least 0")
		return nil, confirm.Shard{}, false
	}
	if *fuzzDeadlocks && *fuzzAtomicity {
		c.errorf("-deadlocks and -atomicity fuzz different bugs: give one")
		return nil, confirm.Shard{}, false
	}
	sources, err := confirm.Phase1Sources(*fuzzPhase1, *fuzzPairs, *fuzzTrace)
	if err != nil {
		c.errorf("%v", err)
		return nil, confirm.Shard{}, false
	}
	shard, err := shardFlag(*fuzzShard)
	if err != nil {
		c.errorf("%v", err)
		return nil, confirm.Shard{}, false
	}
	return sources, shard, true
}

// shardFlag is -shard's shard, else Bazel's.
func shardFlag(s string) (confirm.Shard, error) {
	if s != "" {
		return confirm.ParseShard(s)
	}
	return confirm.ShardFromEnv()
}
