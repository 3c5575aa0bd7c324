package main

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/racekit/racekit/bench/harness"
	"github.com/racekit/racekit/bench/truth"
)

var cmdBench = register(&command{
	name:      "bench",
	usageLine: "bench [-algo=fasttrack] [-json] [-out FILE] [-subjects DIR] [-keep-trace DIR] [-dedup] [-vet-flags FLAGS] [-v] [subject ...]",
	short:     "run an analysis over the subject programs and score it against their ground truth",
	long: `
Bench runs one analysis over racekit's subject programs (bench/subjects: Go
versions of the seed papers' benchmarks, each line of a known race marked
with a racekit:race comment; see docs/subjects.md) and scores what it finds
against those markers, seed-table style: per subject its size (lines, go
statements, and for dynamic analyses the goroutines and events of its
traces), the analysis time, the distinct findings (by line pair), how many
are true, false (and of those, known lockset false alarms, marked
racekit:norace), and how many expected races were missed; then the totals
with precision (true/findings) and recall (found/expected).

-algo selects the analysis:
	hb, fasttrack, lockset, hybrid
	           run the subjects' tests under 'racekit test -keep-trace'
	           (one instrumented build) and run that detector on each trace;
	           every access is recorded (RACEKIT_DEDUP=0) unless -dedup
	vet        'racekit vet -json' (RELAY, static) on each subject

Subjects are named by directory name (default: all of them). The text table
goes to stdout, or JSON with -json; -out also writes the JSON to a file,
with the command line that made it.

Exit status: 0 when every subject was analyzed, 1 when one failed (the
table still prints), 2 on a usage error.
`,
})

// Set in init: run refers to the flags, which refer to the command.
func init() { cmdBench.run = runBench }

var (
	benchAlgo     = cmdBench.flags.String("algo", "fasttrack", "analysis: hb, fasttrack, lockset, hybrid (dynamic) or vet (static)")
	benchJSON     = cmdBench.flags.Bool("json", false, "print the report as JSON instead of the table")
	benchOut      = cmdBench.flags.String("out", "", "also write the JSON report to `FILE`")
	benchSubjects = cmdBench.flags.String("subjects", "", "the subjects' root directory (default: bench/subjects of the module around the current directory)")
	benchKeep     = cmdBench.flags.String("keep-trace", "", "keep the dynamic analyses' traces and racekit test's log in this directory (its .rkt files are replaced)")
	benchVerbose  = cmdBench.flags.Bool("v", false, "show progress, racekit test's output, and per subject the missed ids and false findings")
	benchDedup    = cmdBench.flags.Bool("dedup", false, "dynamic analyses: let the runtime drop accesses repeated within an epoch (racekit test's default); races are then reported at the first access's site, which loses site pairs")
	benchVetFlags = cmdBench.flags.String("vet-flags", "", "extra racekit vet flags for -algo=vet, space-separated")
)

func runBench(c *command, args []string) int {
	root := *benchSubjects
	if root == "" {
		cwd, err := os.Getwd()
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		mod, err := harness.FindModule(cwd)
		if err != nil {
			c.errorf("%v (use -subjects)", err)
			return exitUsage
		}
		root = filepath.Join(mod, "bench", "subjects")
	}
	root, err := filepath.Abs(root)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	modDir, err := harness.FindModule(root)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	all, err := truth.LoadAll(root)
	if err != nil {
		c.errorf("ground truth: %v", err)
		return exitError
	}
	subjects := all
	if len(args) > 0 {
		byName := map[string]*truth.Subject{}
		var names []string
		for _, s := range all {
			byName[s.Name] = s
			names = append(names, s.Name)
		}
		sort.Strings(names)
		subjects = nil
		for _, a := range args {
			s, ok := byName[a]
			if !ok {
				c.errorf("no subject %q in %s (have: %s)", a, root, strings.Join(names, ", "))
				return exitUsage
			}
			subjects = append(subjects, s)
		}
	}
	if len(subjects) == 0 {
		c.errorf("no subjects in %s", root)
		return exitError
	}

	self, err := os.Executable()
	if err != nil {
		c.errorf("cannot find the racekit binary: %v", err)
		return exitError
	}
	var a harness.Analysis
	switch name := *benchAlgo; {
	case name == "vet":
		a = &harness.Vet{Racekit: self, ModDir: modDir, Flags: strings.Fields(*benchVetFlags)}
	case harness.Detectors[name] != nil:
		d := &harness.Dynamic{Algo: name, Racekit: self, ModDir: modDir, TraceDir: *benchKeep, Dedup: *benchDedup}
		if *benchVerbose {
			d.Log = os.Stderr
		}
		a = d
	default:
		c.errorf("unknown -algo %q (want hb, fasttrack, lockset, hybrid or vet)", name)
		return exitUsage
	}

	opts := harness.Options{}
	if *benchVerbose {
		opts.Progress = os.Stderr
	}
	rep, err := harness.Run(context.Background(), a, subjects, opts)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	rep.Command = "racekit bench " + strings.Join(os.Args[2:], " ")
	if *benchOut != "" {
		f, err := os.Create(*benchOut)
		if err == nil {
			err = rep.WriteJSON(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	if *benchJSON {
		err = rep.WriteJSON(os.Stdout)
	} else {
		err = rep.WriteText(os.Stdout, *benchVerbose)
	}
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if rep.Total.FailedCount > 0 {
		return exitError
	}
	return exitOK
}
