package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/racekit/racekit/progress"
	"github.com/racekit/racekit/static"
)

var cmdVet = register(&command{
	name:      "vet",
	usageLine: "vet [-json|-sarif] [-pairs FILE] [-filters LIST] [-stats] [-tests] [-callgraph=vta|cha] [-q] [packages]",
	short:     "find potential races statically (RELAY), like go vet",
	long: `
Vet analyzes Go packages without running them (RELAY, Voung, Jhala and
Lerner, FSE'07): each
function is summarized by the locks it acquires and may release and the
lvalues it accesses under which locks, relative to its entry; summaries are
composed bottom-up over the call graph and across packages; accesses from
goroutines that may run in parallel (go statements, their spawner's
continuation, net/http handlers) to may-aliased lvalues, one a write, with
no common lock, are warnings. Warnings are potential races: run
'racekit fuzz' on the -pairs output to confirm them.

Packages are go list patterns (default "."), including "std". Output is one
line per warning, file:line:col first, like go vet; -json and -sarif
(SARIF 2.1.0, both accesses as locations) are for tools.

Filters (section 4.3 of the paper, and Go's), applied in this order:
	thread-local  object allocated by the accessing thread
	large-reps    lvalues equal only by points-to class or type
	bootup        access in a package initializer's continuation
	same-entry    both accesses from one entry function (off by default)
	unpublished   fresh object accessed before it was published
	handoff       ordered by a channel handoff or WaitGroup.Wait

Vet reports its progress on standard error, with the time since the
start: a line when the analysis starts, one every few seconds while it
runs, and one when it is done (packages, lines, warnings); -q prints none.

Exit status: 0 no warning, 66 warnings, 1 load or type errors, 2 usage.
`,
})

// Set in init: run refers to the flags, which refer to the command.
func init() { cmdVet.run = runVet }

var (
	vetJSON      = cmdVet.flags.Bool("json", false, "print warnings and filter counts as JSON")
	vetSARIF     = cmdVet.flags.Bool("sarif", false, "print warnings as SARIF 2.1.0")
	vetPairs     = cmdVet.flags.String("pairs", "", "write candidate site pairs as JSON lines to FILE (for racekit fuzz)")
	vetFilters   = cmdVet.flags.String("filters", "default", "enabled filters: all, none, default, or a comma-separated list")
	vetStats     = cmdVet.flags.Bool("stats", false, "print counters to stderr: lines, functions, summaries, time, peak memory, warnings per filter")
	vetTests     = cmdVet.flags.Bool("tests", false, "also analyze test files")
	vetCallGraph = cmdVet.flags.String("callgraph", "vta", "dynamic call resolution: vta or cha")
	vetQuiet     = cmdVet.flags.Bool("q", false, "print no progress lines on stderr")
)

func runVet(c *command, args []string) int {
	if *vetJSON && *vetSARIF {
		c.errorf("-json and -sarif are exclusive")
		return exitUsage
	}
	filters, err := static.ParseFilters(*vetFilters)
	if err != nil {
		c.errorf("-filters: %v", err)
		return exitUsage
	}
	if *vetCallGraph != "vta" && *vetCallGraph != "cha" {
		c.errorf("unknown -callgraph %q (want vta or cha)", *vetCallGraph)
		return exitUsage
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	cfg := *static.DefaultConfig
	cfg.Filters = filters
	cfg.CallGraph = *vetCallGraph
	prog := progress.New("vet", *vetQuiet)
	prog.Printf("analyzing %s (loading, SSA, summaries bottom-up, warnings)", strings.Join(args, " "))
	stop := prog.Every(func() string { return "still analyzing" })
	rep, err := static.Run(args, static.Options{Config: &cfg, Tests: *vetTests})
	stop()
	if err == nil {
		prog.Printf("analyzed %d packages (dependencies included), %d lines: %d warnings, %d double locks", rep.Stats.Packages, rep.Stats.Lines, len(rep.Kept()), len(rep.DoubleLocks))
	}
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if len(rep.Errors) > 0 {
		for _, e := range rep.Errors {
			fmt.Fprintln(os.Stderr, e)
		}
		c.errorf("%d load errors; nothing analyzed", len(rep.Errors))
		return exitError
	}
	cwd, _ := os.Getwd()
	kept := rep.Kept()
	switch {
	case *vetJSON:
		err = static.WriteJSON(os.Stdout, rep, *vetStats)
	case *vetSARIF:
		err = static.WriteSARIF(os.Stdout, kept, rep.DoubleLocks, cwd)
	default:
		err = static.WriteText(os.Stdout, kept, cwd)
		if err == nil {
			err = static.WriteDoubleLocks(os.Stdout, rep.DoubleLocks, cwd)
		}
	}
	if err == nil && *vetPairs != "" {
		var f *os.File
		if f, err = os.Create(*vetPairs); err == nil {
			err = static.WritePairs(f, kept)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if *vetStats {
		printVetStats(rep)
	}
	if len(kept) > 0 || len(rep.DoubleLocks) > 0 {
		return exitRaces
	}
	return exitOK
}

func printVetStats(rep *static.Report) {
	s := rep.Stats
	secs := rep.Elapsed.Seconds()
	w := os.Stderr
	fmt.Fprintf(w, "racekit vet: %d packages, %d files, %d lines, %d functions, %d summaries (%d facts exported)\n",
		s.Packages, s.Files, s.Lines, s.Functions, s.Summaries, s.Facts)
	fmt.Fprintf(w, "  time %v, %.0f lines/s, peak RSS %s\n", rep.Elapsed.Round(time.Millisecond), float64(s.Lines)/secs, peakRSS())
	fmt.Fprintf(w, "  RELAY: 4.5M lines of C in 72 h on one machine = %.1f lines/s\n", 4.5e6/(72*3600))
	fmt.Fprintf(w, "  call graph: %d SCCs (%d recursive, %d did not converge), %d analyses; %d call sites, %d dynamic, %d unresolved, %d without summary\n",
		s.SCCs, s.RecursiveSCCs, s.Diverged, s.Iterations, s.CallSites, s.DynamicCalls, s.Unresolved, s.NoSummary)
	fmt.Fprintf(w, "  summaries: %d guarded accesses, %d widened, %d truncated\n", s.SummaryAccesses, s.Widened, s.Truncated)
	fmt.Fprintf(w, "  threads: %d go sites (%d unresolved), %d http handlers, %d threads, %d thread pairs\n",
		s.GoSites, s.UnresolvedGo, s.HTTPHandlers, s.Threads, s.ThreadPairs)
	var parts []string
	for _, n := range static.FilterNames {
		parts = append(parts, fmt.Sprintf("%s %d", n, s.Removed[n]))
	}
	fmt.Fprintf(w, "  warnings: %d before filters, removed: %s; %d after (%d in the named packages)\n",
		s.Candidates, strings.Join(parts, ", "), s.Reported, len(rep.Kept()))
}
