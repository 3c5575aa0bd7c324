package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/racekit/racekit/confirm"
	"github.com/racekit/racekit/detect/anomaly"
	"github.com/racekit/racekit/instrument"
	"github.com/racekit/racekit/progress"
)

// confirmRaces is -confirm: the packages' test binaries built, each race
// re-executed under RaceFuzzer (package confirm) within -budget, and the
// verdicts printed on w and returned (nil if none were made).
func confirmRaces(c *command, prep *instrument.Prepared, given []confirm.Given, traces map[string][]string, deadline time.Time, w io.Writer) (*confirm.FuzzResult, error) {
	start := time.Now()
	// The races reported first, then RaceFuzzer's phase 1 on each
	// package's traces: potential pairs (hybrid) the report left out,
	// which only a run that makes them happen turns into races.
	var pkgs []string
	for pkg := range traces {
		pkgs = append(pkgs, pkg)
	}
	slices.Sort(pkgs)
	for _, pkg := range pkgs {
		for _, path := range traces[pkg] {
			more, err := confirm.TraceGiven(pkg, path)
			if err != nil {
				return nil, err
			}
			given = append(given, more...)
		}
	}
	if len(given) == 0 {
		return nil, nil
	}
	pkgs = pkgs[:0]
	for _, g := range given {
		if !slices.Contains(pkgs, g.Package) {
			pkgs = append(pkgs, g.Package)
		}
	}
	tmp, err := os.MkdirTemp("", "racekit-confirm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	prog := progress.New("test", *testFlags.quiet)
	prog.Printf("confirming %d race(s): building the test binaries of %d package(s)", len(given), len(pkgs))
	targets, err := confirm.BuildTargets(prep, testFlags.buildFlags(), pkgs, tmp)
	if err != nil {
		return nil, err
	}
	sources := []string{"given"}
	if *testConfirmRecord > 0 {
		sources = append(sources, "hybrid")
	}
	if *testConfirmVet {
		sources = append(sources, "vet")
	}
	keep := ""
	if *testHTML != "" {
		keep = filepath.Join(tmp, "schedules") // the confirmed runs' interleavings, drawn below
	}
	res, err := confirm.FuzzRaces(&confirm.RaceOptions{
		Campaign: confirm.Campaign{
			Targets: targets, Tmp: tmp, TestArgs: c.line.BinaryArgs(),
			RecordRandom: *testConfirmRecord, RandomOnly: true,
			Runs: *testConfirmRuns, Jobs: runtime.NumCPU(), Seed: 1,
			Timeout: min(*testBudget, time.Minute), Deadline: deadline,
			Progress: prog,
		},
		Sources: sources,
		Given:   given,
		Pkgs:    pkgs,
		Keep:    keep,
		Tags:    *testFlags.tags,
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

// confirmDeadlocks is -confirm with -deadlocks: DeadlockFuzzer (package
// confirm) over the lock-order cycles iGoodlock predicts on each
// package's traces and on -confirm-record more recordings, its verdicts
// printed on w; it reports whether a cycle was made to deadlock.
func confirmDeadlocks(c *command, prep *instrument.Prepared, traces map[string][]string, deadline time.Time, w io.Writer) (bool, error) {
	start := time.Now()
	var pkgs []string
	for pkg := range traces {
		pkgs = append(pkgs, pkg)
	}
	slices.Sort(pkgs)
	tmp, err := os.MkdirTemp("", "racekit-confirm-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	prog := progress.New("test", *testFlags.quiet)
	prog.Printf("confirming deadlocks: building the test binaries of %d package(s)", len(pkgs))
	targets, err := confirm.BuildTargets(prep, testFlags.buildFlags(), pkgs, tmp)
	if err != nil {
		return false, err
	}
	cycles, err := confirm.FuzzDeadlocks(&confirm.Campaign{
		Targets: targets, Tmp: tmp, TestArgs: c.line.BinaryArgs(), Traces: traces,
		RecordRandom: *testConfirmRecord, RandomOnly: true,
		Runs: *testConfirmRuns, Jobs: runtime.NumCPU(), Seed: 1,
		Timeout: min(*testBudget, time.Minute), Deadline: deadline,
		Progress: prog,
	})
	if err != nil {
		return false, err
	}
	fmt.Fprintf(w, "racekit: each lock-order cycle re-executed under DeadlockFuzzer's controlled scheduler (%.1fs)\n", time.Since(start).Seconds())
	confirm.PrintDeadlocks(w, cycles)
	return slices.ContainsFunc(cycles, func(cy confirm.DeadlockCycle) bool { return cy.Verdict == "confirmed" }), nil
}
