package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/racekit/racekit/confirm"
	"github.com/racekit/racekit/detect/anomaly"
	"github.com/racekit/racekit/instrument"
	"github.com/racekit/racekit/progress"
	"github.com/racekit/racekit/testout"
)

// racekit test's -confirm flags (and -sarif, which takes -confirm's
// verdicts).
var (
	testConfirm       *bool
	testBudget        *time.Duration
	testConfirmRuns   *int
	testConfirmJSON   *string
	testConfirmRecord *int
	testConfirmVet    *bool
	testHTML          *string
	testSARIF         *string
)

func addConfirmFlags() {
	testConfirm = cmdTest.flags.Bool("confirm", false, "re-execute each race under the controlled scheduler (RaceFuzzer) and print its verdict: confirmed with a replay command, or observed, or predicted")
	testBudget = cmdTest.flags.Duration("budget", 2*time.Minute, "with -confirm: the confirmation's time limit, building included")
	testConfirmRuns = cmdTest.flags.Int("confirm-runs", 10, "with -confirm: controlled runs per race")
	testConfirmRecord = cmdTest.flags.Int("confirm-record", 3, "with -confirm: more recorded runs of each package under the controlled random scheduler, whose potential pairs (hybrid) are confirmed too")
	testConfirmVet = cmdTest.flags.Bool("confirm-vet", false, "with -confirm: racekit vet's static pairs on the packages are confirmed too")
	testHTML = cmdTest.flags.String("html", "", "with -confirm: write each confirmed race's interleaving (the run that created it, one lane per goroutine) as an HTML page to DIR, with an index; with -deadlocks each deadlock made to happen in DIR/deadlocks")
	testConfirmJSON = cmdTest.flags.String("confirm-json", "", "with -confirm: also write the verdicts as JSON (racekit fuzz -json's format) to FILE")
	testSARIF = cmdTest.flags.String("sarif", "", "write every race reported as SARIF 2.1.0 to FILE: both accesses, their stacks, each race's verdict (-confirm's if given)")
}

// runConfirm is -confirm, once go test is done: the traced packages'
// test binaries built once; each race and candidate re-executed under
// RaceFuzzer, and with -deadlocks each predicted cycle under
// DeadlockFuzzer and each package under random delays, all within one
// -budget (package confirm); the verdicts
// printed on w and given to -sarif. It returns the exit status code
// becomes: a race or deadlock only the confirmation showed fails it.
func runConfirm(c *command, prep *instrument.Prepared, out *testout.Output, w io.Writer, code int) int {
	fail := func(err error) int {
		c.errorf("-confirm: %v", err)
		return exitError
	}
	start := time.Now()
	var pkgs []string
	for pkg := range out.Traces() {
		pkgs = append(pkgs, pkg)
	}
	slices.Sort(pkgs)
	// The races reported first, then RaceFuzzer's phase 1 on each
	// package's traces: potential pairs (hybrid) the report left out,
	// which only a run that makes them happen turns into races.
	given := out.Given()
	for _, pkg := range pkgs {
		for _, path := range out.Traces()[pkg] {
			more, err := confirm.TraceGiven(pkg, path)
			if err != nil {
				return fail(err)
			}
			given = append(given, more...)
		}
	}
	if len(given) == 0 && !*testFlags.deadlocks {
		return code
	}
	tmp, err := os.MkdirTemp("", "racekit-confirm-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	prog := progress.New("test", *testFlags.quiet)
	prog.Printf("confirming %d race(s): building the test binaries of %d package(s)", len(given), len(pkgs))
	targets, err := confirm.BuildTargets(prep, testFlags.buildFlags(), pkgs, tmp)
	if err != nil {
		return fail(err)
	}
	camp := confirm.Campaign{
		Targets: targets, Tmp: tmp, TestArgs: c.line.BinaryArgs(), GoFlags: c.line.GoTestArgs(),
		RecordRandom: *testConfirmRecord, RandomOnly: true,
		Runs: *testConfirmRuns, Jobs: runtime.NumCPU(), Seed: 1,
		Timeout: min(*testBudget, time.Minute), Deadline: start.Add(*testBudget),
		Progress: prog,
	}
	res, err := confirmRaces(camp, given, pkgs, w)
	if err != nil {
		return fail(err)
	}
	out.SARIF.Judge(res)
	if res != nil && res.Races() && code == exitOK && out.Failed() == 0 {
		// A race the run did not show but a controlled run made happen
		// (or a random-scheduler recording had) fails the tests, as a
		// race go test -race reports does.
		c.errorf("-confirm: races beyond the run's: exit status 1")
		code = exitError
	}
	if *testFlags.deadlocks {
		// The traces of the run and of the races' recordings: the same
		// seeds would record the same runs again.
		camp.Traces = out.Traces()
		if res != nil && len(res.Recorded) > 0 {
			camp.Traces, camp.RecordRandom = maps.Clone(out.Traces()), 0
			for pkg, paths := range res.Recorded {
				camp.Traces[pkg] = append(slices.Clone(camp.Traces[pkg]), paths...)
			}
		}
		deadlocked, err := confirmDeadlocks(camp, w)
		if err != nil {
			return fail(err)
		}
		if deadlocked {
			code = exitError
		}
	}
	return code
}

// confirmRaces runs RaceFuzzer over the given candidates (and, with
// -confirm-record and -confirm-vet, those phase 1 finds) and prints the
// verdicts on w, with -html's pages and -confirm-json's file; nil when
// there was nothing to confirm.
func confirmRaces(camp confirm.Campaign, given []confirm.Given, pkgs []string, w io.Writer) (*confirm.FuzzResult, error) {
	if len(given) == 0 {
		return nil, nil
	}
	start := time.Now()
	sources := []string{"given"}
	if *testConfirmRecord > 0 {
		sources = append(sources, "hybrid")
	}
	if *testConfirmVet {
		sources = append(sources, "vet")
	}
	keep := ""
	if *testHTML != "" {
		keep = filepath.Join(camp.Tmp, "schedules") // the confirmed runs' interleavings, drawn below
	}
	res, err := confirm.FuzzRaces(&confirm.RaceOptions{
		Campaign: camp,
		Sources:  sources,
		Given:    given,
		Pkgs:     pkgs,
		Keep:     keep,
		Tags:     *testFlags.tags,
	})
	if err != nil {
		return nil, err
	}
	confirm.PrintVerdicts(w, res, time.Since(start))
	if keep != "" {
		if err := writeRacePages(*testHTML, keep, res); err != nil {
			return &res, err
		}
	}
	if *testConfirmJSON != "" {
		f, err := os.Create(*testConfirmJSON)
		if err != nil {
			return &res, err
		}
		if err := writeJSON(f, res); err != nil {
			f.Close()
			return &res, err
		}
		return &res, f.Close()
	}
	return &res, nil
}

// writeRacePages draws each confirmed race of res: the schedule kept of
// the first run that created it (confirm.RaceClip), as clip pages in dir.
func writeRacePages(dir, keep string, res confirm.FuzzResult) error {
	var as []anomaly.Anomaly
	for _, p := range res.Pairs {
		if !p.Real || len(p.Outcomes) == 0 || p.Outcomes[0].Resolution == "" {
			continue // outcomes that created the race come first
		}
		s, err := confirm.KeptSchedule(keep, p, p.Outcomes[0].Seeds[0])
		if err != nil {
			return err
		}
		if a, ok := confirm.RaceClip(s, p.Pair); ok {
			as = append(as, *a)
		}
	}
	return writeClipPages(dir, "racekit test -confirm", as)
}

// writeDeadlockPages draws each deadlock the exploration made happen (its
// first run's last steps and blocked operations) as an HTML page in dir,
// with an index; nothing when there is none.
func writeDeadlockPages(dir, title string, explored []confirm.ExploredBlocking) error {
	var as []anomaly.Anomaly
	for _, e := range explored {
		if e.Clip != nil {
			as = append(as, *e.Clip)
		}
	}
	if len(as) == 0 {
		return nil
	}
	return writeClipPages(dir, title, as)
}

// confirmDeadlocks is -confirm with -deadlocks: DeadlockFuzzer (package
// confirm) over the lock-order cycles iGoodlock predicts on camp's
// traces and recordings, then camp.Runs runs of each package under random
// delays (ExploreBlocking), the verdicts printed on w; it reports whether
// a deadlock was made to happen.
func confirmDeadlocks(camp confirm.Campaign, w io.Writer) (bool, error) {
	start := time.Now()
	cycles, err := confirm.FuzzDeadlocks(&camp)
	if err != nil {
		return false, err
	}
	camp.LeaksIgnore = testFlags.ignoredLeaks()
	explored, err := confirm.ExploreBlocking(&camp, camp.Runs)
	if err != nil {
		return false, err
	}
	if !*testFlags.leaks {
		// The leaks exploration made happen are --leaks' to report.
		explored = slices.DeleteFunc(explored, func(e confirm.ExploredBlocking) bool { return e.Kind == "leak" })
	}
	fmt.Fprintf(w, "racekit: each lock-order cycle re-executed under DeadlockFuzzer's controlled scheduler, each package under random delays (%.1fs)\n", time.Since(start).Seconds())
	confirm.PrintDeadlocks(w, cycles)
	confirm.PrintExplored(w, explored, camp.Runs)
	if *testHTML != "" {
		if err := writeDeadlockPages(filepath.Join(*testHTML, "deadlocks"), "racekit test -confirm: deadlocks", explored); err != nil {
			return false, err
		}
	}
	return len(explored) > 0 || slices.ContainsFunc(cycles, func(cy confirm.DeadlockCycle) bool { return cy.Verdict == "confirmed" }), nil
}
