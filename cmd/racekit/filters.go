package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/racekit/racekit/filter"
	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/filter/tree"
	"github.com/racekit/racekit/trace"
)

// Event filters between a trace and the detectors (package filter): the
// flags that choose them and the stage they build.
type filterFlags struct {
	filter *string
	sample *string
	seed   *int64
	// schedule is racekit test's and run's -schedule (nil for analyze):
	// "random" records under the controlled random scheduler.
	schedule *string
	// loops is racekit test's and run's -sample-loops (nil for analyze,
	// whose traces have no loop boundaries): loop regions (rt/loop.go).
	loops *bool
}

func addFilterFlags(c *command) *filterFlags {
	return &filterFlags{
		filter: c.flags.String("filter", "", "drop events that cannot add a race: tree (TREE, tuned to the detectors chosen)"),
		sample: c.flags.String("sample", "", "keep only the memory accesses a LiteRace sampler keeps: "+strings.Join(sample.Names(), ", ")),
		seed:   c.flags.Int64("seed", 1, "seed of the random samplers (and of -schedule random)"),
	}
}

// addRecordingFlags is addFilterFlags for the commands that record (racekit
// test and run), with -schedule.
func addRecordingFlags(c *command) *filterFlags {
	ff := addFilterFlags(c)
	ff.loops = c.flags.Bool("sample-loops", false, "with -sample: each execution of a loop is a sampling region too, its iterations backing off as a function's calls do (LiteRace's proposed loop granularity: long loops in a call no longer recorded in full)")
	ff.schedule = c.flags.String("schedule", "", "random: record under racekit's controlled random scheduler, seeded by -seed (one goroutine runs at a time, switching at synchronization; schedules Go's scheduler rarely shows)")
	return ff
}

// check reports a bad flag value before any input is read.
func (ff *filterFlags) check() error {
	if *ff.filter != "" && *ff.filter != "tree" {
		return fmt.Errorf("unknown -filter %q (want tree)", *ff.filter)
	}
	if *ff.sample != "" {
		if _, err := sample.Lookup(*ff.sample); err != nil {
			return err
		}
	}
	return nil
}

// checkRecording is check for racekit test and run, which filter while the
// program records (package rt): the events dropped never reach the trace,
// so a detector the filters are not sound for is refused. The samplers
// and TREE keep every race of hb, fasttrack, hybrid and lockset (a subset,
// for the samplers) but not of the predictive detectors, whose reorderings
// rely on every access (a dropped write would let a read be predicted to
// see another value).
func (ff *filterFlags) checkRecording(algos []string) error {
	if err := ff.check(); err != nil {
		return err
	}
	if ff.schedule != nil && *ff.schedule != "" && *ff.schedule != "random" {
		return fmt.Errorf("unknown -schedule %q (want random)", *ff.schedule)
	}
	if ff.loops != nil && *ff.loops && *ff.sample == "" {
		return fmt.Errorf("-sample-loops samples loops with the sampler -sample names; it has none")
	}
	if *ff.sample == "" && *ff.filter == "" {
		return nil
	}
	for _, a := range algos {
		switch a {
		case "mcm", "rdit", "wcp":
			return fmt.Errorf("-sample and -filter drop accesses while recording; the predictive detector %s needs them all (use racekit analyze on a full trace)", a)
		}
	}
	return nil
}

// runtimeEnv is the environment that makes the instrumented program apply
// the chosen filters while it records (package rt): the sampler's dispatch
// check at each function entry, TREE in its writer, tuned to algos as wrap
// tunes it.
func (ff *filterFlags) runtimeEnv(algos []string) []string {
	var env []string
	if *ff.sample != "" {
		env = append(env, "RACEKIT_SAMPLE="+*ff.sample, "RACEKIT_SEED="+strconv.FormatInt(*ff.seed, 10))
		if ff.loops != nil && *ff.loops {
			env = append(env, "RACEKIT_SAMPLE_LOOPS=1")
		}
	}
	if *ff.filter == "tree" {
		env = append(env, "RACEKIT_FILTER=tree", "RACEKIT_FILTER_FOR="+treeRelationFor(algos))
	}
	if ff.schedule != nil && *ff.schedule == "random" {
		env = append(env, "RACEKIT_SCHED=random", "RACEKIT_SEED="+strconv.FormatInt(*ff.seed, 10))
	}
	return env
}

// treeRelationFor names the detector whose races TREE must keep: the one
// chosen, or "all" (tree.OptionsFor's zero Options, sound for every
// detector) when several run on one trace.
func treeRelationFor(algos []string) string {
	if len(algos) == 1 {
		return algos[0]
	}
	return "all"
}

// filterStage is the filters put in front of the detectors, with what
// each reports afterwards.
type filterStage struct {
	readers []*filter.Reader
	names   []string
	sampler *sample.Filter
}

// wrap puts the chosen filters in front of r, for the detectors algos: the
// sampler first (it decides per function invocation, so it must see every
// access), then TREE, which keeps every race of the relation each detector
// uses (for several detectors, the relation that serves them all).
func (ff *filterFlags) wrap(r trace.Reader, algos []string) (trace.Reader, *filterStage, error) {
	st := &filterStage{}
	add := func(f filter.Filter, name string) {
		fr := filter.NewReader(r, f)
		st.readers, st.names = append(st.readers, fr), append(st.names, name)
		r = fr
	}
	if *ff.sample != "" {
		s, err := sample.NewFilter(*ff.sample, *ff.seed)
		if err != nil {
			return nil, nil, err
		}
		st.sampler = s
		add(s, "sample="+*ff.sample)
	}
	if *ff.filter == "tree" {
		add(tree.New(tree.OptionsFor(treeRelationFor(algos))), "tree")
	}
	return r, st, nil
}

// report prints what the filters kept.
func (st *filterStage) report(w io.Writer, cmd string) {
	for i, fr := range st.readers {
		total := fr.Kept() + fr.Dropped()
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(fr.Dropped()) / float64(total)
		}
		fmt.Fprintf(w, "racekit %s: filter %s: kept %d of %d events, dropped %.1f%% (%d accesses)\n",
			cmd, st.names[i], fr.Kept(), total, pct, fr.DroppedAccesses())
	}
	if st.sampler != nil {
		s := st.sampler.Stats()
		fmt.Fprintf(w, "racekit %s: sampler logged %d of %d memory accesses (effective sampling rate %.2f%%)\n",
			cmd, s.Logged, s.Accesses, 100*s.ESR())
	}
}
