package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/racekit/racekit/instrument"
	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/static"
	"github.com/racekit/racekit/trace"
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

// fuzzTally counts the runs done and the races created per candidate pair
// (j >= 0) and per package's baseline (j < 0) for fuzz's progress lines:
// one when a pair's last run is done, and one every progressEvery while
// its runs go on.
type fuzzTally struct {
	prog    *progressLines
	pairs   int
	unit    string // what a candidate is: "pair" (a racing pair: a~b), "cycle", "region"
	made    string // what a run that Created did: "created", "deadlocked", "interleaved"
	mu      sync.Mutex
	runs    map[int]int
	created map[int]int
	last    map[int]time.Time
}

func newFuzzTally(prog *progressLines, pairs int) *fuzzTally {
	return &fuzzTally{prog: prog, pairs: pairs, unit: "pair", made: "created", runs: map[int]int{}, created: map[int]int{}, last: map[int]time.Time{}}
}

// named sets what the tally's candidates are and what their runs make.
func (f *fuzzTally) named(unit, made string) *fuzzTally {
	f.unit, f.made = unit, made
	return f
}

// done counts run r of unit j (of total runs), named what.
func (f *fuzzTally) done(j int, what string, total int, r fuzzRun) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs[j]++
	if r.Created {
		f.created[j]++
	}
	if f.runs[j] < total && time.Since(f.last[j]) < progressEvery {
		return
	}
	if f.last[j].IsZero() && f.runs[j] < total {
		f.last[j] = time.Now() // its first run: wait progressEvery for the next line
		return
	}
	f.last[j] = time.Now()
	if j < 0 {
		f.prog.printf("%s: %d/%d runs", what, f.runs[j], total)
		return
	}
	f.prog.printf("%s %d/%d %s: %d/%d runs, %d %s", f.unit, j+1, f.pairs, relText(what), f.runs[j], total, f.created[j], f.made)
}

// inParallel calls f(0), ..., f(n-1) on at most workers goroutines and
// returns an error one of the calls returned, nil if none did.
func inParallel(n, workers int, f func(i int) error) error {
	ch := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				if err := f(i); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		ch <- i
	}
	close(ch)
	wg.Wait()
	return first
}

// testBinaries instruments the packages and builds the test binary of
// each one that has tests into a new temporary directory (name is its
// prefix), which the caller removes. It prints the error and returns false
// on failure, or when no package has tests.
func testBinaries(c *command, ff *frontendFlags, pkgs []string, name string) ([]*fuzzTarget, string, bool) {
	prep, ok := prepare(c, ff, pkgs, true)
	if !ok {
		return nil, "", false
	}
	tmp, err := os.MkdirTemp("", name)
	if err != nil {
		c.errorf("%v", err)
		return nil, "", false
	}
	targets, err := buildTargets(prep, ff, pkgs, tmp)
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

// buildTargets builds the instrumented test binary of each package that
// has tests, once.
func buildTargets(prep *instrument.Prepared, ff *frontendFlags, patterns []string, dir string) ([]*fuzzTarget, error) {
	args := append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}"}, ff.buildFlags()...)
	args = append(args, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), prep.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	var targets []*fuzzTarget
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || (f[2] == "0" && f[3] == "0") {
			continue
		}
		t := &fuzzTarget{Pkg: f[0], dir: f[1], bin: filepath.Join(dir, fmt.Sprintf("p%d.test", i))}
		b := goCommand(prep, "test", append(append(ff.buildFlags(), "-c", "-o", t.bin), t.Pkg)...)
		b.Stdin, b.Stdout = nil, os.Stderr
		if err := b.Run(); err != nil {
			return nil, fmt.Errorf("building the test binary of %s: %v", t.Pkg, err)
		}
		if _, err := os.Stat(t.bin); err != nil {
			continue // no test binary (go test -c writes none without tests)
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// phase1Sources returns phase 1's sources, in the order hybrid, vet,
// pairs: those spec (-phase1) names, plus pairs when pairsFile (-pairs)
// is set and hybrid when trace (-use-trace) is; with none of them, hybrid.
func phase1Sources(spec, pairsFile, trace string) ([]string, error) {
	want := map[string]bool{}
	if spec = strings.TrimSpace(spec); spec != "" {
		for _, x := range strings.Split(spec, ",") {
			x = strings.TrimSpace(x)
			switch x {
			case "hybrid", "vet", "pairs":
				want[x] = true
			default:
				return nil, fmt.Errorf("-phase1: unknown source %q (want hybrid, vet or pairs)", x)
			}
		}
	}
	if pairsFile != "" {
		want["pairs"] = true
	}
	if trace != "" || len(want) == 0 {
		want["hybrid"] = true
	}
	if want["pairs"] && pairsFile == "" {
		return nil, fmt.Errorf("-phase1 pairs needs -pairs FILE")
	}
	var out []string
	for _, x := range []string{"hybrid", "vet", "pairs"} {
		if want[x] {
			out = append(out, x)
		}
	}
	return out, nil
}

// phase1Description counts the pairs per source (into counts) and
// describes phase 1: the sources' descriptions, with their pair counts
// when there are several.
func phase1Description(sources, desc []string, jobs []fuzzJob, counts map[string]int) string {
	multi := 0
	for _, jb := range jobs {
		for _, src := range jb.sources {
			counts[src]++
		}
		if len(jb.sources) > 1 {
			multi++
		}
	}
	if len(sources) < 2 {
		return strings.Join(desc, "")
	}
	parts := make([]string, len(sources))
	for i, src := range sources {
		parts[i] = fmt.Sprintf("%s: %d", desc[i], counts[src])
	}
	by := "both"
	if len(sources) > 2 {
		by = "more than one"
	}
	return fmt.Sprintf("%s; %d found by %s", strings.Join(parts, ", "), multi, by)
}

// fuzzJob is one candidate pair on one package, with the phase 1 sources
// that found it.
type fuzzJob struct {
	t        *fuzzTarget
	pair     string
	sources  []string
	observed bool // hb reported it on a recorded run of phase 1
}

// candidates is the union of phase 1's pairs, per package, in the order
// they were first found; a pair found again (by another source, or with
// its statements the other way round, or its files named otherwise) gains
// the source. Pairs on the same lines are one when their statements can
// name the same accesses (equal columns and kinds where both give them:
// vet's line-only pair and hybrid's exact one); the pair then fuzzed is
// the more exact, whose points are the accesses alone. Two exact pairs
// of other accesses on the same lines stay two.
type candidates struct {
	targets []*fuzzTarget
	jobs    []fuzzJob
	index   map[*fuzzTarget]map[string][]int // pairKey -> indices in jobs
}

// find returns the index of t's job that is pair, or -1.
func (c *candidates) find(t *fuzzTarget, pair string) int {
	for _, i := range c.index[t][pairKey(pair)] {
		if samePair(c.jobs[i].pair, pair) {
			return i
		}
	}
	return -1
}

func (c *candidates) add(t *fuzzTarget, pair, source string) {
	if i := c.find(t, pair); i >= 0 {
		jb := &c.jobs[i]
		if exactness(pair) > exactness(jb.pair) {
			jb.pair = pair
		}
		if !slices.Contains(jb.sources, source) {
			jb.sources = append(jb.sources, source)
		}
		return
	}
	m := c.index[t]
	if m == nil {
		m = map[string][]int{}
		c.index[t] = m
	}
	k := pairKey(pair)
	m[k] = append(m[k], len(c.jobs))
	c.jobs = append(c.jobs, fuzzJob{t: t, pair: pair, sources: []string{source}})
}

// observe marks t's pair, added before, as a race a recorded run had.
func (c *candidates) observe(t *fuzzTarget, pair string) {
	if i := c.find(t, pair); i >= 0 {
		c.jobs[i].observed = true
	}
}

// samePair reports whether two pairs can name the same two accesses, in
// either order (sched.Stmt.Compatible, files made absolute).
func samePair(p, q string) bool {
	a, b := pairStmts(p)
	x, y := pairStmts(q)
	return a.Compatible(x) && b.Compatible(y) || a.Compatible(y) && b.Compatible(x)
}

// pairStmts parses a pair's two statements, their files absolute.
func pairStmts(pair string) (sched.Stmt, sched.Stmt) {
	a, b, _ := strings.Cut(pair, "~")
	x, _ := sched.ParseStmt(strings.TrimSpace(a))
	y, _ := sched.ParseStmt(strings.TrimSpace(b))
	x.File, y.File = absFile(x.File), absFile(y.File)
	return x, y
}

// exactness counts what a pair's statements say beyond their lines.
func exactness(pair string) int {
	n := 0
	a, b := pairStmts(pair)
	for _, st := range []sched.Stmt{a, b} {
		if st.Col > 0 {
			n++
		}
		if st.Kind != sched.KindOther {
			n++
		}
	}
	return n
}

// addAnywhere adds a pair that names no package: to the packages whose
// directory holds one of its files, or to every package when none does
// (the statements may be in a dependency the tests reach).
func (c *candidates) addAnywhere(pair, source string) {
	var in []*fuzzTarget
	a, b, _ := strings.Cut(pair, "~")
	for _, t := range c.targets {
		for _, site := range []string{a, b} {
			if filepath.Dir(absFile(siteFile(site))) == t.dir {
				in = append(in, t)
				break
			}
		}
	}
	if len(in) == 0 {
		in = c.targets
	}
	for _, t := range in {
		c.add(t, pair, source)
	}
}

// siteFile is the file of a site file:line or file:line:col.
func siteFile(site string) string {
	s := lineSite(site)
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[:i]
	}
	return s
}

// absFile makes a relative file name absolute (relative to the working
// directory) and cleans it.
func absFile(f string) string {
	if a, err := filepath.Abs(f); err == nil {
		return a
	}
	return filepath.Clean(f)
}

// pairKey is a pair's lines: both statements as absolute file:line, in
// order (columns and kinds left out).
func pairKey(pair string) string {
	a, b, _ := strings.Cut(pair, "~")
	x, y := lineSite(strings.TrimSpace(a)), lineSite(strings.TrimSpace(b))
	x = absFile(siteFile(x)) + x[len(siteFile(x)):]
	y = absFile(siteFile(y)) + y[len(siteFile(y)):]
	if y < x {
		x, y = y, x
	}
	return x + "~" + y
}

// staticPairs runs racekit vet's analysis (RELAY, default configuration) on
// the packages and returns its warnings' pairs as file:line~file:line,
// and how many warnings had an access without a position (skipped).
func staticPairs(pkgs []string) ([]string, int, error) {
	rep, err := static.Run(pkgs, static.Options{})
	if err != nil {
		return nil, 0, err
	}
	if len(rep.Errors) > 0 {
		return nil, 0, fmt.Errorf("%d load errors, the first: %s", len(rep.Errors), rep.Errors[0])
	}
	var buf bytes.Buffer
	if err := static.WritePairs(&buf, rep.Kept()); err != nil {
		return nil, 0, err
	}
	return parsePairs(&buf, "racekit vet -pairs")
}

// readPairs reads a pairs file: file:line~file:line lines, or JSON lines
// {"a": SITE, "b": SITE} (racekit vet -pairs). It returns the distinct
// pairs and how many JSON lines had a site without a position ("?", as
// vet writes for an access it could not place), which are skipped. A
// line's statements keep their columns and kinds (file:line:col:w, as
// fuzz prints the pairs hybrid found): each names one access. A JSON
// line's are taken by line: vet's columns are the static analysis's
// positions, not necessarily those of the instrumented accesses.
func readPairs(path string) ([]string, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return parsePairs(f, path)
}

func parsePairs(r io.Reader, name string) ([]string, int, error) {
	var out []string
	unplaced := 0
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "{") {
			var p struct{ A, B string }
			if err := json.Unmarshal([]byte(line), &p); err != nil {
				return nil, 0, fmt.Errorf("%s:%d: %v", name, n, err)
			}
			if p.A == "" || p.A == "?" || p.B == "" || p.B == "?" {
				unplaced++
				continue
			}
			line = lineSite(p.A) + "~" + lineSite(p.B)
		}
		p, err := sched.ParsePair(line)
		if err != nil {
			return nil, 0, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		s := p[0] + "~" + p[1]
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, unplaced, sc.Err()
}

// lineSite drops a column and a kind: file:line:col:w becomes file:line.
func lineSite(s string) string {
	st, ok := sched.ParseStmt(s)
	if !ok {
		return s
	}
	st.Col, st.Kind = 0, sched.KindOther
	return st.String()
}

// recordRun runs t's tests once for phase 1, recording every access into
// path: under Go's scheduler when k < 0, else under the controlled random
// scheduler with seed -seed+k.
func recordRun(t *fuzzTarget, testArgs []string, path string, k int) error {
	// Every access keeps its own site (rt's dedup would report a repeated
	// access at the first one's site and lose pairs).
	env := []string{"RACEKIT_DEDUP=0"}
	if k >= 0 {
		env = append(env, randomSchedEnv(*fuzzSeed+uint64(k))...)
	}
	return recordTests(t, testArgs, env, path, *fuzzTimeout)
}

// randomSchedEnv puts a run under the controlled random scheduler.
func randomSchedEnv(seed uint64) []string {
	return []string{"RACEKIT_SCHED=random", "RACEKIT_SEED=" + strconv.FormatUint(seed, 10)}
}

// preemptEnv makes each data access of a random-scheduler run a
// scheduling point with probability p (rt/sched.go, "Preemption").
func preemptEnv(p float64) string {
	return "RACEKIT_SCHED_PREEMPT=" + strconv.FormatFloat(p, 'g', -1, 64)
}

// recordTests runs t's tests once with env added, recording their trace
// into path, within timeout. A run that fails or times out still has its
// trace; one that left none is an error.
func recordTests(t *fuzzTarget, testArgs, env []string, path string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.bin, testArgs...)
	cmd.Dir = t.dir
	// No test-name events (rt/rttest's mark): controlled runs follow
	// this recording's positions and sites, and record none.
	cmd.Env = append(append(os.Environ(), "RACEKIT_TRACE="+path, "RACEKIT_TEST_NAMES=0"), env...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Run(); err != nil && ctx.Err() == nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return startError(t, err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("recorded run left no trace: %v", err)
	}
	return nil
}

// tracePairs returns the statement pairs the hybrid detector reports on a
// trace, phase 1's candidates, and the set of those hb reports too: two
// accesses the recorded run left unordered by happens-before, a data race
// of that execution as the Go memory model defines it, whether or not
// phase 2 can bring the two next to each other. Each statement is the
// access itself, file:line:col:r or :w (sched.ParseStmt), as the trace's
// site and op name it: phase 2 then postpones goroutines at those two
// accesses alone, not at every access on their lines (a harmless read
// beside the racing write would lower the probability of creating the
// race, §3.2). A site without a column is its line.
func tracePairs(path string) (pairs []string, observed map[string]bool, err error) {
	a, err := analyzeTrace(path, []string{"hybrid", "hb"})
	if err != nil {
		return nil, nil, err
	}
	stmt := func(s trace.Site, write bool) sched.Stmt {
		st := sched.Stmt{File: s.File, Line: s.Line, Col: s.Col, Kind: sched.KindRead}
		if write {
			st.Kind = sched.KindWrite
		}
		return st
	}
	hb := map[string]bool{} // the site pairs hb reported, kinds left out
	seen := map[string]bool{}
	for _, r := range a.results {
		for _, g := range r.Groups {
			pa, pb := a.meta.Site(g.Prev.Site), a.meta.Site(g.Cur.Site)
			if pa.File == "" || pb.File == "" {
				continue
			}
			x, y := stmt(pa, g.Prev.Write), stmt(pb, g.Cur.Write)
			if y.String() < x.String() {
				x, y = y, x
			}
			s := x.String() + "~" + y.String()
			switch {
			case r.Detector == "hb":
				hb[sitesOnly(s)] = true
			case !seen[s]:
				seen[s] = true
				pairs = append(pairs, s)
			}
		}
	}
	observed = map[string]bool{}
	for _, p := range pairs {
		if hb[sitesOnly(p)] {
			observed[p] = true
		}
	}
	return pairs, observed, nil
}

// sitesOnly is a pair with its statements' kinds left out, in order: hb
// and hybrid may report one pair of sites with other accesses of theirs
// (the read or the write of x++).
func sitesOnly(pair string) string {
	a, b, _ := strings.Cut(pair, "~")
	x, _ := sched.ParseStmt(a)
	y, _ := sched.ParseStmt(b)
	x.Kind, y.Kind = sched.KindOther, sched.KindOther
	if y.String() < x.String() {
		x, y = y, x
	}
	return x.String() + "~" + y.String()
}

// pairRun is one run of phase 2: t's test binary under RaceFuzzer with
// the pair and the seed, its schedule written to schedPath. Only the
// counts and notes are kept: a schedule can be millions of steps (every
// access at a statement in a hot loop is a point), and all runs of all
// pairs would not fit in memory, nor on disk. A binary that does not
// start is an error, whose run has no schedule to digest.
func pairRun(t *fuzzTarget, testArgs []string, pair string, seed uint64, schedPath string) (fuzzRun, error) {
	r, err := controlledRun(t, testArgs, []string{
		"RACEKIT_SCHED=racefuzzer",
		"RACEKIT_SEED=" + strconv.FormatUint(seed, 10),
		"RACEKIT_PAIR=" + pair,
	}, schedPath, *fuzzTimeout, nil)
	r.Seed = seed
	if err != nil {
		return r, err
	}
	r.Digest = sched.DigestSteps(r.Schedule.Steps)
	r.Schedule = nil
	return r, nil
}

// controlledRun runs the test binary once with env added, recording its
// schedule in schedPath, and classifies what happened. out, if not nil,
// receives the binary's output as it runs.
func controlledRun(t *fuzzTarget, testArgs, env []string, schedPath string, timeout time.Duration, out io.Writer) (fuzzRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.bin, append([]string{"-test.timeout=" + (timeout + 10*time.Second).String()}, testArgs...)...)
	cmd.Dir = t.dir
	cmd.Env = append(append(os.Environ(), env...), "RACEKIT_SCHEDULE_OUT="+schedPath)
	var buf bytes.Buffer
	if out != nil {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&buf, out), io.MultiWriter(&buf, out)
	} else {
		cmd.Stdout, cmd.Stderr = &buf, &buf
	}
	start := time.Now()
	err := cmd.Run()
	r := fuzzRun{Elapsed: time.Since(start)}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case ctx.Err() != nil:
			code = -1 // killed at the time limit
		default:
			return r, startError(t, err)
		}
	}
	if f, err := os.Open(schedPath); err == nil {
		r.Schedule, _ = sched.ReadSchedule(f, schedPath)
		f.Close()
	}
	if r.Schedule == nil {
		r.Schedule = &sched.Schedule{}
	}
	r.Steps = len(r.Schedule.Steps)
	r.Escapes = len(r.Schedule.NotesOf("escape"))
	if races := r.Schedule.NotesOf("race"); len(races) > 0 {
		r.Created = true
		r.Resolution = resolution(races[0])
	}
	r.Outcome, r.Detail = classify(ctx.Err() != nil, code, buf.String(), r.Schedule)
	return r, nil
}

// startError is the error of a test binary that did not run (missing,
// not executable, for another system): it names the package and the
// binary, and says why.
func startError(t *fuzzTarget, err error) error {
	return fmt.Errorf("%s: the test binary %s did not start: %v", t.Pkg, t.bin, err)
}

// resolution is "A before B" for a race note "G#N kind A | G#N kind B".
func resolution(note string) string {
	parts := strings.SplitN(note, " | ", 2)
	if len(parts) != 2 {
		return note
	}
	return pointSite(parts[0]) + " before " + pointSite(parts[1])
}

// pointSite is the site (and access kind) of a point's text "G#N kind site".
func pointSite(p string) string {
	f := strings.SplitN(strings.TrimSpace(p), " ", 3)
	if len(f) < 3 {
		return p
	}
	return relSite(f[2]) + " (" + map[string]string{"r": "read", "w": "write"}[f[1]] + ")"
}

// relSite shortens an absolute file name relative to the working
// directory when it is below it.
func relSite(s string) string {
	if wd, err := os.Getwd(); err == nil && strings.HasPrefix(s, wd+string(filepath.Separator)) {
		return s[len(wd)+1:]
	}
	return s
}

// classify names what a run led to.
func classify(timedOut bool, code int, out string, s *sched.Schedule) (string, string) {
	switch {
	case timedOut:
		return "timeout", ""
	case len(s.NotesOf("departure")) > 0 && code == sched.DepartedExit:
		return "stopped", "at its first departure from the clip"
	case len(s.NotesOf("deadlock")) > 0 && code == 3:
		return "deadlock", strings.Join(s.NotesOf("deadlock"), "; ")
	case strings.Contains(out, "fatal error: all goroutines are asleep"):
		return "deadlock", "fatal error: all goroutines are asleep"
	case strings.Contains(out, "\npanic: ") || strings.HasPrefix(out, "panic: "):
		i := strings.Index(out, "panic: ")
		line := out[i:]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		return "panic", strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "panic: "), " [recovered]")
	case code == 0:
		return "none", ""
	case strings.Contains(out, "--- FAIL"):
		var fails []string
		for _, l := range strings.Split(out, "\n") {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "--- FAIL: ") {
				name := strings.Fields(strings.TrimPrefix(t, "--- FAIL: "))[0]
				fails = append(fails, name)
			}
		}
		return "test failure", strings.Join(fails, ", ")
	}
	return "exit " + strconv.Itoa(code), ""
}

// summarize groups a pair's runs by resolution and outcome.
func summarize(pair string, t *fuzzTarget, runs, baseline []fuzzRun, goFlags []string) FuzzPair {
	fp := FuzzPair{Pair: pair, Package: t.Pkg, Runs: len(runs)}
	idx := map[[3]string]int{}
	for _, r := range runs {
		fp.Seconds += r.Elapsed.Seconds()
		if r.Escapes > 0 {
			fp.Escapes++
		}
		if r.Created {
			fp.Created++
			if fp.Replay == "" {
				fp.Replay = replayCommand(r.Seed, "-pair", pair, t.Pkg, goFlags)
			}
		}
		k := [3]string{r.Resolution, r.Outcome, r.Detail}
		i, ok := idx[k]
		if !ok {
			i = len(fp.Outcomes)
			idx[k] = i
			fp.Outcomes = append(fp.Outcomes, FuzzOutcome{Resolution: r.Resolution, Outcome: r.Outcome, Detail: r.Detail, digest: r.Digest, steps: r.Steps})
		}
		fp.Outcomes[i].Runs++
		fp.Outcomes[i].Seeds = append(fp.Outcomes[i].Seeds, r.Seed)
	}
	sort.SliceStable(fp.Outcomes, func(i, j int) bool {
		a, b := fp.Outcomes[i], fp.Outcomes[j]
		if a.Resolution != b.Resolution {
			return a.Resolution > b.Resolution // created ones first
		}
		return a.Runs > b.Runs
	})
	for i := range fp.Outcomes {
		o := &fp.Outcomes[i]
		for _, b := range baseline {
			if b.Outcome == o.Outcome && b.Detail == o.Detail {
				o.Baseline++
			}
		}
	}
	fp.Real = fp.Created > 0
	fp.Probability = float64(fp.Created) / float64(fp.Runs)
	return fp
}

// replayOutcomes replays, for every outcome that created its pair's race,
// the outcome's first seed -replay times (the runs of RaceFuzzer §2.2's
// replay: the seed alone, nothing recorded) and counts the replays whose
// schedule is the original run's, step for step.
func replayOutcomes(pairs []FuzzPair, jobs []fuzzJob, testArgs []string, tmp string) error {
	type task struct{ p, o, k int }
	var tasks []task
	for p := range pairs {
		for o, oc := range pairs[p].Outcomes {
			if oc.Resolution == "" {
				continue
			}
			for k := 0; k < *fuzzReplay; k++ {
				tasks = append(tasks, task{p, o, k})
			}
		}
	}
	var mu sync.Mutex
	return inParallel(len(tasks), *fuzzJobs, func(i int) error {
		tk := tasks[i]
		oc := &pairs[tk.p].Outcomes[tk.o]
		path := filepath.Join(tmp, fmt.Sprintf("replay%d-%d-%d.sched", tk.p, tk.o, tk.k))
		r, err := controlledRun(jobs[tk.p].t, testArgs, []string{
			"RACEKIT_SCHED=racefuzzer",
			"RACEKIT_SEED=" + strconv.FormatUint(oc.Seeds[0], 10),
			"RACEKIT_PAIR=" + jobs[tk.p].pair,
		}, path, *fuzzTimeout, nil)
		os.Remove(path)
		if err != nil {
			return err
		}
		d := sched.DigestSteps(r.Schedule.Steps)
		mu.Lock()
		defer mu.Unlock()
		oc.Replayed++
		switch {
		case d == oc.digest:
			oc.Identical++
		case oc.ReplayDiff == "":
			oc.ReplayDiff = fmt.Sprintf("replay %d: %d steps, the original %d; outcome %s", tk.k+1, r.Steps, oc.steps, r.Outcome)
			switch {
			case !r.Created:
				oc.ReplayDiff += ", race not created"
			case r.Resolution != oc.Resolution:
				oc.ReplayDiff += ", race " + r.Resolution
			}
		}
		return nil
	})
}

// replayCommand is the racekit replay command line for one run: flag
// -pair with a race pair, -cycle with a lock-order cycle.
func replayCommand(seed uint64, flag, arg, pkg string, goFlags []string) string {
	s := fmt.Sprintf("racekit replay -seed %d %s %s %s", seed, flag, shellQuote(arg), pkg)
	if len(goFlags) > 0 {
		var q []string
		for _, f := range goFlags {
			q = append(q, shellQuote(f))
		}
		s += " -- " + strings.Join(q, " ")
	}
	return s
}

func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == '~' || r == '=' || r == ',' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			safe = false
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// printFuzz writes the result as text, in the style of the race
// detector's reports.
func printFuzz(w io.Writer, res FuzzResult) {
	res0 := res
	real := 0
	observed := 0
	for _, p := range res.Pairs {
		a, b, _ := strings.Cut(p.Pair, "~")
		if !p.Real && p.Observed {
			observed++
			fmt.Fprintf(w, "==================\nWARNING: DATA RACE (observed: unordered by happens-before in a recorded run; racekit fuzz did not create it in %d runs)\n", p.Runs)
			fmt.Fprintf(w, "  between %s\n      and %s\n  in package %s\n  candidate from %s\n", relSite(a), relSite(b), p.Package, strings.Join(p.Sources, ", "))
			fmt.Fprintf(w, "  no run brought the two accesses next to each other: the value is likely\n  published through a plain flag; racekit test -algo=hb reports it with stacks\n==================\n")
			continue
		}
		if !p.Real {
			fmt.Fprintf(w, "racekit fuzz: %s and %s (%s, from %s): not created in %d runs", relSite(a), relSite(b), p.Package, strings.Join(p.Sources, ", "), p.Runs)
			if len(p.Outcomes) > 0 && p.Outcomes[0].Outcome != "none" {
				o := p.Outcomes[0]
				fmt.Fprintf(w, " (%d runs: %s %s)", o.Runs, o.Outcome, o.Detail)
			}
			fmt.Fprintln(w)
			continue
		}
		real++
		fmt.Fprintf(w, "==================\nWARNING: DATA RACE (confirmed: racekit fuzz created it in %d of %d runs, probability %.2f)\n", p.Created, p.Runs, p.Probability)
		fmt.Fprintf(w, "  between %s\n      and %s\n  in package %s\n  candidate from %s\n", relSite(a), relSite(b), p.Package, strings.Join(p.Sources, ", "))
		for _, o := range p.Outcomes {
			res := o.Resolution
			if res == "" {
				res = "not created"
			}
			what := o.Outcome
			if what == "none" {
				what = "no failure"
			}
			if o.Detail != "" {
				what += ": " + o.Detail
			}
			if o.Outcome != "none" && o.Baseline > 0 {
				what += fmt.Sprintf(" (also in %d of %d runs without the race: not its doing)", o.Baseline, res0.BaselineRuns)
			}
			fmt.Fprintf(w, "  %s -> %s\n      %d runs, seeds %s\n", res, what, o.Runs, seedList(o.Seeds))
			switch {
			case o.Replayed == 0:
			case o.Identical == o.Replayed:
				fmt.Fprintf(w, "      seed %d replayed %d times: the same schedule each time\n", o.Seeds[0], o.Replayed)
			default:
				fmt.Fprintf(w, "      seed %d replayed %d times: %d with the same schedule (%s)\n", o.Seeds[0], o.Replayed, o.Identical, o.ReplayDiff)
			}
		}
		if p.Escapes > 0 {
			fmt.Fprintf(w, "  (%d runs had goroutines leave the scheduler's control: they may not replay exactly)\n", p.Escapes)
		}
		fmt.Fprintf(w, "  replay: %s\n==================\n", p.Replay)
	}
	fmt.Fprintf(w, "racekit fuzz: %d candidate pairs (%s), %d real races confirmed", len(res.Pairs), res.Phase1, real)
	if observed > 0 {
		fmt.Fprintf(w, ", %d more observed but not created", observed)
	}
	fmt.Fprintln(w)
}

func seedList(s []uint64) string {
	var b strings.Builder
	for i, x := range s {
		if i == 8 {
			fmt.Fprintf(&b, " ... (%d more)", len(s)-8)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatUint(x, 10))
	}
	return b.String()
}
