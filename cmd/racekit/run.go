package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/detect/leak"
	"github.com/racekit/racekit/progress"
)

var cmdRun = register(&command{
	name:      "run",
	usageLine: "run [-algo=fasttrack] [-predict] [-deadlocks] [-leaks [-leaks-ignore F,...]] [-sample=NAME [-sample-loops]] [-filter=tree] [-schedule=random] [-seed N] [-keep-trace DIR] [-q] [-deps=false] [-include P] [-exclude P] [-tags T] [-stats] package [arguments...]",
	short:     "instrument, build and run a Go program, then report its data races",
	long: `
Run is racekit's go run -race. It instruments the packages the program
imports, the main module's and its dependencies' (-deps=false: the main
module's and those -include names; never the standard library's), builds the
program with go build -overlay -modfile (the user's files, go.mod and go.sum
are never modified: instrumented copies live in racekit's cache), runs it
with the given arguments, and analyzes the trace it recorded with
-algo (fasttrack by default). Races are reported on stderr the way Go's
race detector reports them.

-sample and -filter filter while the program records, as for racekit
test (see racekit help test).

The program's standard streams are its own; SIGINT and SIGTERM reach it, and
its trace is finished before it dies. Messages of the build are passed
through unchanged.

Exit status: the program's own; if it exited 0 and races were found, 66 (as
a program built with -race exits); 1 when the build fails or the trace
cannot be read, 2 on a usage error.
`,
	run: runRun,
})

var (
	runFlags   *frontendFlags
	runFilters *filterFlags
)

func init() {
	runFlags = addFrontendFlags(cmdRun.flags)
	runFilters = addRecordingFlags(cmdRun)
}

func runRun(c *command, args []string) int {
	if len(args) < 1 {
		c.errorf("expected a package to run")
		return exitUsage
	}
	algos, ok := runFlags.checkAlgos(c)
	if !ok {
		return exitUsage
	}
	if err := runFilters.checkRecording(algos); err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	pkg, progArgs := args[0], args[1:]
	prep, ok := prepare(c, runFlags, []string{pkg}, false, nil)
	if !ok {
		return exitError
	}
	tmp, err := os.MkdirTemp("", "racekit-run-")
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "prog")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	buildStart := time.Now()
	build := goCommand(prep, "build", append(runFlags.buildFlags(), "-o", bin, pkg)...)
	if err := build.Run(); err != nil {
		return exitError
	}
	built := time.Since(buildStart)

	tracePath := filepath.Join(tmp, "trace.rkt")
	prog := exec.Command(bin, progArgs...)
	prog.Env = append(os.Environ(), "RACEKIT_TRACE="+tracePath, "RACEKIT_SIGNALS=1")
	prog.Env = append(prog.Env, runFilters.runtimeEnv(algos)...)
	prog.Env = append(prog.Env, runFlags.recordEnv(algos)...)
	prog.Stdin, prog.Stdout, prog.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The program gets the terminal's signals itself; racekit outlives it
	// to analyze its trace, and passes on the signals sent to racekit alone.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	runStart := time.Now()
	if err := prog.Start(); err != nil {
		c.errorf("%v", err)
		return exitError
	}
	go func() {
		for s := range sigs {
			_ = prog.Process.Signal(s)
		}
	}()
	code := 0
	if err := prog.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			c.errorf("%v", err)
			return exitError
		}
		code = ee.ExitCode()
		if code < 0 {
			fmt.Fprintf(os.Stderr, "racekit run: %v\n", err)
			code = exitError
		}
	}

	ran := time.Since(runStart)
	st, err := os.Stat(tracePath)
	if err != nil {
		c.errorf("the program wrote no trace (%v)", err)
		return exitError
	}
	progress, stop := progress.New("run", *runFlags.quiet).Analysis(tracePath)
	a, err := analyze.Trace(tracePath, goRaceOptions(algos, progress))
	stop()
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	a.Leaks = leak.Without(a.Leaks, a.Meta, runFlags.ignoredLeaks())
	for _, w := range a.Warns {
		fmt.Fprintf(os.Stderr, "racekit run: warning: %s\n", w)
	}
	if err := a.Print(os.Stderr); err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if *runFlags.verbose {
		fmt.Fprintf(os.Stderr, "racekit run: built in %v; the program ran in %v and recorded %d events (%d bytes, %.1fM events/s); analyzed in %v (%.1fM events/s)\n",
			built.Round(time.Millisecond), ran.Round(time.Millisecond), a.Events, st.Size(), float64(a.Events)/ran.Seconds()/1e6,
			a.Elapsed.Round(time.Millisecond), float64(a.Events)/a.Elapsed.Seconds()/1e6)
	}
	if *runFlags.keep != "" {
		if err := keepTraces(*runFlags.keep, []string{tracePath}); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	if code == 0 && (a.Races > 0 || len(a.Cycles) > 0 || len(a.Leaks) > 0) {
		return exitRaces
	}
	return code
}
