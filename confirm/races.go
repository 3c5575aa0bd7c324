package confirm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/racekit/racekit/analyze"
)

// RaceOptions are a campaign of RaceFuzzer (racekit fuzz for races).
type RaceOptions struct {
	Campaign
	Pkgs      []string // the package patterns (vet's source analyzes them)
	Sources   []string // phase 1's sources, from Phase1Sources
	PairsFile string   // the pairs source's file
	Baseline  int      // controlled runs per target without a pair (Random)
	Replay    int      // replays of the first seed of every outcome that created a race
	Keep      string   // if set, each run's schedule is kept in Keep/PAIR-SEED.sched
	Verbose   bool     // phase 1's summary on stderr
	Tags      string   // go's -tags, which vet's source does not honour (a warning)
	// Given are candidates found elsewhere (racekit test's races), the
	// source "given" of Sources.
	Given []Given
}

// Given is a candidate pair found before the campaign: a race racekit
// test reported, observed on its run or predicted.
type Given struct {
	Package string
	Pair    string // as RacePair gives it
	Source  string // what found it: "observed" (a race of the run) or "predicted"
	Test    string // the top-level test it raced in; its runs run that test alone
}

// raceFuzzer is one campaign of RaceFuzzer: the candidate pairs phase 1
// found and the runs phase 2 made of them, which each step passes on to
// the next.
type raceFuzzer struct {
	*RaceOptions
	cands    *candidates
	res      FuzzResult
	results  [][]Run // per candidate pair (cands.jobs), its runs
	baseline [][]Run // per target, its baseline runs (those of its shard)
}

// FuzzRaces is RaceFuzzer (Sen, PLDI'08) for Go tests: phase 1 finds
// candidate racing statement pairs from o.Sources, phase 2 runs each
// target's test binary o.Baseline times without a pair, to tell a race's
// failures from the schedule's, and o.Runs times per pair under the
// RaceFuzzer strategy; each pair gets its verdict, and with o.Replay its
// created outcomes are replayed from their seeds.
func FuzzRaces(o *RaceOptions) (FuzzResult, error) {
	f := &raceFuzzer{RaceOptions: o}
	if err := f.phase1(); err != nil {
		return FuzzResult{}, err
	}
	if err := f.phase2(); err != nil {
		return FuzzResult{}, err
	}
	f.verdicts()
	if o.Replay > 0 {
		if err := f.replayOutcomes(); err != nil {
			return FuzzResult{}, err
		}
	}
	return f.res, nil
}

// The steps of FuzzRaces, in the order it takes them.

// phase1 finds the candidate pairs of each of phase 1's sources, timing
// each one (Phase1SourceSeconds) and describing them all (Phase1).
func (f *raceFuzzer) phase1() error {
	sources := f.Sources
	f.cands = &candidates{targets: f.Targets, index: map[*Target]map[string][]int{}}
	f.res = FuzzResult{Shard: f.Shard.String(), BaselineRuns: f.Shard.count(f.Baseline), Phase1Pairs: map[string]int{}, Phase1SourceSeconds: map[string]float64{}}
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
		case "given":
			d = f.givenPairs()
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
	if f.Verbose {
		fmt.Fprintf(os.Stderr, "racekit fuzz: %d candidate pairs (%s) in %v\n", len(jobs), f.res.Phase1, phase1Time.Round(time.Millisecond))
	}
	f.cands.shard(f.Shard)
	return nil
}

// hybridPairs adds the pairs the hybrid detector finds on each package's
// recorded runs (-record, then -record-random under the random
// scheduler), or on -use-trace, and describes them.
func (f *raceFuzzer) hybridPairs() (string, error) {
	if f.Trace != "" {
		// One trace: its pairs, on the first package.
		return "hybrid over " + f.Trace, f.addTracePairs(f.Targets[0], f.Trace)
	}
	records := f.records()
	for _, t := range f.Targets {
		for i := 0; i < records; i++ {
			if f.pastDeadline() {
				f.Progress.Printf("phase 1: %s: the time budget ran out after %d of %d recorded runs", t.Pkg, i, records)
				break
			}
			path := filepath.Join(f.Tmp, fmt.Sprintf("%s.%d.rkt", filepath.Base(t.Bin), i))
			if err := f.recordRun(t, path, i-f.plain()); err != nil {
				return "", fmt.Errorf("%s: %w", t.Pkg, err)
			}
			if f.res.Recorded == nil {
				f.res.Recorded = map[string][]string{}
			}
			f.res.Recorded[t.Pkg] = append(f.res.Recorded[t.Pkg], path)
			if err := f.addTracePairs(t, path); err != nil {
				return "", err
			}
			f.Progress.Printf("phase 1: %s: recorded run %d/%d, %d candidate pairs so far", t.Pkg, i+1, records, len(f.cands.jobs))
		}
	}
	d := "hybrid"
	switch {
	case f.RecordRandom > 0:
		runs := fmt.Sprintf("%d recorded runs", max(f.Record, 1))
		if f.Record <= 1 {
			runs = "1 recorded run"
		}
		d += fmt.Sprintf(" over %s and %d under the random scheduler", runs, f.RecordRandom)
	case f.Record > 1:
		d += fmt.Sprintf(" over %d recorded runs", f.Record)
	}
	return d, nil
}

// addTracePairs adds the hybrid detector's pairs on one trace of t's
// tests, marking observed those hb reported there too.
func (f *raceFuzzer) addTracePairs(t *Target, path string) error {
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
	if f.Tags != "" {
		fmt.Fprintf(os.Stderr, "racekit fuzz: warning: vet analyzes the packages without -tags %s\n", f.Tags)
	}
	ps, unplaced, err := staticPairs(f.Pkgs)
	if err != nil {
		return "", fmt.Errorf("vet: %w", err)
	}
	for _, p := range ps {
		f.cands.addAnywhere(p, "vet")
	}
	f.Progress.Printf("phase 1: vet: %d pairs", len(ps))
	d := "vet"
	if unplaced > 0 {
		d += fmt.Sprintf(" (%d warnings without a position skipped)", unplaced)
	}
	return d, nil
}

// filePairs adds the pairs listed in -pairs FILE and describes them.
func (f *raceFuzzer) filePairs() (string, error) {
	ps, unplaced, err := readPairs(f.PairsFile)
	if err != nil {
		return "", err
	}
	for _, p := range ps {
		f.cands.addAnywhere(p, "pairs")
	}
	d := "pairs from " + f.PairsFile
	if unplaced > 0 {
		d += fmt.Sprintf(" (%d lines without a position skipped)", unplaced)
	}
	return d, nil
}

// givenPairs adds the Given pairs to their packages' candidates, an
// observed race marked so.
func (f *raceFuzzer) givenPairs() string {
	for _, g := range f.Given {
		for _, t := range f.Targets {
			if t.Pkg != g.Package {
				continue
			}
			before := len(f.cands.jobs)
			f.cands.add(t, g.Pair, g.Source)
			if len(f.cands.jobs) > before {
				f.cands.jobs[before].test = g.Test
			}
			if g.Source == "observed" {
				f.cands.observe(t, g.Pair)
			}
		}
	}
	return "the races of the recorded runs"
}

// TraceGiven are the candidates of one recorded trace of pkg's tests:
// the races hb reports (observed: unordered by happens-before in that run)
// and the pairs RaceFuzzer's phase 1 finds (hybrid: no common lock,
// unordered by fork, join and messages; potential), each once, with the
// top-level test it raced in.
func TraceGiven(pkg, path string) ([]Given, error) {
	a, err := analyze.Trace(path, analyze.Options{Algos: []string{"hb", "hybrid"}, New: phase1Detector})
	if err != nil {
		return nil, err
	}
	var out []Given
	seen := map[string]bool{} // sitesOnly of the pairs given
	for _, r := range a.Results {
		source := "potential"
		if r.Detector == "hb" {
			source = "observed"
		}
		for _, g := range r.Groups {
			s, ok := RacePair(a.Meta, g.Prev, g.Cur)
			if !ok || seen[sitesOnly(s)] {
				continue
			}
			seen[sitesOnly(s)] = true
			test, _, _ := strings.Cut(r.Tests[g.Pair()], "/")
			out = append(out, Given{Package: pkg, Pair: s, Source: source, Test: test})
		}
	}
	return out, nil
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
	if f.Keep != "" {
		if err := os.MkdirAll(f.Keep, 0o777); err != nil {
			return err
		}
	}
	tasks := f.phase2Tasks()
	jobs := f.cands.jobs
	f.Progress.Printf("phase 2: %d candidate pairs, %d runs each (and %d baseline runs per package), %d at a time", len(jobs), f.Runs, f.Shard.count(f.Baseline), f.Jobs)
	tally := newFuzzTally(f.Progress, len(jobs))
	return inParallel(len(tasks), f.Jobs, func(i int) error {
		return f.runTask(tasks[i], tally)
	})
}

// phase2Tasks makes room for phase 2's runs and lists them, the baseline
// runs first, each sequence of runs with seeds -seed, -seed+1, ...
func (f *raceFuzzer) phase2Tasks() []fuzzTask {
	jobs := f.cands.jobs
	f.results = make([][]Run, len(jobs))
	f.baseline = make([][]Run, len(f.Targets))
	var tasks []fuzzTask
	for ti := range f.Targets {
		// A shard makes its share of the baseline seeds (Shard.Baseline).
		seeds := f.Shard.baselineSeeds(f.Seed, f.Baseline)
		f.baseline[ti] = make([]Run, len(seeds))
		for k, seed := range seeds {
			tasks = append(tasks, fuzzTask{-1 - ti, k, seed})
		}
	}
	for j := range jobs {
		f.results[j] = make([]Run, f.Runs)
		for k := 0; k < f.Runs; k++ {
			tasks = append(tasks, fuzzTask{j, k, f.Seed + uint64(k)})
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
		path := filepath.Join(f.Tmp, fmt.Sprintf("base%d-%d.sched", ti, tk.seed))
		r, err := controlledRun(f.Targets[ti], f.TestArgs, randomSchedEnv(tk.seed), path, f.Timeout, nil)
		r.Seed = tk.seed
		r.Schedule = nil
		os.Remove(path)
		f.baseline[ti][tk.k] = r
		tally.done(-1-ti, "baseline "+f.Targets[ti].Pkg, len(f.baseline[ti]), r)
		return err
	}
	jb := f.cands.jobs[tk.j]
	if f.pastDeadline() {
		tally.done(tk.j, jb.pair, f.Runs, Run{})
		return nil // not run: Outcome "" (summarize counts it skipped)
	}
	schedPath := filepath.Join(f.Tmp, fmt.Sprintf("%d-%d.sched", tk.j, tk.seed))
	if f.Keep != "" {
		schedPath = filepath.Join(f.Keep, fmt.Sprintf("%d-%d.sched", jb.index, tk.seed))
	}
	r, err := f.pairRun(jb.t, jb.pair, jb.test, tk.seed, schedPath)
	if f.Keep == "" {
		os.Remove(schedPath)
	}
	f.results[tk.j][tk.k] = r
	tally.done(tk.j, jb.pair, f.Runs, r)
	return err
}

// verdicts summarizes each pair's runs against its package's baseline
// into the result, with its verdict.
func (f *raceFuzzer) verdicts() {
	for ti, t := range f.Targets {
		f.res.Baselines = append(f.res.Baselines, baselineOutcomes(t.Pkg, f.baseline[ti])...)
	}
	for j, jb := range f.cands.jobs {
		fp := summarize(jb.pair, jb.t, f.results[j], testFlags(f.GoFlags, jb.test))
		fp.Index = jb.index
		fp.Test = jb.test
		fp.Sources = jb.sources
		fp.Observed = jb.observed
		fp.setVerdict()
		f.res.Pairs = append(f.res.Pairs, fp)
	}
	f.res.countBaselines()
}
