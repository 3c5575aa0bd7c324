package confirm

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/racekit/racekit/sched"
)

// ReplayOptions are racekit replay's: one run of a campaign, re-made from
// its seed (with the pair, cycle or split its strategy aimed at) or by
// following a schedule file, Times times.
type ReplayOptions struct {
	Target   *Target
	Tmp      string // the runs' schedules
	TestArgs []string
	Seed     uint64
	Pair     string      // RaceFuzzer's pair
	Cycle    sched.Cycle // DeadlockFuzzer's cycle, or nil
	Split    *sched.Split
	Delays   bool   // DelayFuzzer (fuzz -deadlocks' exploration)
	Follow   string // a schedule file to follow instead of a seed
	Times    int
	Schedule string // if set, the first run's schedule is written here
	Timeout  time.Duration
	Out      io.Writer // the first run's output, as it runs
}

// ReplayResult is what the runs of a replay showed.
type ReplayResult struct {
	Run Run // the first run
	// Mismatches says, for each later run whose schedule differs from the
	// first's, how.
	Mismatches []string
	// Summary is what the first run made of its target: "race created:
	// A before B", "the cycle deadlocked", "the region was not
	// interleaved", ...
	Summary    string
	Divergence string // how the first run left a followed schedule, if it did
}

// env is the runs' environment: the strategy and its target.
func (o *ReplayOptions) env() ([]string, error) {
	switch {
	case o.Follow != "":
		follow, pair, err := followed(o.Follow, o.Pair)
		if err != nil {
			return nil, err
		}
		return []string{"RACEKIT_SCHED=replay", "RACEKIT_SCHEDULE_IN=" + follow, "RACEKIT_PAIR=" + pair}, nil
	case o.Split != nil:
		return atomFuzzEnv(o.Seed, *o.Split), nil
	case o.Cycle != nil:
		return deadlockFuzzEnv(o.Seed, o.Cycle), nil
	case o.Delays:
		return delayFuzzEnv(o.Seed), nil
	}
	return raceFuzzerEnv(o.Seed, o.Pair), nil
}

// DebugCommand is the shell command that runs the replay under the dlv
// debugger, in the package's directory.
func (o *ReplayOptions) DebugCommand() (string, error) {
	env, err := o.env()
	if err != nil {
		return "", err
	}
	var q, ta []string
	for _, e := range env {
		q = append(q, shellQuote(e))
	}
	for _, a := range o.TestArgs {
		ta = append(ta, shellQuote(a))
	}
	return fmt.Sprintf("cd %s && env %s dlv exec %s -- %s", shellQuote(o.Target.Dir), strings.Join(q, " "), o.Target.Bin, strings.Join(ta, " ")), nil
}

// Replay runs the target o.Times times as o says and compares each later
// run's schedule with the first's, step for step.
func Replay(o *ReplayOptions) (ReplayResult, error) {
	env, err := o.env()
	if err != nil {
		return ReplayResult{}, err
	}
	var res ReplayResult
	for i := 0; i < max(o.Times, 1); i++ {
		path := filepath.Join(o.Tmp, fmt.Sprintf("run%d.sched", i))
		if i == 0 && o.Schedule != "" {
			path = absFile(o.Schedule) // the binary runs in the package's directory
		}
		out := o.Out
		if i > 0 {
			out = io.Discard // the output of the first run is enough
		}
		runEnv := env
		if i == 0 && o.Delays {
			// For the goroutines the run leaves blocked (ExploreBlocking).
			runEnv = append(slices.Clone(env), "RACEKIT_TRACE="+filepath.Join(o.Tmp, "run0.rkt"))
		}
		r, err := controlledRun(o.Target, o.TestArgs, runEnv, path, o.Timeout, out)
		if err != nil {
			return ReplayResult{}, err
		}
		if i == 0 {
			res.Run = r
			continue
		}
		if d := sched.DiffSteps(res.Run.Schedule.Steps, r.Schedule.Steps); d != "" {
			res.Mismatches = append(res.Mismatches, fmt.Sprintf("run %d has another schedule than run 1: %s", i+1, d))
		}
	}
	r := res.Run
	if notes := r.Schedule.NotesOf("divergence"); len(notes) > 0 {
		res.Divergence = notes[0]
	}
	switch {
	case o.Cycle != nil && r.Outcome == "deadlock" && closes(o.Cycle, r.Schedule.NotesOf("deadlock")):
		res.Summary = "the cycle deadlocked"
	case o.Cycle != nil:
		res.Summary = "the cycle did not deadlock"
	case o.Delays && r.Outcome == "deadlock":
		res.Summary = "the run deadlocked: " + relText(blockedKey(r.Schedule.NotesOf("deadlock")))
	case o.Delays:
		res.Summary = "the run did not deadlock (" + r.Outcome + ")"
		if leaks := traceLeaks(filepath.Join(o.Tmp, "run0.rkt"), nil); len(leaks) > 0 {
			var b []string
			for _, l := range leaks {
				b = append(b, leakText(l))
			}
			slices.Sort(b)
			res.Summary = fmt.Sprintf("the run left %d goroutine(s) blocked when it ended: %s", len(b), strings.Join(b, "; "))
		}
	case o.Split != nil && len(r.Schedule.NotesOf("violation")) > 0:
		res.Summary = "the region was interleaved: " + relText(r.Schedule.NotesOf("violation")[0])
	case o.Split != nil:
		res.Summary = "the region was not interleaved"
	case r.Created:
		res.Summary = "race created: " + r.Resolution
	default:
		res.Summary = "race not created"
	}
	return res, nil
}

// followed returns the schedule file to follow, absolute (the test binary
// runs in the package's directory), and the pair of its run: pair, or
// else the one its header names (racekit fuzz -keep and replay -schedule
// write it). The pair's accesses must be points again, or the steps at
// them are not there to follow; and at those points the followed run sees
// the race happen and notes it (sched.Replay), as the seed's run did.
func followed(path, pair string) (string, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", fmt.Errorf("-follow: %v", err)
	}
	defer f.Close()
	s, err := sched.ReadSchedule(f, path)
	if err != nil {
		return "", "", fmt.Errorf("-follow: %v", err)
	}
	if pair == "" {
		pair = s.Pair
	}
	return absFile(path), pair, nil
}
