package conformance

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/instrument"
)

// binaries are the suite's test binaries.
type binaries struct {
	racekit string // instrumented by racekit
	race    string // built with -race (Options.Race)
}

// build builds the suite in dir instrumented by racekit and, with
// opts.Race, with go test -race.
func build(dir string, opts *Options) (binaries, error) {
	bins := binaries{racekit: filepath.Join(dir, "racekit.test"), race: filepath.Join(dir, "race.test")}
	prep, err := instrument.Prepare(instrument.Config{Dir: dir, Patterns: []string{"."}, Tests: true, Log: opts.Stderr})
	if err != nil {
		return bins, err
	}
	args := append([]string{"test"}, prep.BuildArgs()...)
	b := exec.Command("go", append(args, "-c", "-o", bins.racekit, ".")...)
	b.Dir, b.Stdout, b.Stderr = dir, opts.Stdout, opts.Stderr
	b.Env = append(os.Environ(), prep.Env...)
	if err := b.Run(); err != nil {
		return bins, fmt.Errorf("building the instrumented suite: %v", err)
	}
	if opts.Race {
		b := exec.Command("go", "test", "-race", "-c", "-o", bins.race, ".")
		b.Dir, b.Stdout, b.Stderr = dir, opts.Stdout, opts.Stderr
		b.Env = append(os.Environ(), "GOWORK=off")
		if err := b.Run(); err != nil {
			return bins, fmt.Errorf("building the suite with -race: %v", err)
		}
	}
	return bins, nil
}

// runAll runs every case, opts.Jobs at a time.
func runAll(cases []*Case, dir string, bins binaries, opts *Options) {
	work := make(chan *Case)
	var wg sync.WaitGroup
	for i := 0; i < max(1, opts.Jobs); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				runRacekit(k, dir, bins.racekit, opts)
				if opts.Race {
					runRace(k, dir, bins.race)
				}
			}
		}()
	}
	for _, k := range cases {
		work <- k
	}
	close(work)
	wg.Wait()
}

// exitWaitOff is the GORACE option that keeps both binaries from waiting a
// second at a normal exit (-race's default, which racekit's runtime
// follows: rt/exit.go): every test runs in a process of its own, and the
// suite's tests wait for the goroutines they start.
const exitWaitOff = "atexit_sleep_ms=0"

// runRacekit runs one test alone in the racekit binary and analyzes its
// trace.
func runRacekit(k *Case, dir, bin string, opts *Options) {
	tr := filepath.Join(dir, k.Name+".rkt")
	env := append([]string{"GOMAXPROCS=1", "RACEKIT_TRACE=" + tr, "GORACE=" + exitWaitOff}, opts.Env...)
	out, err := runLimited(bin, dir, []string{runFlag(k), "-test.v"}, env...)
	k.Ran = true
	k.Skipped = bytes.Contains(out, []byte("--- SKIP"))
	if _, serr := os.Stat(tr); serr != nil {
		k.Err = fmt.Sprintf("no trace (%v): %s", err, lastLine(out))
	} else {
		// Races of the package's initialization (the suite has one) are
		// not the test's: count from the test function's entry, as Go's
		// harness counts from the test's "=== RUN" line.
		a, aerr := analyze.Trace(tr, analyze.Options{Algos: opts.Algos, New: opts.New, StartFunc: "racetest_test." + k.Name})
		switch {
		case aerr != nil:
			k.Err = aerr.Error()
		default:
			k.Race = a.Races > 0
			k.Blocking = len(a.Cycles) + len(a.Leaks)
			if opts.Verbose && a.Races > 0 {
				var b bytes.Buffer
				_ = a.Print(&b)
				k.Report = b.String()
			}
		}
		os.Remove(tr)
	}
	if err != nil && k.Err == "" && !strings.Contains(string(out), "--- FAIL") && !strings.Contains(string(out), "PASS") {
		k.Err = fmt.Sprintf("%v: %s", err, lastLine(out))
	}
}

// runRace runs one test alone in the -race binary.
func runRace(k *Case, dir, bin string) {
	out, _ := runLimited(bin, dir, []string{runFlag(k), "-test.v"}, "GOMAXPROCS=1", "GORACE=suppress_equal_stacks=0 "+exitWaitOff)
	k.GoRan = true
	if i := bytes.Index(out, []byte("=== RUN")); i >= 0 {
		out = out[i:]
	}
	k.GoRace = bytes.Contains(out, []byte("DATA RACE")) || bytes.Contains(out, []byte("fatal error: concurrent map"))
	k.Skipped = k.Skipped || bytes.Contains(out, []byte("--- SKIP"))
}

// runFlag is the test binary's flag that runs k alone.
func runFlag(k *Case) string { return "-test.run=^" + k.Name + "$" }

// runLimited runs bin in dir with env added, for two minutes at most, and
// returns its output.
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
