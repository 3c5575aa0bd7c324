package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/instrument"
)

var cmdConformance = register(&command{
	name:      "conformance",
	usageLine: "conformance [-algo=fasttrack] [-race=true] [-blocking] [-run REGEXP] [-j N] [-v]",
	short:     "run racekit over the Go race detector's own regression tests",
	long: `
Conformance measures racekit against a suite nobody here wrote: the Go race
detector's regression tests in $GOROOT/src/runtime/race/testdata (TestRace*
functions have a race, TestNoRace* functions have none; "Failing" in a name
marks a case Go's own detector gets wrong). It copies the suite into a
temporary module, builds it once instrumented by racekit and, with -race,
once with go test -race, runs every test alone in each binary (GOMAXPROCS=1,
as Go's own harness does), and prints per test whether a race was reported:

	TestRaceIntRWGlobalFuncs    race    go:race  racekit:race  ok
	TestNoRaceOnce              norace  go:-     racekit:race  FALSE RACE

then the share of TestRace* tests racekit detects, the TestNoRace* tests it
wrongly reports, and each miss. With -blocking, each trace is also given
to the deadlock and leak detectors (racekit test --deadlocks --leaks):
the suite has no deadlock, and the tests that leave a goroutine blocked
forever (TestNoRaceSelect4) are listed apart: every other test they
report is a false alarm. Files that need GOROOT-internal packages or cgo
are left out and named.

Exit status: 0 when the suite ran (whatever it found), 1 on an error.
`,
	run: runConformance,
})

var (
	confAlgo, confRun *string
	confRace, confV   *bool
	confBlocking      *bool
	confJobs          *int
)

func init() {
	fs := cmdConformance.flags
	confAlgo = fs.String("algo", "fasttrack", "detectors to run on each trace: "+algoNames())
	confRace = fs.Bool("race", true, "also run the tests under go test -race, for comparison")
	confRun = fs.String("run", "", "only tests whose name matches this regular expression")
	confJobs = fs.Int("j", 2, "tests run in parallel")
	confV = fs.Bool("v", false, "print each test's racekit report")
	confBlocking = fs.Bool("blocking", false, "also run the deadlock and leak detectors on each trace, and list the tests they report")
}

// conformanceExcluded are the suite's files racekit leaves out, and why.
var conformanceExcluded = map[string]string{
	"cgo_test.go":      "needs cgo and internal/testenv",
	"cgo_test_main.go": "a cgo program run by cgo_test.go",
	"synctest_test.go": "needs internal/synctest",
}

var testFuncRE = regexp.MustCompile(`(?m)^func (Test\w+)\(`)

type confCase struct {
	name            string
	wantRace        bool
	failing         bool // Go's own detector is known to get it wrong
	goRace, rkRace  bool
	rkErr           string
	rkBlocking      int // potential deadlocks and leaks reported (-blocking)
	rkReport        string
	goRan, rkRanned bool // the binaries ran
	skipped         bool // the test skips itself
}

func runConformance(c *command, args []string) int {
	if len(args) != 0 {
		c.errorf("unexpected arguments %q", args)
		return exitUsage
	}
	algos := splitList(*confAlgo)
	for _, a := range algos {
		if _, ok := algorithms[a]; !ok {
			c.errorf("unknown -algo %q (want %s)", a, algoNames())
			return exitUsage
		}
	}
	if *confBlocking {
		algos = append(algos, analyze.DeadlockAlgo, analyze.LeakAlgo)
	}
	var filter *regexp.Regexp
	if *confRun != "" {
		re, err := regexp.Compile(*confRun)
		if err != nil {
			c.errorf("-run: %v", err)
			return exitUsage
		}
		filter = re
	}
	src := filepath.Join(runtime.GOROOT(), "src", "runtime", "race", "testdata")
	dir, err := os.MkdirTemp("", "racekit-conformance-")
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	defer os.RemoveAll(dir)

	// The suite, as a module of its own.
	files, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil || len(files) == 0 {
		c.errorf("no tests in %s (%v)", src, err)
		return exitError
	}
	var cases []*confCase
	for _, f := range files {
		base := filepath.Base(f)
		if why, ok := conformanceExcluded[base]; ok {
			fmt.Printf("left out %s: %s\n", base, why)
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		// runtime.RaceDisable exists only in -race builds; in racekit's
		// build it has nothing to disable.
		data = bytes.ReplaceAll(data, []byte("runtime.RaceDisable()"), []byte("func() {}()"))
		if err := os.WriteFile(filepath.Join(dir, base), data, 0o666); err != nil {
			c.errorf("%v", err)
			return exitError
		}
		for _, m := range testFuncRE.FindAllSubmatch(data, -1) {
			name := string(m[1])
			if filter != nil && !filter.MatchString(name) {
				continue
			}
			cases = append(cases, &confCase{
				name:     name,
				wantRace: strings.HasPrefix(name, "TestRace"),
				failing:  strings.Contains(name, "Failing"),
			})
		}
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].name < cases[j].name })
	goVersion := strings.TrimPrefix(runtime.Version(), "go")
	if i := strings.IndexAny(goVersion, " -"); i >= 0 {
		goVersion = goVersion[:i]
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module racetest\n\ngo "+goVersion+"\n"), 0o666); err != nil {
		c.errorf("%v", err)
		return exitError
	}

	// Build both test binaries.
	start := time.Now()
	prep, err := instrument.Prepare(instrument.Config{Dir: dir, Patterns: []string{"."}, Tests: true, Log: os.Stderr})
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	rkBin := filepath.Join(dir, "racekit.test")
	build := goCommand(prep, "test", "-c", "-o", rkBin, ".")
	build.Dir, build.Stdin = dir, nil
	if err := build.Run(); err != nil {
		c.errorf("building the instrumented suite: %v", err)
		return exitError
	}
	raceBin := filepath.Join(dir, "race.test")
	if *confRace {
		b := exec.Command("go", "test", "-race", "-c", "-o", raceBin, ".")
		b.Dir, b.Stdout, b.Stderr = dir, os.Stdout, os.Stderr
		b.Env = append(os.Environ(), "GOWORK=off")
		if err := b.Run(); err != nil {
			c.errorf("building the suite with -race: %v", err)
			return exitError
		}
	}
	fmt.Printf("built in %v; running %d tests\n", time.Since(start).Round(time.Millisecond), len(cases))

	// Run every test alone in each binary.
	work := make(chan *confCase)
	var wg sync.WaitGroup
	for i := 0; i < max(1, *confJobs); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				runConfCase(k, dir, rkBin, raceBin, algos)
			}
		}()
	}
	for _, k := range cases {
		work <- k
	}
	close(work)
	wg.Wait()

	printConformance(cases)
	return exitOK
}

// runConfCase runs one test in the racekit binary (and the -race one).
func runConfCase(k *confCase, dir, rkBin, raceBin string, algos []string) {
	run := "-test.run=^" + k.name + "$"
	tr := filepath.Join(dir, k.name+".rkt")
	out, err := runLimited(rkBin, dir, []string{run, "-test.v"}, "GOMAXPROCS=1", "RACEKIT_TRACE="+tr)
	k.rkRanned = true
	k.skipped = bytes.Contains(out, []byte("--- SKIP"))
	if _, serr := os.Stat(tr); serr != nil {
		k.rkErr = fmt.Sprintf("no trace (%v): %s", err, lastLine(out))
	} else {
		// Races of the package's initialization (the suite has one) are
		// not the test's: count from the test function's entry, as Go's
		// harness counts from the test's "=== RUN" line.
		a, aerr := analyze.Trace(tr, analyzeOptions(algos, "racetest_test."+k.name, nil))
		switch {
		case aerr != nil:
			k.rkErr = aerr.Error()
		default:
			k.rkRace = a.Races > 0
			k.rkBlocking = len(a.Cycles) + len(a.Leaks)
			if *confV && a.Races > 0 {
				var b bytes.Buffer
				_ = a.Print(&b)
				k.rkReport = b.String()
			}
		}
		os.Remove(tr)
	}
	if err != nil && k.rkErr == "" && !strings.Contains(string(out), "--- FAIL") && !strings.Contains(string(out), "PASS") {
		k.rkErr = fmt.Sprintf("%v: %s", err, lastLine(out))
	}
	if *confRace {
		out, _ := runLimited(raceBin, dir, []string{run, "-test.v"}, "GOMAXPROCS=1", "GORACE=suppress_equal_stacks=0 suppress_equal_addresses=0")
		k.goRan = true
		if i := bytes.Index(out, []byte("=== RUN")); i >= 0 {
			out = out[i:]
		}
		k.goRace = bytes.Contains(out, []byte("DATA RACE")) || bytes.Contains(out, []byte("fatal error: concurrent map"))
		k.skipped = k.skipped || bytes.Contains(out, []byte("--- SKIP"))
	}
}

func runLimited(bin, dir string, args []string, env ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

func yesNo(ran, race bool) string {
	switch {
	case !ran:
		return "?"
	case race:
		return "race"
	}
	return "-"
}

func printConformance(cases []*confCase) {
	var racePos, raceAll, goRacePos, falseRaces, noRaceAll int
	var misses, falses []string
	for _, k := range cases {
		want := "norace"
		if k.wantRace {
			want = "race"
		}
		verdict := "ok"
		switch {
		case k.skipped:
			verdict = "SKIPPED (the test skips itself)"
		case k.rkErr != "":
			verdict = "ERROR " + k.rkErr
		case k.wantRace && !k.rkRace:
			verdict = "MISSED"
		case !k.wantRace && k.rkRace:
			verdict = "FALSE RACE"
		}
		if k.failing && verdict != "ok" {
			verdict += " (Failing: Go's detector also expected wrong)"
		}
		goCol := ""
		if k.goRan {
			goCol = "go:" + yesNo(true, k.goRace)
		}
		fmt.Printf("%-44s %-7s %-8s racekit:%-5s %s\n", k.name, want, goCol, yesNo(k.rkErr == "", k.rkRace), verdict)
		if k.rkReport != "" {
			fmt.Print(k.rkReport)
		}
		if k.skipped {
			continue
		}
		if strings.HasPrefix(k.name, "TestRace") {
			raceAll++
			if k.rkRace {
				racePos++
			} else {
				misses = append(misses, k.name)
			}
			if k.goRace {
				goRacePos++
			}
		} else if strings.HasPrefix(k.name, "TestNoRace") {
			noRaceAll++
			if k.rkRace {
				falseRaces++
				falses = append(falses, k.name)
			}
		}
	}
	fmt.Printf("\nTestRace*:   racekit reports %d of %d (%.1f%%)", racePos, raceAll, pct(racePos, raceAll))
	if goRacePos > 0 {
		fmt.Printf("; go test -race reports %d", goRacePos)
	}
	fmt.Printf("\nTestNoRace*: racekit reports a race in %d of %d\n", falseRaces, noRaceAll)
	if len(misses) > 0 {
		fmt.Printf("missed: %s\n", strings.Join(misses, " "))
	}
	if len(falses) > 0 {
		fmt.Printf("false races: %s\n", strings.Join(falses, " "))
	}
	if *confBlocking {
		printBlocking(os.Stdout, cases)
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
