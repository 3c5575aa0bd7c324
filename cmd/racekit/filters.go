package main

import (
	"fmt"
	"io"
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
}

func addFilterFlags(c *command) *filterFlags {
	return &filterFlags{
		filter: c.flags.String("filter", "", "drop events that cannot add a race: tree (TREE, tuned to the detectors chosen)"),
		sample: c.flags.String("sample", "", "keep only the memory accesses a LiteRace sampler keeps: "+strings.Join(sample.Names(), ", ")),
		seed:   c.flags.Int64("seed", 1, "seed of the random samplers"),
	}
}

// check reports a bad flag value before any input is read.
func (ff *filterFlags) check() error {
	if *ff.filter != "" && *ff.filter != "tree" {
		return fmt.Errorf("unknown --filter %q (want tree)", *ff.filter)
	}
	if *ff.sample != "" {
		if _, err := sample.Lookup(*ff.sample); err != nil {
			return err
		}
	}
	return nil
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
		o := tree.Options{} // All: safe for every detector
		if len(algos) == 1 {
			o = tree.OptionsFor(algos[0])
		}
		add(tree.New(o), "tree")
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
