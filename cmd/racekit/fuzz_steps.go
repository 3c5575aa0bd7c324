package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The steps of racekit fuzz for races, in the order runFuzz takes them.

// phase1 finds the candidate pairs of each of phase 1's sources, timing
// each one (Phase1SourceSeconds) and describing them all (Phase1).
func (f *raceFuzzer) phase1(sources []string) error {
	f.cands = &candidates{targets: f.targets, index: map[*fuzzTarget]map[string][]int{}}
	f.res = FuzzResult{BaselineRuns: *fuzzBase, Phase1Pairs: map[string]int{}, Phase1SourceSeconds: map[string]float64{}}
	var desc []string
	phase1 := time.Now()
	for _, src := range sources {
		start := time.Now()
		var d string
		var err error
		switch src {
		case "hybrid":
			d, err = f.hybridPairs()
		case "vet":
			d, err = f.vetPairs()
		case "pairs":
			d, err = f.filePairs()
		}
		if err != nil {
			return err
		}
		desc = append(desc, d)
		f.res.Phase1SourceSeconds[src] = time.Since(start).Seconds()
	}
	jobs := f.cands.jobs
	f.res.Phase1 = phase1Description(sources, desc, jobs, f.res.Phase1Pairs)
	phase1Time := time.Since(phase1)
	f.res.Phase1Seconds = phase1Time.Seconds()
	if *fuzzFlags.verbose {
		fmt.Fprintf(os.Stderr, "racekit fuzz: %d candidate pairs (%s) in %v\n", len(jobs), f.res.Phase1, phase1Time.Round(time.Millisecond))
	}
	return nil
}

// hybridPairs adds the pairs the hybrid detector finds on each package's
// recorded runs (-record, then -record-random under the random
// scheduler), or on -use-trace, and describes them.
func (f *raceFuzzer) hybridPairs() (string, error) {
	if *fuzzTrace != "" {
		// One trace: its pairs, on the first package.
		return "hybrid over " + *fuzzTrace, f.addTracePairs(f.targets[0], *fuzzTrace)
	}
	records := max(*fuzzRecord, 1) + *fuzzRecRand
	for _, t := range f.targets {
		for i := 0; i < records; i++ {
			path := filepath.Join(f.tmp, fmt.Sprintf("%s.%d.rkt", filepath.Base(t.bin), i))
			if err := recordRun(t, f.testArgs, path, i-max(*fuzzRecord, 1)); err != nil {
				return "", fmt.Errorf("%s: %w", t.Pkg, err)
			}
			if err := f.addTracePairs(t, path); err != nil {
				return "", err
			}
			f.prog.printf("phase 1: %s: recorded run %d/%d, %d candidate pairs so far", t.Pkg, i+1, records, len(f.cands.jobs))
		}
	}
	d := "hybrid"
	switch {
	case *fuzzRecRand > 0:
		runs := fmt.Sprintf("%d recorded runs", max(*fuzzRecord, 1))
		if *fuzzRecord <= 1 {
			runs = "1 recorded run"
		}
		d += fmt.Sprintf(" over %s and %d under the random scheduler", runs, *fuzzRecRand)
	case *fuzzRecord > 1:
		d += fmt.Sprintf(" over %d recorded runs", *fuzzRecord)
	}
	return d, nil
}

// addTracePairs adds the hybrid detector's pairs on one trace of t's
// tests, marking observed those hb reported there too.
func (f *raceFuzzer) addTracePairs(t *fuzzTarget, path string) error {
	ps, seen, err := tracePairs(path)
	if err != nil {
		return fmt.Errorf("%s: %w", t.Pkg, err)
	}
	for _, p := range ps {
		f.cands.add(t, p, "hybrid")
		if seen[p] {
			f.cands.observe(t, p)
		}
	}
	return nil
}

// vetPairs adds racekit vet's pairs on the packages (static, so on every
// package their files belong to) and describes them.
func (f *raceFuzzer) vetPairs() (string, error) {
	if *fuzzFlags.tags != "" {
		fmt.Fprintf(os.Stderr, "racekit fuzz: warning: vet analyzes the packages without -tags %s\n", *fuzzFlags.tags)
	}
	ps, unplaced, err := staticPairs(f.pkgs)
	if err != nil {
		return "", fmt.Errorf("vet: %w", err)
	}
	for _, p := range ps {
		f.cands.addAnywhere(p, "vet")
	}
	f.prog.printf("phase 1: vet: %d pairs", len(ps))
	d := "vet"
	if unplaced > 0 {
		d += fmt.Sprintf(" (%d warnings without a position skipped)", unplaced)
	}
	return d, nil
}

// filePairs adds the pairs listed in -pairs FILE and describes them.
func (f *raceFuzzer) filePairs() (string, error) {
	ps, unplaced, err := readPairs(*fuzzPairs)
	if err != nil {
		return "", err
	}
	for _, p := range ps {
		f.cands.addAnywhere(p, "pairs")
	}
	d := "pairs from " + *fuzzPairs
	if unplaced > 0 {
		d += fmt.Sprintf(" (%d lines without a position skipped)", unplaced)
	}
	return d, nil
}

// fuzzTask is one run of phase 2: run k (seed) of candidate pair j or,
// for j < 0, baseline run k of target -1-j.
type fuzzTask struct {
	j, k int
	seed uint64
}

// phase2 runs each package's test binary -baseline times with no pair,
// to tell a race's failures from the schedule's, then -runs times per
// candidate pair under RaceFuzzer, -j at a time.
func (f *raceFuzzer) phase2() error {
	if *fuzzKeep != "" {
		if err := os.MkdirAll(*fuzzKeep, 0o777); err != nil {
			return err
		}
	}
	tasks := f.phase2Tasks()
	jobs := f.cands.jobs
	f.prog.printf("phase 2: %d candidate pairs, %d runs each (and %d baseline runs per package), %d at a time", len(jobs), *fuzzRuns, *fuzzBase, *fuzzJobs)
	tally := newFuzzTally(f.prog, len(jobs))
	return inParallel(len(tasks), *fuzzJobs, func(i int) error {
		return f.runTask(tasks[i], tally)
	})
}

// phase2Tasks makes room for phase 2's runs and lists them, the baseline
// runs first, each sequence of runs with seeds -seed, -seed+1, ...
func (f *raceFuzzer) phase2Tasks() []fuzzTask {
	jobs := f.cands.jobs
	f.results = make([][]fuzzRun, len(jobs))
	f.baseline = make([][]fuzzRun, len(f.targets))
	var tasks []fuzzTask
	for ti := range f.targets {
		f.baseline[ti] = make([]fuzzRun, *fuzzBase)
		for k := 0; k < *fuzzBase; k++ {
			tasks = append(tasks, fuzzTask{-1 - ti, k, *fuzzSeed + uint64(k)})
		}
	}
	for j := range jobs {
		f.results[j] = make([]fuzzRun, *fuzzRuns)
		for k := 0; k < *fuzzRuns; k++ {
			tasks = append(tasks, fuzzTask{j, k, *fuzzSeed + uint64(k)})
		}
	}
	return tasks
}

// runTask makes one run of phase 2 and counts it in tally: a baseline
// run under the random scheduler, whose schedule is not kept, or a run of
// a pair under RaceFuzzer, whose schedule is kept with -keep.
func (f *raceFuzzer) runTask(tk fuzzTask, tally *fuzzTally) error {
	if tk.j < 0 {
		ti := -1 - tk.j
		path := filepath.Join(f.tmp, fmt.Sprintf("base%d-%d.sched", ti, tk.seed))
		r, err := controlledRun(f.targets[ti], f.testArgs, randomSchedEnv(tk.seed), path, *fuzzTimeout, nil)
		r.Schedule = nil
		os.Remove(path)
		f.baseline[ti][tk.k] = r
		tally.done(-1-ti, "baseline "+f.targets[ti].Pkg, *fuzzBase, r)
		return err
	}
	jb := f.cands.jobs[tk.j]
	schedPath := filepath.Join(f.tmp, fmt.Sprintf("%d-%d.sched", tk.j, tk.seed))
	if *fuzzKeep != "" {
		schedPath = filepath.Join(*fuzzKeep, fmt.Sprintf("%d-%d.sched", tk.j+1, tk.seed))
	}
	r, err := pairRun(jb.t, f.testArgs, jb.pair, tk.seed, schedPath)
	if *fuzzKeep == "" {
		os.Remove(schedPath)
	}
	f.results[tk.j][tk.k] = r
	tally.done(tk.j, jb.pair, *fuzzRuns, r)
	return err
}

// verdicts summarizes each pair's runs against its package's baseline
// into the result, with its verdict, and reports whether a pair was
// confirmed or observed (exit 66).
func (f *raceFuzzer) verdicts() bool {
	races := false
	base := map[*fuzzTarget][]fuzzRun{}
	for ti, t := range f.targets {
		base[t] = f.baseline[ti]
	}
	for j, jb := range f.cands.jobs {
		fp := summarize(jb.pair, jb.t, f.results[j], base[jb.t], f.goFlags)
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
		f.res.Pairs = append(f.res.Pairs, fp)
	}
	return races
}

// write prints the result on standard output, as text or -json.
func (f *raceFuzzer) write() error {
	if *fuzzJSON {
		return writeJSON(os.Stdout, f.res)
	}
	printFuzz(os.Stdout, f.res)
	return nil
}
