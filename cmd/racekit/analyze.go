package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/alloc"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/report"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

var cmdAnalyze = register(&command{
	name:      "analyze",
	usageLine: "analyze [-algo=fasttrack] [-filter=tree] [-sample=NAME [-seed=N]] [-format=text|json] [-progress=auto|on|off] [-cpuprofile FILE] [-memprofile FILE] [-v] FILE",
	short:     "run race detectors over a recorded trace",
	long: `
Analyze reads a trace (binary .rkt, RAPID STD, or racekit text; the format is
sniffed from the content, and a .std name selects strict STD) and runs one or
more detectors over it in a single pass. Races are printed like Go's race
detector does, one block per distinct site pair, then a summary per detector.

-algo takes a comma-separated list:
` + algoDocs() + `
	none       decode only (to measure the reader)

-filter=tree puts TREE (package filter/tree) in front of the detectors: it
drops accesses that cannot add a race the chosen detector would report (for
fasttrack, none of its first races per address; for hb, hybrid and lockset,
none of their site pairs), never synchronization.

-sample=NAME puts one of LiteRace's samplers (tl-ad, tl-fx, g-ad, g-fx,
rnd10, rnd25, ucp; or racekit's gs-ad, tl-ad counted per go statement, or
tp-ad, tl-ad counted per slot of a goroutine pool, where a goroutine takes
the counters of one that ended before it started; see package
filter/sample) in front of the detectors: it
keeps every synchronization event and the memory accesses of the function
invocations it samples, so the detectors report a subset of the races of the
full trace, never a false one. With -v the sampler's effective sampling rate
is printed.

With -v, analyze prints to stderr the events read, the wall time, events per
second and the peak resident memory of the process, and each detector's
counters. When stderr is a terminal, progress is shown while it runs.
An analysis whose clocks and shadow memory pass 40% of the machine's
memory (RACEKIT_ANALYSIS_MEM=8G sets the limit) stops there, says so in a
warning and reports the races of the events it read.

Exit status: 0 no race, 66 races found, 1 bad input, 2 usage (see 'racekit help exit').
`,
})

// Set in init: run refers to the flags, which refer to the command.
func init() { cmdAnalyze.run = runAnalyze }

func algoDocs() string {
	var b strings.Builder
	var ns []string
	for n := range algorithms {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	for _, n := range ns {
		fmt.Fprintf(&b, "\t%-10s %s\n", n, algorithms[n].doc)
	}
	return b.String()
}

var (
	analyzeAlgo     = cmdAnalyze.flags.String("algo", "fasttrack", "detectors to run, comma-separated: "+algoNames()+", none")
	analyzeFormat   = cmdAnalyze.flags.String("format", "text", "report format: text or json")
	analyzeVerbose  = cmdAnalyze.flags.Bool("v", false, "print throughput, peak memory and detector counters to stderr")
	analyzeProgress = cmdAnalyze.flags.String("progress", "auto", "progress on stderr: auto (when a terminal), on, off")
	analyzeCPUProf  = cmdAnalyze.flags.String("cpuprofile", "", "write a CPU profile of the analysis to this file")
	analyzeMemProf  = cmdAnalyze.flags.String("memprofile", "", "write a heap profile of the analysis, as it ends, to this file")
	analyzeFilters  = addFilterFlags(cmdAnalyze)
)

func runAnalyze(c *command, args []string) int {
	if len(args) != 1 {
		c.errorf("expected exactly one trace file, got %d arguments", len(args))
		return exitUsage
	}
	if err := analyzeFilters.check(); err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	if *analyzeFormat != "text" && *analyzeFormat != "json" {
		c.errorf("unknown -format %q (want text or json)", *analyzeFormat)
		return exitUsage
	}
	type run struct {
		name string
		det  detect.Detector
		col  *finding.Collector
	}
	var runs []run
	var algos []string
	for _, name := range strings.Split(*analyzeAlgo, ",") {
		name = strings.TrimSpace(name)
		if name == "none" || name == "" {
			continue
		}
		a, ok := algorithms[name]
		if !ok {
			c.errorf("unknown -algo %q (want %s, none)", name, algoNames())
			return exitUsage
		}
		col := finding.NewCollector()
		runs = append(runs, run{name, a.make(col), col})
		algos = append(algos, name)
	}

	f, err := tracefile.Open(args[0])
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	defer f.Close()

	dets := make([]detect.Detector, len(runs))
	for i, r := range runs {
		dets[i] = r.det
	}
	if *analyzeCPUProf != "" {
		pf, err := os.Create(*analyzeCPUProf)
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	prog := newEventCounter(*analyzeProgress, "analyze")
	start := time.Now()
	src, filters, err := analyzeFilters.wrap(f, algos)
	if err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	// The allocations, for the races' heap blocks, where the detectors see
	// every event (a filter may drop some).
	var allocs *alloc.Log
	if len(filters.readers) == 0 {
		allocs = &alloc.Log{}
		dets = append(dets, allocs)
	}
	n, stop, err := analyze.RunGuarded(src, 0, prog.update, dets...)
	if *analyzeCPUProf != "" {
		pprof.StopCPUProfile()
	}
	if *analyzeMemProf != "" {
		// The detectors' state is still live here: what the analysis held.
		if perr := writeHeapProfile(*analyzeMemProf); perr != nil {
			c.errorf("%v", perr)
		}
	}
	elapsed := time.Since(start)
	prog.done()
	printWarnings(c, f.Reader)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if w := stop.ForgetWarning(); w != "" {
		c.errorf("warning: %s", w)
	}
	if stop.Stopped {
		c.errorf("warning: %s", stop.Warning(n, 0))
	}

	results := make([]report.Result, len(runs))
	races := 0
	for i, r := range runs {
		results[i] = report.Result{Detector: r.name, Groups: r.col.Groups()}
		races += r.col.Len()
	}
	if races > 0 && (args[0] != "-" || allocs.Complete()) {
		if err := report.LocateHeap(args[0], allocs, f.Meta(), results); err != nil {
			c.errorf("heap blocks of the raced addresses: %v", err)
		}
	}
	if *analyzeFormat == "json" {
		rep := report.BuildJSON(f.Name, n, f.Meta(), results)
		if *analyzeVerbose {
			rep.Stats = map[string]int64{}
			for _, r := range runs {
				if s, ok := r.det.(detect.Stats); ok {
					for k, v := range s.Stats() {
						rep.Stats[r.name+"."+k] = v
					}
				}
			}
		}
		err = report.JSON(os.Stdout, rep)
	} else {
		err = report.Text(os.Stdout, f.Meta(), results)
	}
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if *analyzeVerbose {
		read := n // events read from the trace, before any filter
		if len(filters.readers) > 0 {
			read = filters.readers[0].Kept() + filters.readers[0].Dropped()
		}
		fmt.Fprintf(os.Stderr, "racekit analyze: %s (%s): %d events in %v: %.2fM events/s, peak RSS %s\n",
			f.Name, f.Format, read, elapsed.Round(time.Millisecond), float64(read)/elapsed.Seconds()/1e6, peakRSS())
		filters.report(os.Stderr, "analyze")
		for _, r := range runs {
			if s, ok := r.det.(detect.Stats); ok {
				fmt.Fprintf(os.Stderr, "  %s: %s\n", r.name, formatStats(s.Stats()))
			}
		}
	}
	if races > 0 {
		return exitRaces
	}
	return exitOK
}

func printWarnings(c *command, r trace.Reader) {
	if w, ok := r.(trace.Warner); ok {
		for _, msg := range w.Warnings() {
			c.warn(msg)
		}
	}
}

// warn prints a warning of the command on stderr.
func (c *command) warn(msg string) {
	fmt.Fprintf(os.Stderr, "racekit %s: warning: %s\n", c.name, msg)
}

func formatStats(m map[string]int64) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	for i, k := range ks {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%d", k, m[k])
	}
	return b.String()
}

// writeHeapProfile writes the heap profile of the live objects to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC() // the profile is as of the last collection: without one, the allocations since were left out
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
