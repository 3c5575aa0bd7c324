package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace/tracefile"
)

var cmdGen = register(&command{
	name:      "gen",
	usageLine: "gen [-events N] [-seed N] [-goroutines N] [-locks N] [-vars N] [-racy F] [-nesting N] [-shape flat|tree|chain|waves] [-handoff F] [-novalues] [-config FILE] [-to rkt|std|rktx] [-truth FILE] [-v] -o OUT",
	short:     "generate a synthetic trace with planted races as ground truth",
	long: `
Gen writes a seeded synthetic trace to OUT (format from -to or OUT's
extension: .rkt, .std, .rktx) and its ground truth, the planted races as site
pairs, as JSON to -truth (default OUT.truth.json). The same flags always give
the same trace. Every planted race is a real happens-before race; every other
access is protected by its lock, private to its goroutine, or (with -handoff)
passed along a happens-before edge, so a precise detector must report exactly
the planted pairs (see the gen package documentation).

-config FILE reads every knob of gen.Config as JSON; flags given on the
command line override it. Sizes accept k, M and G suffixes (10M = 10000000).
`,
})

// Set in init: run refers to the flags, which refer to the command.
func init() { cmdGen.run = runGen }

var (
	genOut        = cmdGen.flags.String("o", "", "output trace file (\"-\" for stdout; then give -to)")
	genTo         = cmdGen.flags.String("to", "", "output format: rkt, std or rktx (default: from the extension)")
	genTruth      = cmdGen.flags.String("truth", "", "ground truth JSON file (default OUT.truth.json; \"none\" to skip)")
	genConfig     = cmdGen.flags.String("config", "", "JSON file with a gen.Config to start from")
	genEvents     = cmdGen.flags.String("events", "", "number of events (default 1M)")
	genSeed       = cmdGen.flags.Uint64("seed", 0, "random seed (default 1)")
	genGoroutines = cmdGen.flags.Int("goroutines", 0, "goroutines including main (default 8)")
	genLocks      = cmdGen.flags.Int("locks", -1, "mutexes (default 4)")
	genVars       = cmdGen.flags.Int("vars", -1, "shared variables (default 64)")
	genRacy       = cmdGen.flags.Float64("racy", -1, "share of shared variables that carry a planted race (default 0.1)")
	genNesting    = cmdGen.flags.Int("nesting", 0, "most locks held at once (default 2)")
	genShape      = cmdGen.flags.String("shape", "", "fork/join shape: flat, tree, chain, waves (default flat)")
	genHandoff    = cmdGen.flags.Float64("handoff", -1, "share of shared variables passed along snd/rcv and join edges (default 0)")
	genNoValues   = cmdGen.flags.Bool("novalues", false, "do not record values of accesses")
	genVerbose    = cmdGen.flags.Bool("v", false, "print events/s and bytes/event to stderr")
)

// parseCount parses 100, 10k, 10M, 1G.
func parseCount(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1_000, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1_000_000, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mult, s = 1_000_000_000, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad count %q (want a number like 1000, 10k, 10M)", s)
	}
	return n * mult, nil
}

func runGen(c *command, args []string) int {
	if len(args) != 0 || *genOut == "" {
		c.errorf("want -o OUT and no arguments")
		return exitUsage
	}
	cfg := gen.DefaultConfig()
	if *genConfig != "" {
		b, err := os.ReadFile(*genConfig)
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			c.errorf("%s: %v", *genConfig, err)
			return exitError
		}
	}
	if *genEvents != "" {
		n, err := parseCount(*genEvents)
		if err != nil {
			c.errorf("-events: %v", err)
			return exitUsage
		}
		cfg.Events = n
	}
	if *genSeed != 0 {
		cfg.Seed = *genSeed
	}
	if *genGoroutines != 0 {
		cfg.Goroutines = *genGoroutines
	}
	if *genLocks >= 0 {
		cfg.Locks = *genLocks
	}
	if *genVars >= 0 {
		cfg.Vars = *genVars
	}
	if *genRacy >= 0 {
		cfg.RacyFraction = *genRacy
	}
	if *genNesting != 0 {
		cfg.Nesting = *genNesting
	}
	if *genShape != "" {
		s, err := gen.ParseShape(*genShape)
		if err != nil {
			c.errorf("-shape: %v", err)
			return exitUsage
		}
		cfg.Shape = s
	}
	if *genHandoff >= 0 {
		cfg.HandoffFraction = *genHandoff
	}
	if *genNoValues {
		cfg.Values = false
	}
	if _, err := cfg.Normalized(); err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	var to tracefile.Format
	if *genTo != "" {
		var err error
		if to, err = tracefile.ParseFormat(*genTo); err != nil {
			c.errorf("%v", err)
			return exitUsage
		}
	}
	w, err := tracefile.Create(*genOut, to, tracefile.Options{})
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	start := time.Now()
	truth, err := gen.Generate(cfg, w)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	elapsed := time.Since(start)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	truthPath := *genTruth
	if truthPath == "" && *genOut != "-" {
		truthPath = *genOut + ".truth.json"
	}
	if truthPath != "" && truthPath != "none" {
		b, err := json.MarshalIndent(truth, "", "  ")
		if err == nil {
			err = os.WriteFile(truthPath, append(b, '\n'), 0o666)
		}
		if err != nil {
			c.errorf("writing ground truth: %v", err)
			return exitError
		}
	}
	if *genVerbose {
		size := "?"
		if fi, err := os.Stat(*genOut); err == nil {
			size = fmt.Sprintf("%d bytes, %.2f bytes/event", fi.Size(), float64(fi.Size())/float64(truth.Events))
		}
		fmt.Fprintf(os.Stderr, "racekit gen: %d events, %d races planted (%d unplanted), %s, in %v: %.2fM events/s, peak RSS %s\n",
			truth.Events, len(truth.Races), truth.Unplanted, size, elapsed.Round(time.Millisecond),
			float64(truth.Events)/elapsed.Seconds()/1e6, peakRSS())
	}
	return exitOK
}
