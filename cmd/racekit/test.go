package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/gotestline"
	"github.com/racekit/racekit/testout"
	"github.com/racekit/racekit/trace/tracefile"
)

var cmdTest = register(&command{
	name:      "test",
	usageLine: "test [-algo=fasttrack] [-predict] [-confirm [-budget D] [-confirm-runs N] [-confirm-record N] [-confirm-vet] [-confirm-json FILE] [-html DIR]] [-sarif FILE] [-deadlocks] [-leaks [-leaks-ignore F,...]] [-sample=NAME [-sample-loops]] [-filter=tree] [-schedule=random] [-seed N] [-keep-trace DIR] [-q] [-deps=false] [-include P] [-exclude P] [-tags T] [-stats] [go test flags] [packages] [go test flags] [-args test binary arguments...]",
	short:     "instrument and run Go tests, then report their data races",
	long: `
Test is racekit's go test -race: it takes go test's command line, with
racekit's own flags added (racekit test -run TestX -v ./p works as go test
does; see "Go test's flags" below). It instruments the packages that the
named packages and their tests import, the main module's and its
dependencies' (as go test -race does; not the standard library's, whose
effects come from tables; -deps=false: the main module's and those -include
names), runs go test -overlay -modfile on them (the user's files, go.mod and
go.sum are never modified), and analyzes the trace each test binary records
with -algo (fasttrack by default), while the binary runs (RACEKIT_TEST_FOLLOW=0:
after it exits) and, on Linux, below the tests' priority (nice 10), so that
tests that time themselves keep the CPU (RACEKIT_TEST_NICE=0: at theirs);
when the analyses' clocks pass 40% of the machine's memory
(RACEKIT_ANALYSIS_MEM=8G sets the limit), the largest stops there and says so
in a warning. go test's output is passed through unchanged as it comes,
except each package's closing lines, held back until its test binary's trace
is analyzed: a package with races closes as under go test -race, with each
racy test's reports (both accesses' stacks, the goroutines' creation stacks)
and its failure, then the package's FAIL line:

	--- FAIL: TestX (racekit: 1 data race)
	    racekit: race detected during execution of test
	FAIL
	FAIL	example.com/m/p	0.012s (racekit: 1 data race(s))

With -v the test's own "--- PASS" line has gone by already (go test
streams it); with -json the reports are output events of the test,
followed by a fail event, and the package's events say fail. As -race,
a race is left out when its previous access was made on the address
(its 8 bytes) before a race reported there, which Go's race detector
forgets at each report, or when one of its accesses copies a struct or
an array there (unchecked after a report), or when it has both stacks of
one reported before in the binary (GORACE=suppress_equal_stacks=0 keeps
these).
-stats prints racekit's own counters to standard error:
what it instrumented (and what not, and why) and, per test binary, the
events recorded, the analysis time, and the goroutines and the width of
the detectors' vector clocks (the IDs of goroutines that ended are
reused: a million goroutines may need a few thousand).

-sample=NAME samples while recording: at each function entry LiteRace's
dispatch check (sampler NAME, seeded by -seed) decides whether the call's
memory accesses are recorded; synchronization always is. For a stress run
(-count=N), tp-ad is the one to use: its counters carry over from one
repetition's goroutines to the next: over -count=50 of racekit's
subjects it kept 2.4% of the accesses and 76% of the races of the same
run (bench/results/sample/stress.md), where tl-ad, whose every new
goroutine starts cold, keeps a third of the accesses. -filter=tree runs
TREE on the event stream before it is written, tuned to -algo. Both make
the trace smaller and report a subset of the races of a full recording
(TREE: the same races); neither works with a predictive detector.

-deadlocks also reports the lock-order cycles another interleaving of
the recorded run could deadlock on (iGoodlock, as racekit deadlocks does),
each like a race report, after the package's races; they fail the package
("racekit: 0 data race(s), 1 potential deadlock(s)" on its FAIL line).

-leaks also reports the goroutines the test binary left blocked forever
on a channel send, receive or select when its tests ended (as racekit
leaks does: what go.uber.org/goleak's VerifyTestMain finds, with the
blocked operation's stack and the creation stack); they fail the package
too. Locks, WaitGroups and condition variables are not covered yet.

-schedule=random runs the tests under racekit's controlled scheduler with
a random strategy seeded by -seed: one goroutine runs at a time, and at
each synchronization operation the seed picks which goes on; timers and
sleeps run on a virtual clock. Its interleavings are ones Go's scheduler
rarely shows on a quiet machine (contention, a waiter arriving first), so
the races of code paths that only those interleavings take are recorded;
every race reported is still one of an execution. Over racekit's subjects
(racekit bench -algo=hb under the random scheduler, seeds 1 and 2): 118
and 116 of 122 known races, against 106 with Go's scheduler in the same
hour, none false (bench/results/hb-random*.json).

-confirm re-executes each race reported, once go test is done, under
racekit's controlled scheduler (RaceFuzzer, as racekit fuzz does), and
then the potential pairs RaceFuzzer's phase 1 (the hybrid detector) finds
on the recorded traces (the run records every access for them) and on
-confirm-record more recorded runs of each package under the controlled
random scheduler, whose interleavings show paths Go's scheduler rarely
takes (and, with -confirm-vet, racekit vet's static pairs): the
package's instrumented test binary runs the race's test alone
-confirm-runs times, each with its own seed, a goroutine about to make
one of the race's two accesses postponed until another is about to make
the other. Each race is then printed once more with its verdict:
confirmed (a run made the two accesses back to back; what each order led
to, a panic, a test failure, a deadlock or nothing, the seeds, and a
racekit replay command that re-makes it), or still observed (the
recorded run had it: its two accesses were unordered by happens-before,
and no controlled run brought them next to each other) or predicted
(-predict: another interleaving has it). A potential pair no run made
happen is counted, not reported. -budget bounds the
confirmation's time, building included: the runs not started by then
are left out and counted. The verdicts go to standard output after go
test's (standard error with -json); a race they show that the run did
not (a potential pair made to happen) fails the command (exit 1). With
-deadlocks, the lock-order cycles iGoodlock predicts on the same traces
and recordings are then run under DeadlockFuzzer's scheduler, -confirm-runs
times each, and printed confirmed (with the blocked operations, seeds
and a racekit replay -cycle command) or potential, and each package runs
-confirm-runs times under random delays (racekit fuzz -deadlocks'
exploration) for deadlocks no cycle names (and, with -leaks, the leaks
those runs make happen, -leaks-ignore applied);
-confirm-json FILE writes them as JSON too (racekit fuzz -json's format:
each pair with its verdict, runs, outcomes, seeds and replay command);
-html DIR draws each confirmed race's interleaving: the scheduling steps
of the first run that created it, up to its two accesses, one column
per goroutine (DIR/index.html lists them).

-sarif FILE writes every race reported to FILE as SARIF 2.1.0, for
code-scanning services: a result per race (rule data-race) at its access,
the previous access a related location, the two accesses' stacks as
thread flows, files relative to the main module's root, and as
properties its verdict (-confirm's, else the detector's evidence:
observed, predicted or potential), test and package, and once confirmed
the probability and the replay command; with -leaks and -deadlocks each
leak and deadlock too (rules goroutine-leak and deadlock).

Test results are never taken from go test's cache (-count=1 is added
unless -count is given): a cached result would leave no trace.

go test's vet check (-vet, on by default) looks at the package's own
files, not at their instrumented copies, and fails a package as go test
does: racekit runs go test with -toolexec set to itself, to show vet the
user's files (a -toolexec given runs each tool in turn); -vet=off skips it.

Exit status, as go test -race gives it: 0 when the tests pass and no race was
found, 1 when a test failed, the build failed or a race was found; 2 on a
usage error.
`,
	goTest: gotestline.All,
})

var (
	testFlags   *frontendFlags
	testFilters *filterFlags
)

func init() {
	cmdTest.run = runTest
	testFlags = addFrontendFlags(cmdTest.flags)
	testFilters = addRecordingFlags(cmdTest)
	addConfirmFlags()
}

func runTest(c *command, args []string) int {
	algos, ok := testFlags.checkAlgos(c)
	if !ok {
		return exitUsage
	}
	if err := testFilters.checkRecording(algos); err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	if *testConfirmRuns < 1 || *testBudget <= 0 || *testConfirmRecord < 0 {
		c.errorf("-confirm-runs must be at least 1, -confirm-record at least 0 and -budget more than 0")
		return exitUsage
	}
	pkgs := args
	// go test's vet check runs on the user's files, not on their
	// instrumented copies (vetexec.go), unless -vet=off; Prepare compiles
	// the dependencies under the same -toolexec, for go test to find them
	// in its cache.
	var toolexec func(overlay string) (string, error)
	if v, _ := c.line.Value("vet"); v != "off" {
		user, ok := c.line.Value("toolexec")
		if !ok {
			user = goflagsToolexec()
		}
		toolexec = func(overlay string) (string, error) { return toolexecArg(overlay, user) }
	}
	prep, ok := prepare(c, testFlags, pkgs, true, toolexec)
	if !ok {
		return exitError
	}
	traceDir, err := os.MkdirTemp("", "racekit-test-")
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	defer os.RemoveAll(traceDir)

	goArgs := append([]string{}, testFlags.buildFlags()...)
	if !c.line.Has("count") {
		goArgs = append(goArgs, "-count=1")
	}
	var omit []string
	if toolexec != nil {
		te, err := toolexec(prep.Overlay)
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		goArgs = append(goArgs, "-toolexec="+te)
		omit = append(omit, "toolexec")
	}
	goArgs = append(goArgs, pkgs...)
	goArgs = append(goArgs, c.line.GoTestArgs(omit...)...)
	// go test's standard output goes through out, which adds each
	// package's races to it once its test binary has exited. With -json,
	// go test's standard output is a stream of JSON events: the races are
	// output events of their tests, and the traces no package claims are
	// reported on standard error.
	var rest io.Writer = os.Stdout
	if c.line.Has("json") {
		rest = os.Stderr
	}
	options := func(progress func(n int64)) analyze.Options { return goRaceOptions(algos, progress) }
	out := &testout.Output{Out: os.Stdout, JSON: c.line.Has("json"), Chatty: c.line.Chatty(), TraceDir: traceDir, Options: options, LeakIgnore: testFlags.ignoredLeaks(), Verbose: *testFlags.verbose, Quiet: *testFlags.quiet, Errorf: c.errorf}
	if *testSARIF != "" {
		out.SARIF = &testout.SARIF{Path: *testSARIF}
	}
	gt := goCommand(prep, "test", goArgs...)
	gt.Stdout = nil
	stdout, err := gt.StdoutPipe()
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	gt.Env = append(gt.Env, "RACEKIT_TRACE_DIR="+traceDir)
	gt.Env = append(gt.Env, testFilters.runtimeEnv(algos)...)
	gt.Env = append(gt.Env, testFlags.recordEnv(algos)...)
	if *testConfirm && os.Getenv("RACEKIT_DEDUP") == "" {
		// Every access keeps its own site, for confirmation's
		// candidates (rt's dedup reports a repeat at the first site);
		// the last setting of a variable is the one the program sees.
		gt.Env = append(gt.Env, "RACEKIT_DEDUP=0")
	}
	// A signal reaches go test (and its test binaries) from the terminal,
	// or is passed on; a second one, or one during the analysis, removes
	// the traces, which may be large, and exits.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	running := make(chan bool, 1)
	running <- true
	go func() {
		for s := range sigs {
			select {
			case <-running:
				if gt.Process != nil {
					_ = gt.Process.Signal(s)
				}
			default:
				os.RemoveAll(traceDir)
				os.Exit(exitError)
			}
		}
	}()
	code := exitOK
	if err = gt.Start(); err == nil {
		out.Run(stdout)
		err = gt.Wait()
	}
	select {
	case <-running:
	default:
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			c.errorf("%v", err)
			return exitError
		}
		code = exitError
	}
	out.Rest(rest)
	if out.Err() {
		code = exitError
	}
	if *testConfirm && len(out.Traces()) > 0 {
		code = runConfirm(c, prep, out, rest, code)
	}
	if out.SARIF != nil {
		if err := out.SARIF.Write(); err != nil {
			c.errorf("-sarif: %v", err)
			code = exitError
		}
	}
	files := tracefile.List(traceDir)
	if *testFlags.keep != "" {
		if err := keepTraces(*testFlags.keep, files); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	if out.Failed() > 0 {
		return exitError
	}
	return code
}
