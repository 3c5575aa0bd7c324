package confirm

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/split"
	"github.com/racekit/racekit/progress"
	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// racekit fuzz -atomicity: AtomFuzzer (Park and Sen, FSE'08) over the
// split critical sections of recorded runs (detect/split), with the
// controlled scheduler's seeds and replay.

// AtomicitySplit is one split region and what phase 2 made of it.
type AtomicitySplit struct {
	Split   string `json:"split"` // first>second (sched.ParseSplit)
	Func    string `json:"func,omitempty"`
	Package string `json:"package"`
	// Verdict is "confirmed" (a run in which another goroutine entered the
	// first section between a goroutine's two failed: a test failure or a
	// panic), "interleaved" (the interleaving was made, and the runs
	// passed, or deadlocked or timed out: Outcomes) or "potential" (never
	// made).
	Verdict     string         `json:"verdict"`
	Runs        int            `json:"runs"`
	Interleaved int            `json:"interleaved"`
	Failed      int            `json:"failed"`
	Seeds       []uint64       `json:"seeds"`             // the runs that failed with the interleaving
	Failure     string         `json:"failure,omitempty"` // the first one's outcome and the test's own words
	Violation   string         `json:"violation,omitempty"`
	Outcomes    map[string]int `json:"outcomes"`
	Replay      string         `json:"replay,omitempty"`
	Seconds     float64        `json:"seconds"`
}

type splitJob struct {
	t     *Target
	split sched.Split
	fn    string
	tests []string // the tests that showed it (top-level names), run alone; nil: all
}

// FuzzAtomicity is AtomFuzzer: phase 1 finds, on each recorded run, the
// regions (a function invocation) in which a goroutine took a lock,
// released it and took it again, on a lock other goroutines take too (at
// most maxSplits per package); phase 2 runs the region's target c.Runs
// times under a scheduler that pauses a goroutine about to take the lock
// the second time, so that the others run the first section meanwhile.
// A region is confirmed by a run that made the interleaving and failed.
func FuzzAtomicity(c *Campaign, maxSplits int) ([]AtomicitySplit, error) {
	// Phase 1: split critical sections on recorded runs.
	var jobs []splitJob
	seen := map[string]bool{}
	record := func(t *Target, path string, k int) error {
		return recordNamed(t, c.TestArgs, path, k, c.Seed, c.Timeout)
	}
	err := c.forEachRecording(record, func(t *Target, path string, i, records int) error {
		var err error
		jobs, err = addSplits(jobs, seen, t, path, maxSplits)
		c.Progress.Printf("phase 1: %s: recorded run %d/%d, %d split regions so far", t.Pkg, i+1, records, len(jobs))
		return err
	})
	if err != nil {
		return nil, err
	}
	jobs = inShard(c.Shard, jobs, func(jb splitJob) string { return shardKey(jb.t.Pkg, jb.split.String()) })

	// Phase 2: AtomFuzzer, c.Runs seeds per split.
	c.Progress.Printf("phase 2: %d split regions, %d runs each, %d at a time", len(jobs), c.Runs, c.Jobs)
	results, err := atomFuzzRuns(jobs, c.TestArgs, c.Runs, c.Seed, c.Jobs, c.Timeout, c.Tmp, c.Progress)
	if err != nil {
		return nil, err
	}
	return atomVerdicts(jobs, results, c.GoFlags), nil
}

// recordNamed records t's tests into path as recordRun does (k >= 0: under
// the random scheduler with seed seed+k), with the tests' names, which
// AtomFuzzer's runs are restricted to (a run that follows no clip can
// have them).
func recordNamed(t *Target, testArgs []string, path string, k int, seed uint64, timeout time.Duration) error {
	env := []string{"RACEKIT_DEDUP=0", "RACEKIT_TEST_NAMES=1"}
	if k >= 0 {
		env = append(env, randomSchedEnv(seed+uint64(k))...)
	}
	return recordTests(t, testArgs, env, path, timeout)
}

// addSplits appends to jobs the split regions of the trace at path that
// target t's recording showed on a shared lock and seen does not hold yet,
// up to max for t's package.
func addSplits(jobs []splitJob, seen map[string]bool, t *Target, path string, max int) ([]splitJob, error) {
	found, meta, err := findSplits(path)
	if err != nil {
		return jobs, err
	}
	n := 0
	for _, j := range jobs {
		if j.t == t {
			n++
		}
	}
	for _, s := range found {
		sp, fn, ok := schedSplit(meta, s)
		if !ok || !s.Shared || seen[t.Pkg+" "+sp.String()] || n >= max {
			continue
		}
		seen[t.Pkg+" "+sp.String()] = true
		jobs = append(jobs, splitJob{t, sp, fn, topTests(s.Tests)})
		n++
	}
	return jobs, nil
}

// atomFuzzRuns runs each job's target runs times under AtomFuzzer (seeds
// seed, seed+1, ...), workers at a time, and returns each job's runs: Created
// when the run made the interleaving (Resolution its note), a test
// failure's Detail with the test's own first message.
func atomFuzzRuns(jobs []splitJob, testArgs []string, runs int, seed uint64, workers int, timeout time.Duration, tmp string, prog *progress.Lines) ([][]Run, error) {
	type task struct {
		j, k int
		seed uint64
	}
	var tasks []task
	results := make([][]Run, len(jobs))
	for j := range jobs {
		results[j] = make([]Run, runs)
		for k := 0; k < runs; k++ {
			tasks = append(tasks, task{j, k, seed + uint64(k)})
		}
	}
	tally := newFuzzTally(prog, len(jobs)).named("region", "interleaved")
	err := inParallel(len(tasks), workers, func(i int) error {
		tk := tasks[i]
		jb := jobs[tk.j]
		path := filepath.Join(tmp, fmt.Sprintf("split%d-%d.sched", tk.j, tk.seed))
		args := testArgs
		if len(jb.tests) > 0 {
			// Only the tests that run the region: a failure of
			// another test is not this region's doing.
			args = append(slices.Clone(testArgs), "-test.run=^("+strings.Join(jb.tests, "|")+")$")
		}
		var out bytes.Buffer
		r, err := controlledRun(jb.t, args, atomFuzzEnv(tk.seed, jb.split), path, timeout, &out)
		os.Remove(path)
		r.Seed = tk.seed
		if v := r.Schedule.NotesOf("violation"); len(v) > 0 {
			r.Created, r.Resolution = true, v[0]
		}
		if m := failureMessage(out.String()); m != "" && r.Outcome == "test failure" {
			r.Detail += ": " + m
		}
		r.Schedule = nil
		results[tk.j][tk.k] = r
		tally.done(tk.j, jb.split.String(), runs, r)
		return err
	})
	return results, err
}

// atomVerdicts groups each split's runs into its verdict.
func atomVerdicts(jobs []splitJob, results [][]Run, goFlags []string) []AtomicitySplit {
	var out []AtomicitySplit
	for j, jb := range jobs {
		as := AtomicitySplit{Split: jb.split.String(), Func: jb.fn, Package: jb.t.Pkg, Verdict: "potential", Runs: len(results[j]), Outcomes: map[string]int{}}
		for _, r := range results[j] {
			as.Seconds += r.Elapsed.Seconds()
			as.Outcomes[r.Outcome]++
			if !r.Created {
				continue
			}
			as.Interleaved++
			if as.Violation == "" {
				as.Violation = r.Resolution
			}
			if r.Outcome != "test failure" && r.Outcome != "panic" {
				// A deadlock or a timeout may be the pause's own doing
				// (a goroutine that waits for the paused one): the
				// region's atomicity is confirmed by the program's own
				// checks only.
				continue
			}
			as.Failed++
			as.Seeds = append(as.Seeds, r.Seed)
			if as.Failure == "" {
				as.Failure = r.Outcome
				if r.Detail != "" {
					as.Failure += ": " + r.Detail
				}
				flags := goFlags
				if len(jb.tests) > 0 {
					flags = append(slices.Clone(goFlags), "-run", "^("+strings.Join(jb.tests, "|")+")$")
				}
				as.Replay = replayCommand(r.Seed, "-split", as.Split, jb.t.Pkg, flags)
			}
		}
		switch {
		case as.Failed > 0:
			as.Verdict = "confirmed"
		case as.Interleaved > 0:
			as.Verdict = "interleaved"
		}
		out = append(out, as)
	}
	return out
}

// atomFuzzEnv puts a run under AtomFuzzer for split.
func atomFuzzEnv(seed uint64, sp sched.Split) []string {
	return []string{
		"RACEKIT_SCHED=atomfuzzer",
		"RACEKIT_SEED=" + strconv.FormatUint(seed, 10),
		"RACEKIT_SPLIT=" + sp.String(),
		"RACEKIT_SCHED_DEADLOCK=300ms",
	}
}

// findSplits runs detect/split over the trace at path.
func findSplits(path string) ([]split.Split, *trace.Meta, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fd := split.New(f.Meta(), split.Options{TestMark: analyze.TestMarkFile})
	if _, err := detect.Run(f, fd); err != nil {
		return nil, nil, err
	}
	return fd.Splits(), f.Meta(), nil
}

// schedSplit turns a split of detect/split into the statements AtomFuzzer
// pauses between, with the region's function name; false when a site is
// unknown.
func schedSplit(m *trace.Meta, s split.Split) (sched.Split, string, bool) {
	fs, ss := m.Site(s.First), m.Site(s.Second)
	if fs.Line == 0 || ss.Line == 0 {
		return sched.Split{}, "", false
	}
	fn := ""
	if s.Func != 0 {
		fn = m.Site(s.Enter).Func
	}
	return sched.Split{First: sched.Stmt{File: fs.File, Line: fs.Line}, Second: sched.Stmt{File: ss.File, Line: ss.Line}}, fn, true
}

// printAtomFuzz writes fuzz -atomicity's result as text.
func PrintAtomicity(w io.Writer, cmd string, splits []AtomicitySplit) {
	if len(splits) == 0 {
		fmt.Fprintf(w, "racekit %s: no atomic region with split critical sections found\n", cmd)
		return
	}
	n := 0
	for i, s := range splits {
		fmt.Fprintf(w, "==================\n")
		switch s.Verdict {
		case "confirmed":
			n++
			fmt.Fprintf(w, "ATOMICITY VIOLATION (confirmed: %d of %d runs interleaved the region and failed)\n", s.Failed, s.Runs)
		case "interleaved":
			fmt.Fprintf(w, "SPLIT REGION %d (interleaved in %d of %d runs; the tests passed: a violation only if the region is meant to be atomic)\n", i+1, s.Interleaved, s.Runs)
		default:
			fmt.Fprintf(w, "SPLIT REGION %d (not interleaved in %d runs)\n", i+1, s.Runs)
		}
		first, second, _ := strings.Cut(s.Split, ">")
		region := "one invocation"
		if s.Func != "" {
			region = "one invocation of " + s.Func
		}
		fmt.Fprintf(w, "Package %s: in %s, a lock taken at %s, released, and taken again at %s\n", s.Package, region, relSite(first), relSite(second))
		if s.Violation != "" {
			fmt.Fprintf(w, "Interleaving: %s\n", relText(s.Violation))
		}
		if s.Failure != "" {
			fmt.Fprintf(w, "Failure (seed %d): %s\nSeeds: %s\nReplay: %s\n", s.Seeds[0], s.Failure, seedList(s.Seeds), s.Replay)
		}
		var o []string
		for k, v := range s.Outcomes {
			o = append(o, fmt.Sprintf("%s %d", k, v))
		}
		slices.Sort(o)
		fmt.Fprintf(w, "Runs: %s\n", strings.Join(o, ", "))
	}
	fmt.Fprintf(w, "==================\nracekit %s: %d split region(s), %d confirmed\n", cmd, len(splits), n)
}

// failureMessage is the first message a failing test logged: the first
// indented line after a "--- FAIL:" line ("shop_test.go:30: oversold: -1"),
// "" if none.
func failureMessage(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "--- FAIL: ") {
			continue
		}
		for _, m := range lines[i+1:] {
			if t := strings.TrimSpace(m); t != "" && strings.HasPrefix(m, "    ") && !strings.HasPrefix(t, "--- ") {
				return t
			}
			break
		}
	}
	return ""
}

// relText shortens every absolute file name below the working directory
// in text (relSite).
func relText(text string) string {
	if wd, err := os.Getwd(); err == nil {
		return strings.ReplaceAll(text, wd+string(filepath.Separator), "")
	}
	return text
}

// topTests are the top-level names of tests (TestX of TestX/sub), each
// once, quoted for -test.run.
func topTests(tests []string) []string {
	var out []string
	for _, t := range tests {
		top, _, _ := strings.Cut(t, "/")
		if q := regexp.QuoteMeta(top); !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out
}
