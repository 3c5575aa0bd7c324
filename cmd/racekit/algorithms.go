package main

import (
	"os"
	"sort"
	"strings"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/lockset"
	"github.com/racekit/racekit/detect/predict"
	"github.com/racekit/racekit/detect/wcp"
	"github.com/racekit/racekit/finding"
)

// algorithms maps -algo names to detector constructors. barriers marks the
// detectors that read BarrierPairs (calls into untraced code with the
// addresses they reach): a recording for the others is made without them.
var algorithms = map[string]struct {
	make     func(finding.Sink) detect.Detector
	doc      string
	barriers bool
}{
	"hb":        {func(s finding.Sink) detect.Detector { return hb.New(s) }, "happens-before with full vector clocks (DJIT+); every distinct racing site pair; precise", false},
	"fasttrack": {func(s finding.Sink) detect.Detector { return hb.NewFastTrack(s) }, "FastTrack epochs; the same raced addresses and first race per address as hb, faster; precise", false},
	"lockset":   {func(s finding.Sink) detect.Detector { return lockset.New(s) }, "Eraser lockset with its ownership state machine; potential races (false alarms expected)", false},
	"hybrid":    {func(s finding.Sink) detect.Detector { return lockset.NewHybrid(s) }, "O'Callahan-Choi hybrid (RaceFuzzer phase 1): no common lock and unordered by fork/join/messages; potential", false},
	"mcm":       {func(s finding.Sink) detect.Detector { return predict.NewMCM(s, predict.Options{}) }, "maximal causal model: every race some feasible reordering of the trace shows (windows of 10000 events, SAT solving); predicted, with a witness schedule", false},
	"rdit":      {func(s finding.Sink) detect.Detector { return predict.NewRDIT(s, predict.Options{}) }, "RDIT: mcm that also trusts BarrierPairs (calls into untraced code) to hide only synchronization on their reachable addresses; precise on incomplete traces", true},
	"wcp":       {func(s finding.Sink) detect.Detector { return wcp.New(s) }, "weak causal precedence (Kini et al., PLDI'17): races other interleavings would show, in linear time; predicted (its first race is real or a deadlock)", false},
}

// analyzeOptions are the options of an analysis (package analyze) running
// algos, racekit's -algo detectors made from the algorithms table.
func analyzeOptions(algos []string, startFunc string, progress func(n int64)) analyze.Options {
	return analyze.Options{
		Algos:     algos,
		New:       func(name string, s finding.Sink) detect.Detector { return algorithms[name].make(s) },
		StartFunc: startFunc,
		Progress:  progress,
	}
}

// goRaceOptions are analyzeOptions for racekit test and run: the races go
// test -race and go run -race would report, no more (not those with an
// access its race detector forgets at each report, nor those GORACE's
// suppress_equal_stacks leaves out).
func goRaceOptions(algos []string, progress func(n int64)) analyze.Options {
	o := analyzeOptions(algos, "", progress)
	o.Suppress = analyze.GoRaceSuppress(os.Getenv("GORACE"))
	return o
}

func algoNames() string {
	var ns []string
	for n := range algorithms {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return strings.Join(ns, ", ")
}
