package confirm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/racekit/racekit/instrument"
	"github.com/racekit/racekit/sched"
)

// BuildTargets builds the instrumented test binary of each package of
// patterns that has tests, once, into dir; go's output goes to stderr.
func BuildTargets(prep *instrument.Prepared, buildFlags, patterns []string, dir string) ([]*Target, error) {
	args := append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}"}, buildFlags...)
	args = append(args, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), prep.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	var targets []*Target
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || (f[2] == "0" && f[3] == "0") {
			continue
		}
		t := &Target{Pkg: f[0], Dir: f[1], Bin: filepath.Join(dir, fmt.Sprintf("p%d.test", i))}
		b := exec.Command("go", append(append(append([]string{"test"}, prep.BuildArgs()...), buildFlags...), "-c", "-o", t.Bin, t.Pkg)...)
		b.Env = append(os.Environ(), prep.Env...)
		b.Stdout, b.Stderr = os.Stderr, os.Stderr
		if err := b.Run(); err != nil {
			return nil, fmt.Errorf("building the test binary of %s: %v", t.Pkg, err)
		}
		if _, err := os.Stat(t.Bin); err != nil {
			continue // no test binary (go test -c writes none without tests)
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// recordRun runs t's tests once for phase 1, recording every access into
// path: under Go's scheduler when k < 0, else under the controlled random
// scheduler with seed c.Seed+k.
func (c *Campaign) recordRun(t *Target, path string, k int) error {
	// Every access keeps its own site (rt's dedup would report a repeated
	// access at the first one's site and lose pairs).
	env := []string{"RACEKIT_DEDUP=0"}
	if k >= 0 {
		env = append(env, randomSchedEnv(c.Seed+uint64(k))...)
	}
	return recordTests(t, c.TestArgs, env, path, c.Timeout)
}

// randomSchedEnv puts a run under the controlled random scheduler.
func randomSchedEnv(seed uint64) []string {
	return []string{"RACEKIT_SCHED=random", "RACEKIT_SEED=" + strconv.FormatUint(seed, 10)}
}

// raceFuzzerEnv puts a run under RaceFuzzer for pair.
func raceFuzzerEnv(seed uint64, pair string) []string {
	return []string{"RACEKIT_SCHED=racefuzzer", "RACEKIT_SEED=" + strconv.FormatUint(seed, 10), "RACEKIT_PAIR=" + pair}
}

// testArgs are the test binary's arguments for a run of test alone ("":
// of all the tests).
func (c *Campaign) testArgs(test string) []string {
	if test == "" {
		return c.TestArgs
	}
	return append(slices.Clone(c.TestArgs), "-test.run=^"+regexp.QuoteMeta(test)+"$")
}

// preemptEnv makes each data access of a random-scheduler run a
// scheduling point with probability p (rt/sched.go, "Preemption").
func preemptEnv(p float64) string {
	return "RACEKIT_SCHED_PREEMPT=" + strconv.FormatFloat(p, 'g', -1, 64)
}

// recordTests runs t's tests once with env added, recording their trace
// into path, within timeout. A run that fails or times out still has its
// trace; one that left none is an error.
func recordTests(t *Target, testArgs, env []string, path string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.Bin, testArgs...)
	cmd.Dir = t.Dir
	// No test-name events (rt/rttest's mark): controlled runs follow
	// this recording's positions and sites, and record none.
	cmd.Env = append(append(os.Environ(), "RACEKIT_TRACE="+path, "RACEKIT_TEST_NAMES=0"), env...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Run(); err != nil && ctx.Err() == nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return startError(t, err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("recorded run left no trace: %v", err)
	}
	return nil
}

// pairRun is one run of phase 2: t's test binary under RaceFuzzer with
// the pair and the seed, its schedule written to schedPath. Only the
// counts and notes are kept: a schedule can be millions of steps (every
// access at a statement in a hot loop is a point), and all runs of all
// pairs would not fit in memory, nor on disk. A binary that does not
// start is an error, whose run has no schedule to digest.
func (c *Campaign) pairRun(t *Target, pair, test string, seed uint64, schedPath string) (Run, error) {
	r, err := controlledRun(t, c.testArgs(test), raceFuzzerEnv(seed, pair), schedPath, c.Timeout, nil)
	r.Seed = seed
	if err != nil {
		return r, err
	}
	r.Digest = sched.DigestSteps(r.Schedule.Steps)
	r.Schedule = nil
	return r, nil
}

// controlledRun runs the test binary once with env added, recording its
// schedule in schedPath, and classifies what happened. out, if not nil,
// receives the binary's output as it runs.
func controlledRun(t *Target, testArgs, env []string, schedPath string, timeout time.Duration, out io.Writer) (Run, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.Bin, append([]string{"-test.timeout=" + (timeout + 10*time.Second).String()}, testArgs...)...)
	cmd.Dir = t.Dir
	cmd.Env = append(append(os.Environ(), env...), "RACEKIT_SCHEDULE_OUT="+schedPath)
	var buf bytes.Buffer
	if out != nil {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&buf, out), io.MultiWriter(&buf, out)
	} else {
		cmd.Stdout, cmd.Stderr = &buf, &buf
	}
	start := time.Now()
	err := cmd.Run()
	r := Run{Elapsed: time.Since(start)}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case ctx.Err() != nil:
			code = -1 // killed at the time limit
		default:
			return r, startError(t, err)
		}
	}
	if f, err := os.Open(schedPath); err == nil {
		r.Schedule, _ = sched.ReadSchedule(f, schedPath)
		f.Close()
	}
	if r.Schedule == nil {
		r.Schedule = &sched.Schedule{}
	}
	r.Steps = len(r.Schedule.Steps)
	r.Escapes = len(r.Schedule.NotesOf("escape"))
	if races := r.Schedule.NotesOf("race"); len(races) > 0 {
		r.Created = true
		r.Resolution = resolution(races[0])
	}
	r.Outcome, r.Detail = classify(ctx.Err() != nil, code, buf.String(), r.Schedule)
	return r, nil
}

// startError is the error of a test binary that did not run (missing,
// not executable, for another system): it names the package and the
// binary, and says why.
func startError(t *Target, err error) error {
	return fmt.Errorf("%s: the test binary %s did not start: %v", t.Pkg, t.Bin, err)
}
