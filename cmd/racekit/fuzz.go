package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/racekit/racekit/sched"
)

var cmdFuzz = register(&command{
	name:      "fuzz",
	usageLine: "fuzz [-deadlocks | -atomicity [-max-splits N]] [-phase1 hybrid,vet,pairs] [-pairs FILE] [-use-trace FILE] [-record N] [-record-random N] [-baseline N] [-runs N] [-j N] [-seed S] [-json] [-keep DIR] [-replay N] [-timeout D] [-q] [-deps=false] [-include P] [-exclude P] [-tags T] [-stats] [go test flags] [packages] [go test flags] [-args test binary arguments...]",
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
-cycle command. Exit status 66 if one was confirmed.

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

func init() {
	cmdFuzz.run = runFuzz
	cmdFuzz.goTest = goTestRuns
	fuzzFlags = addBuildFlags(cmdFuzz.flags)
}

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

func runFuzz(c *command, args []string) int {
	pkgs, goFlags := args, c.line.goTestArgs()
	if *fuzzRuns < 1 || *fuzzJobs < 1 || *fuzzReplay < 0 || *fuzzRecRand < 0 {
		c.errorf("-runs and -j must be at least 1, -replay and -record-random at least 0")
		return exitUsage
	}
	sources, err := phase1Sources(*fuzzPhase1, *fuzzPairs, *fuzzTrace)
	if err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	targets, tmp, ok := testBinaries(c, fuzzFlags, pkgs, "racekit-fuzz-")
	if !ok {
		return exitError
	}
	defer os.RemoveAll(tmp)
	testArgs := c.line.binaryArgs()
	prog := newProgressLines("fuzz", *fuzzQuiet)
	if *fuzzDeadlocks && *fuzzAtomicity {
		c.errorf("-deadlocks and -atomicity fuzz different bugs: give one")
		return exitUsage
	}
	if *fuzzDeadlocks {
		return runDeadlockFuzz(c, targets, tmp, testArgs, goFlags, prog)
	}
	if *fuzzAtomicity {
		return runAtomFuzz(c, targets, tmp, testArgs, goFlags, prog)
	}

	// Phase 1.
	cands := &candidates{targets: targets, index: map[*fuzzTarget]map[string][]int{}}
	res := FuzzResult{BaselineRuns: *fuzzBase, Phase1Pairs: map[string]int{}, Phase1SourceSeconds: map[string]float64{}}
	var desc []string
	phase1 := time.Now()
	for _, src := range sources {
		start := time.Now()
		switch src {
		case "hybrid":
			d := "hybrid"
			for _, t := range targets {
				for i := 0; i < max(*fuzzRecord, 1)+*fuzzRecRand; i++ {
					path := *fuzzTrace
					if path == "" {
						path = filepath.Join(tmp, fmt.Sprintf("%s.%d.rkt", filepath.Base(t.bin), i))
						if err := recordRun(t, testArgs, path, i-max(*fuzzRecord, 1)); err != nil {
							c.errorf("%s: %v", t.Pkg, err)
							return exitError
						}
					} else {
						d = "hybrid over " + path
					}
					ps, seen, err := tracePairs(path)
					if err != nil {
						c.errorf("%s: %v", t.Pkg, err)
						return exitError
					}
					for _, p := range ps {
						cands.add(t, p, "hybrid")
						if seen[p] {
							cands.observe(t, p)
						}
					}
					if *fuzzTrace == "" {
						prog.printf("phase 1: %s: recorded run %d/%d, %d candidate pairs so far", t.Pkg, i+1, max(*fuzzRecord, 1)+*fuzzRecRand, len(cands.jobs))
					}
					if *fuzzTrace != "" {
						break
					}
				}
				if *fuzzTrace != "" {
					break // one trace: its pairs, on the first package
				}
			}
			switch {
			case *fuzzTrace != "":
			case *fuzzRecRand > 0:
				runs := fmt.Sprintf("%d recorded runs", max(*fuzzRecord, 1))
				if *fuzzRecord <= 1 {
					runs = "1 recorded run"
				}
				d += fmt.Sprintf(" over %s and %d under the random scheduler", runs, *fuzzRecRand)
			case *fuzzRecord > 1:
				d += fmt.Sprintf(" over %d recorded runs", *fuzzRecord)
			}
			desc = append(desc, d)
		case "vet":
			if *fuzzFlags.tags != "" {
				fmt.Fprintf(os.Stderr, "racekit fuzz: warning: vet analyzes the packages without -tags %s\n", *fuzzFlags.tags)
			}
			ps, unplaced, err := staticPairs(pkgs)
			if err != nil {
				c.errorf("vet: %v", err)
				return exitError
			}
			for _, p := range ps {
				cands.addAnywhere(p, "vet")
			}
			prog.printf("phase 1: vet: %d pairs", len(ps))
			d := "vet"
			if unplaced > 0 {
				d += fmt.Sprintf(" (%d warnings without a position skipped)", unplaced)
			}
			desc = append(desc, d)
		case "pairs":
			ps, unplaced, err := readPairs(*fuzzPairs)
			if err != nil {
				c.errorf("%v", err)
				return exitError
			}
			for _, p := range ps {
				cands.addAnywhere(p, "pairs")
			}
			d := "pairs from " + *fuzzPairs
			if unplaced > 0 {
				d += fmt.Sprintf(" (%d lines without a position skipped)", unplaced)
			}
			desc = append(desc, d)
		}
		res.Phase1SourceSeconds[src] = time.Since(start).Seconds()
	}
	jobs := cands.jobs
	res.Phase1 = phase1Description(sources, desc, jobs, res.Phase1Pairs)
	phase1Time := time.Since(phase1)
	res.Phase1Seconds = phase1Time.Seconds()
	if *fuzzFlags.verbose {
		fmt.Fprintf(os.Stderr, "racekit fuzz: %d candidate pairs (%s) in %v\n", len(jobs), res.Phase1, phase1Time.Round(time.Millisecond))
	}

	// Phase 2.
	if *fuzzKeep != "" {
		if err := os.MkdirAll(*fuzzKeep, 0o777); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	type task struct {
		j, k int
		seed uint64
	}
	results := make([][]fuzzRun, len(jobs))
	baseline := make([][]fuzzRun, len(targets))
	var tasks []task
	for ti := range targets {
		baseline[ti] = make([]fuzzRun, *fuzzBase)
		for k := 0; k < *fuzzBase; k++ {
			tasks = append(tasks, task{-1 - ti, k, *fuzzSeed + uint64(k)})
		}
	}
	for j := range jobs {
		results[j] = make([]fuzzRun, *fuzzRuns)
		for k := 0; k < *fuzzRuns; k++ {
			tasks = append(tasks, task{j, k, *fuzzSeed + uint64(k)})
		}
	}
	prog.printf("phase 2: %d candidate pairs, %d runs each (and %d baseline runs per package), %d at a time", len(jobs), *fuzzRuns, *fuzzBase, *fuzzJobs)
	tally := newFuzzTally(prog, len(jobs))
	runErr := inParallel(len(tasks), *fuzzJobs, func(i int) error {
		tk := tasks[i]
		if tk.j < 0 {
			ti := -1 - tk.j
			path := filepath.Join(tmp, fmt.Sprintf("base%d-%d.sched", ti, tk.seed))
			r, err := controlledRun(targets[ti], testArgs, randomSchedEnv(tk.seed), path, *fuzzTimeout, nil)
			r.Schedule = nil
			os.Remove(path)
			baseline[ti][tk.k] = r
			tally.done(-1-ti, "baseline "+targets[ti].Pkg, *fuzzBase, r)
			return err
		}
		jb := jobs[tk.j]
		schedPath := filepath.Join(tmp, fmt.Sprintf("%d-%d.sched", tk.j, tk.seed))
		if *fuzzKeep != "" {
			schedPath = filepath.Join(*fuzzKeep, fmt.Sprintf("%d-%d.sched", tk.j+1, tk.seed))
		}
		r, err := pairRun(jb.t, testArgs, jb.pair, tk.seed, schedPath)
		if *fuzzKeep == "" {
			os.Remove(schedPath)
		}
		results[tk.j][tk.k] = r
		tally.done(tk.j, jb.pair, *fuzzRuns, r)
		return err
	})
	if runErr != nil {
		c.errorf("%v", runErr)
		return exitError
	}

	races := false // a pair confirmed or observed: exit 66
	base := map[*fuzzTarget][]fuzzRun{}
	for ti, t := range targets {
		base[t] = baseline[ti]
	}
	for j, jb := range jobs {
		fp := summarize(jb.pair, jb.t, results[j], base[jb.t], goFlags)
		fp.Sources = jb.sources
		fp.Observed = jb.observed
		switch {
		case fp.Real:
			fp.Verdict = "confirmed"
		case fp.Observed:
			fp.Verdict = "observed"
		default:
			fp.Verdict = "not created"
		}
		races = races || fp.Real || fp.Observed
		res.Pairs = append(res.Pairs, fp)
	}
	if *fuzzReplay > 0 {
		if err := replayOutcomes(res.Pairs, jobs, testArgs, tmp); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	if *fuzzJSON {
		if err := writeJSON(os.Stdout, res); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	} else {
		printFuzz(os.Stdout, res)
	}
	if races {
		return exitRaces
	}
	return exitOK
}
