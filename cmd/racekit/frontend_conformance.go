package main

import (
	"os"
	"regexp"

	"github.com/racekit/racekit/conformance"
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

// runConformance is racekit conformance: its flags checked, the suite runs
// in package conformance and its table is printed.
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
	var filter *regexp.Regexp
	if *confRun != "" {
		re, err := regexp.Compile(*confRun)
		if err != nil {
			c.errorf("-run: %v", err)
			return exitUsage
		}
		filter = re
	}
	res, err := conformance.Run(conformance.Options{
		Algos: algos, New: analyzeOptions(algos, "", nil).New,
		Env:      recordEnvFor(algos), // as racekit test records for these detectors
		Blocking: *confBlocking, Race: *confRace, Filter: filter, Jobs: *confJobs, Verbose: *confV,
		Stdout: os.Stdout, Stderr: os.Stderr,
	})
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	conformance.Print(os.Stdout, res)
	return exitOK
}
