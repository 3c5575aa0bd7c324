// Command overhead reproduces LiteRace's Table 5 and Figure 6 (Marino et
// al., PLDI'09, §5.4) for racekit: the run time of each subject program
// uninstrumented (the baseline), built with -race, and instrumented in
// racekit's configurations, each adding one part of the cost:
//
//	off       instrumented, not tracing (every hook returns at once)
//	dispatch  tl-ad's dispatch check at every function entry and exit,
//	          nothing traced (RACEKIT_SAMPLE_MODE=dispatch)
//	+sync     the check, and every event but the memory accesses
//	          (synchronization, goroutines, allocation, and the frames
//	          that hold one; RACEKIT_SAMPLE_MODE=sync)
//	+tl-ad    the check, and the accesses tl-ad samples (LiteRace)
//	+tl-ad loops
//	          the same with loop regions (RACEKIT_SAMPLE_LOOPS=1,
//	          rt/loop.go: each execution of a loop backs off as a
//	          function does; LiteRace's proposed loop granularity)
//	+gs-ad    the same with gs-ad, racekit's adaptation (counters per go
//	          statement and function; not the paper's, see filter/sample)
//	+tp-ad loops
//	          +tl-ad loops with tp-ad, racekit's adaptation (counters per
//	          slot of a goroutine pool: a goroutine runs on those of one
//	          that ended before it started; see filter/sample)
//	full      every event (dedup on, as racekit test records for its
//	          default detectors: no BarrierPairs, RACEKIT_BARRIERS=0, and
//	          an epoch of dedup ended by releases only,
//	          RACEKIT_DEDUP=release)
//	full, dedup per sync
//	          the same with an epoch ended by every synchronization
//	          event (RACEKIT_DEDUP=1, before session 73)
//	full, barriers
//	          the same with BarrierPairs around calls into untraced
//	          code, as recorded for rdit (-predict) or a kept trace
//	full, 2048 dedup
//	          the same with each goroutine's dedup table kept at 2,048
//	          entries, its size before session 33 (rt/access.go)
//	full, word events
//	          the same with accesses wider than a word recorded one
//	          event per word, at most 256 (RACEKIT_RANGES=0), as before
//	          range events (session 37)
//	full, no alloc hook
//	          the same, built without the Go runtime's allocation hook
//	          (instrument.Config.NoAllocHook): what the hook costs
//	tree      every event through TREE in the writer (RACEKIT_FILTER=tree)
//
// with the trace each traced configuration writes, in MB per second of
// run time. Times are wall-clock, the best of -n runs, taken in rounds
// (each round runs every variant once), with the page cache synced before
// each run.
//
//	go run ./bench/overhead -n 5 -out bench/results/overhead
//
// -before DIR adds an earlier racekit to the same rounds: DIR holds the
// instrumented binaries (SUBJECT.rk) that an earlier checkout's
// `go run ./bench/overhead -keep DIR` built, run in the configurations
// of beforeConfigs beside this checkout's. A before/after comparison of
// separate runs moved with the machine (bench/results/overhead/
// session42-before-after.md: -race itself 17x then 23x on raytracer).
//
// The subjects are e2e/testdata/subjects (cpu, syncheavy, io) and
// bench/overhead/subjects: two synchronization-heavy micro-benchmarks
// (lockcounter, pingpong; LiteRace's LKRHash and LFList played this role)
// three Java Grande kernels of bench/subjects at larger sizes, and
// httpsvc's load generator (an HTTP service and its clients over
// loopback: the server workload, as Apache was LiteRace's).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/racekit/racekit/instrument"
)

type subject struct {
	name  string
	dir   string // the module directory, from the repository root
	pkg   string // the package, relative to dir
	micro bool
}

var subjects = []subject{
	{"empty", "e2e/testdata/subjects", "./empty", false}, // start-up cost
	{"cpu", "e2e/testdata/subjects", "./cpu", false},
	{"syncheavy", "e2e/testdata/subjects", "./syncheavy", false},
	{"io", "e2e/testdata/subjects", "./io", false},
	{"sor", ".", "./bench/overhead/subjects/sor", false},
	{"montecarlo", ".", "./bench/overhead/subjects/montecarlo", false},
	{"raytracer", ".", "./bench/overhead/subjects/raytracer", false},
	{"httpsvc", ".", "./bench/overhead/subjects/httpsvc", false},
	{"lockcounter", ".", "./bench/overhead/subjects/lockcounter", true},
	{"pingpong", ".", "./bench/overhead/subjects/pingpong", true},
}

// A config is one way of running the instrumented binary.
type config struct {
	name   string
	env    []string
	trace  bool
	noHook bool // the binary built without the runtime's allocation hook (instrument.Config.NoAllocHook)
}

// noBarriers and dedupRelease: the full configurations record as racekit
// test and run do for their default detectors, without BarrierPairs
// (rdit's alone) and with dedup's epochs ended by releases only
// (FastTrack's: see recordEnvFor in cmd/racekit); "full, barriers" records
// as for rdit or a kept trace.
const (
	noBarriers   = "RACEKIT_BARRIERS=0"
	dedupRelease = "RACEKIT_DEDUP=release"
)

var configs = []config{
	{"off", nil, false, false},
	{"dispatch", []string{"RACEKIT_SAMPLE=tl-ad", "RACEKIT_SAMPLE_MODE=dispatch"}, false, false},
	{"+sync", []string{"RACEKIT_SAMPLE=tl-ad", "RACEKIT_SAMPLE_MODE=sync"}, true, false},
	{"+tl-ad", []string{"RACEKIT_SAMPLE=tl-ad"}, true, false},
	{"+tl-ad loops", []string{"RACEKIT_SAMPLE=tl-ad", "RACEKIT_SAMPLE_LOOPS=1"}, true, false},
	{"+gs-ad", []string{"RACEKIT_SAMPLE=gs-ad"}, true, false},
	{"+tp-ad loops", []string{"RACEKIT_SAMPLE=tp-ad", "RACEKIT_SAMPLE_LOOPS=1"}, true, false},
	{"full", []string{noBarriers, dedupRelease}, true, false},
	{"full, dedup per sync", []string{noBarriers}, true, false},
	{"full, barriers", nil, true, false},
	{"full, 2048 dedup", []string{noBarriers, dedupRelease, "RACEKIT_DEDUP_MAX=2048"}, true, false},
	{"full, word events", []string{noBarriers, dedupRelease, "RACEKIT_RANGES=0"}, true, false},
	{"full, no alloc hook", []string{noBarriers, dedupRelease}, true, true},
	{"tree", []string{noBarriers, dedupRelease, "RACEKIT_FILTER=tree", "RACEKIT_FILTER_FOR=fasttrack"}, true, false},
}

func main() {
	n := flag.Int("n", 3, "runs per configuration (the best is kept)")
	out := flag.String("out", "", "write table.md into this directory (default: stdout only)")
	only := flag.String("only", "", "comma-separated subjects to run (default all)")
	keep := flag.String("keep", "", "build the binaries in this directory and keep them (SUBJECT.plain, .race, .rk: for a profiler)")
	before := flag.String("before", "", "a directory of SUBJECT.rk binaries an earlier checkout's -keep built: run them in the same rounds (the before/after table)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("overhead: ")
	tmp := *keep
	if tmp == "" {
		var err error
		if tmp, err = os.MkdirTemp("", "racekit-overhead-"); err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(tmp)
	} else {
		var err error
		if tmp, err = filepath.Abs(tmp); err == nil {
			err = os.MkdirAll(tmp, 0o777)
		}
		if err != nil {
			log.Fatal(err)
		}
	}

	var rows []row
	for _, s := range subjects {
		if *only != "" && !strings.Contains(","+*only+",", ","+s.name+",") {
			continue
		}
		r, err := measure(s, tmp, *before, *n)
		if err != nil {
			log.Fatalf("%s: %v", s.name, err)
		}
		rows = append(rows, r)
		fmt.Fprintln(os.Stderr, r.line())
	}
	var b strings.Builder
	table(&b, rows, *n)
	fmt.Print(b.String())
	if *out != "" {
		if err := os.MkdirAll(*out, 0o777); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(*out, "table.md"), []byte(b.String()), 0o666); err != nil {
			log.Fatal(err)
		}
	}
}

type row struct {
	s     subject
	plain time.Duration
	race  time.Duration
	times []time.Duration // per config
	// The medians of the n runs: baseline, -race, then per config.
	medPlain, medRace time.Duration
	medTimes          []time.Duration
	mbps              []float64 // per config (traced ones)
	// The -before binary's best and median times, per beforeConfigs
	// (nil: no -before, or no binary of this subject there).
	before, medBefore []time.Duration
	events            []int64 // trace bytes of the best run, per config
}

func (r row) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s plain %v race %v", r.s.name, r.plain.Round(time.Millisecond), r.race.Round(time.Millisecond))
	for i, c := range configs {
		fmt.Fprintf(&b, " %s %v", c.name, r.times[i].Round(time.Millisecond))
	}
	return b.String()
}

// beforeConfigs are the configurations a -before binary runs in: "full,
// barriers" is what racekit test recorded before it left BarrierPairs to
// rdit.
var beforeConfigs = []string{"+tl-ad loops", "full", "full, barriers"}

// measure builds the subject three ways and times each configuration,
// and those of beforeConfigs with the binary in beforeDir if it has one.
func measure(s subject, tmp, beforeDir string, n int) (row, error) {
	r := row{s: s}
	root, err := repoRoot()
	if err != nil {
		return r, err
	}
	dir := filepath.Join(root, s.dir)
	bin := func(kind string) string { return filepath.Join(tmp, s.name+"."+kind) }
	build := func(kind string, env []string, args ...string) error {
		cmd := exec.Command("go", append(append([]string{"build"}, args...), "-o", bin(kind), s.pkg)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		if o, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", kind, err, o)
		}
		return nil
	}
	if err := build("plain", []string{"GOWORK=off"}); err != nil {
		return r, err
	}
	if err := build("race", []string{"GOWORK=off"}, "-race"); err != nil {
		return r, err
	}
	prep, err := instrument.Prepare(instrument.Config{Dir: dir, Patterns: []string{s.pkg}})
	if err != nil {
		return r, err
	}
	if err := build("rk", prep.Env, prep.BuildArgs()...); err != nil {
		return r, err
	}
	prep, err = instrument.Prepare(instrument.Config{Dir: dir, Patterns: []string{s.pkg}, NoAllocHook: true})
	if err != nil {
		return r, err
	}
	if err := build("rknohook", prep.Env, prep.BuildArgs()...); err != nil {
		return r, err
	}
	// The runs go round: each of the n rounds runs the baseline, -race and
	// every configuration once, so that a machine that slows down or
	// speeds up during the subject's measurement (shared CPUs) weighs on
	// all of them alike; each keeps its best time.
	type variant struct {
		bin   string
		env   []string
		trace string
		best  time.Duration
		size  int64 // trace bytes of the best run
		all   []time.Duration
	}
	tracePath := filepath.Join(tmp, "trace.rkt")
	vs := []*variant{
		{bin: bin("plain")},
		// Without GORACE's default atexit_sleep_ms=1000, every -race run
		// would take a second more than its work (the empty program: 1 s);
		// racekit's runtime waits as -race does (rt/exit.go), so its runs
		// get the same option.
		{bin: bin("race"), env: []string{exitWaitOff}},
	}
	for _, c := range configs {
		v := &variant{bin: bin("rk"), env: append([]string{exitWaitOff}, c.env...)}
		if c.noHook {
			v.bin = bin("rknohook")
		}
		if c.trace {
			v.trace = tracePath
		}
		vs = append(vs, v)
	}
	nNow := len(vs)
	if beforeDir != "" {
		old := filepath.Join(beforeDir, s.name+".rk")
		if _, err := os.Stat(old); err == nil {
			for _, name := range beforeConfigs {
				c := configs[index(name)]
				// The same GORACE as this checkout's runs: a before
				// binary that waits atexit_sleep_ms (rt/exit.go) would
				// add a second to each of its runs.
				v := &variant{bin: old, env: append([]string{exitWaitOff}, c.env...)}
				if c.trace {
					v.trace = tracePath
				}
				vs = append(vs, v)
			}
		}
	}
	for i := 0; i < n; i++ {
		for j, v := range vs {
			d, size, err := runOnce(v.bin, v.env, v.trace)
			if err != nil {
				switch {
				case j >= nNow:
					err = fmt.Errorf("%s (before): %v", beforeConfigs[j-nNow], err)
				case j >= 2:
					err = fmt.Errorf("%s: %v", configs[j-2].name, err)
				}
				return r, err
			}
			if i == 0 || d < v.best {
				v.best, v.size = d, size
			}
			v.all = append(v.all, d)
		}
	}
	os.Remove(tracePath)
	r.plain, r.race = vs[0].best, vs[1].best
	r.medPlain, r.medRace = median(vs[0].all), median(vs[1].all)
	for j, c := range configs {
		v := vs[j+2]
		r.times = append(r.times, v.best)
		r.medTimes = append(r.medTimes, median(v.all))
		r.events = append(r.events, v.size)
		mb := 0.0
		if c.trace {
			mb = float64(v.size) / 1e6 / v.best.Seconds()
		}
		r.mbps = append(r.mbps, mb)
	}
	for _, v := range vs[nNow:] {
		r.before = append(r.before, v.best)
		r.medBefore = append(r.medBefore, median(v.all))
	}
	return r, nil
}

// exitWaitOff keeps a run from waiting at its exit as -race binaries do.
const exitWaitOff = "GORACE=atexit_sleep_ms=0"

// runOnce runs bin once and returns its wall time, with the size of its
// trace when tracePath is set. Exit status 66 (a race reported by -race)
// counts as success.
func runOnce(bin string, env []string, tracePath string) (time.Duration, int64, error) {
	cmd := exec.Command(bin)
	cmd.Env = os.Environ()
	if tracePath != "" {
		os.Remove(tracePath)
		cmd.Env = append(cmd.Env, "RACEKIT_TRACE="+tracePath)
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout = io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	flushDirty()
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 66 {
		err = nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %v\n%s", bin, err, stderr.String())
	}
	var size int64
	if tracePath != "" {
		st, err := os.Stat(tracePath)
		if err != nil {
			return 0, 0, fmt.Errorf("%s wrote no trace: %v", bin, err)
		}
		size = st.Size()
	}
	return d, size, nil
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/racekit/racekit").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m (run from racekit's module): %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// median is the median of ds (the mean of the middle two for an even count).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ratio(d, base time.Duration) string { return fmt.Sprintf("%.2fx", d.Seconds()/base.Seconds()) }

// table writes Table 5 in markdown: slowdowns over the baseline, and the
// log sizes in MB/s, with TL-Ad against -race; then the same of the runs'
// medians.
func table(w io.Writer, rows []row, n int) {
	iTL, iGS, iFull, iLoops, iTP := index("+tl-ad"), index("+gs-ad"), index("full"), index("+tl-ad loops"), index("+tp-ad loops")
	vsRace := func(times []time.Duration, race time.Duration) []string {
		var v []string
		for _, i := range []int{iTL, iLoops, iTP} {
			v = append(v, fmt.Sprintf("%.2f", times[i].Seconds()/race.Seconds()))
		}
		return v
	}
	raceCols := []string{"+tl-ad / -race", "+tl-ad loops / -race", "+tp-ad loops / -race"}

	fmt.Fprintf(w, "Slowdown over the uninstrumented binary (best of %d wall-clock runs, taken in rounds; %s/%s, GOMAXPROCS=%d).\n\n", n, runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	slowdowns(w, rows, append([]string{"+tl-ad MB/s", "+gs-ad MB/s", "full MB/s"}, raceCols...),
		func(r row) (time.Duration, time.Duration, []time.Duration) { return r.plain, r.race, r.times },
		func(r row) []string {
			mb := []string{fmt.Sprintf("%.1f", r.mbps[iTL]), fmt.Sprintf("%.1f", r.mbps[iGS]), fmt.Sprintf("%.1f", r.mbps[iFull])}
			return append(mb, vsRace(r.times, r.race)...)
		})

	// The best run flatters a configuration whose time varies more than
	// the baseline's; the medians of the same runs show how typical it is.
	fmt.Fprintf(w, "\nThe same runs' medians: the median run of each configuration over the median baseline run (of %d).\n\n", n)
	slowdowns(w, rows, raceCols,
		func(r row) (time.Duration, time.Duration, []time.Duration) { return r.medPlain, r.medRace, r.medTimes },
		func(r row) []string { return vsRace(r.medTimes, r.medRace) })
	beforeAfter(w, rows)
}

// beforeAfter writes the before/after table of the subjects measured
// with -before: each of beforeConfigs's slowdown before and after, and
// after's time over before's, of the best runs and of the medians.
func beforeAfter(w io.Writer, rows []row) {
	var with []row
	for _, r := range rows {
		if r.before != nil {
			with = append(with, r)
		}
	}
	if len(with) == 0 {
		return
	}
	fmt.Fprint(w, "\nBefore (-before's binaries) and after (this checkout's), in the same rounds: slowdown over the baseline, and after's time over before's (below 1: faster now), of the best runs / of the medians.\n\n| subject | baseline | -race |")
	for _, name := range beforeConfigs {
		fmt.Fprintf(w, " %s before | %s after | %s after/before |", name, name, name)
	}
	fmt.Fprint(w, "\n|---|---:|---:|")
	for range beforeConfigs {
		fmt.Fprint(w, "---:|---:|---:|")
	}
	fmt.Fprintln(w)
	for _, r := range with {
		fmt.Fprintf(w, "| %s | %.3fs | %s |", r.s.name, r.plain.Seconds(), ratio(r.race, r.plain))
		for k, name := range beforeConfigs {
			i := index(name)
			fmt.Fprintf(w, " %s | %s | %.2f / %.2f |", ratio(r.before[k], r.plain), ratio(r.times[i], r.plain),
				r.times[i].Seconds()/r.before[k].Seconds(), r.medTimes[i].Seconds()/r.medBefore[k].Seconds())
		}
		fmt.Fprintln(w)
	}
}

// slowdowns writes one table: per subject its baseline time, the slowdown
// of -race and of each configuration over it (times picks the best runs
// or the medians), then the extra columns.
func slowdowns(w io.Writer, rows []row, extra []string, times func(row) (plain, race time.Duration, cfg []time.Duration), extraVals func(row) []string) {
	fmt.Fprint(w, "| subject | baseline | -race |")
	for _, c := range configs {
		fmt.Fprintf(w, " %s |", c.name)
	}
	for _, e := range extra {
		fmt.Fprintf(w, " %s |", e)
	}
	fmt.Fprint(w, "\n|---|---:|---:|")
	for range len(configs) + len(extra) {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		name := r.s.name
		if r.s.micro {
			name += " (micro)"
		}
		plain, race, cfg := times(r)
		fmt.Fprintf(w, "| %s | %.3fs | %s |", name, plain.Seconds(), ratio(race, plain))
		for i := range configs {
			fmt.Fprintf(w, " %s |", ratio(cfg[i], plain))
		}
		for _, v := range extraVals(r) {
			fmt.Fprintf(w, " %s |", v)
		}
		fmt.Fprintln(w)
	}
}

func index(name string) int {
	for i, c := range configs {
		if c.name == name {
			return i
		}
	}
	panic(name)
}
