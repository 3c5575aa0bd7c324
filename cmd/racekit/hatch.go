package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/racekit/racekit/detect/anomaly"
	"github.com/racekit/racekit/sched"
)

var cmdHatch = register(&command{
	name:      "hatch",
	usageLine: "hatch [-from pecan|rdit|mcm] [-use-trace FILE | -record-seed N[/P][,N[/P]...]] [-record-preempt P] [-recordings N] [-dedup] [-kinds K] [-patterns FILE] [-atomic-funcs NAMES] [-control auto|anomaly|clip] [-atomfuzz=false] [-runs N] [-j N] [-seed S] [-json] [-html DIR] [-keep DIR] [-timeout D] [-q] [-deps=false] [-include P] [-exclude P] [-tags T] [-stats] [go test flags] [package] [go test flags] [-args test binary arguments...]",
	short:     "re-execute predicted anomalies along their clips to confirm or prune them (PECAN hatching)",
	long: `
Hatch is PECAN's bug hatching (Huang and Zhang, ISSTA'11, section 6) for Go
tests. It records a trace of the package's tests (under the controlled
random scheduler with -record-seed N, whose schedules show contention a
quiet machine rarely does; or reads -use-trace, kept by racekit test
-keep-trace from the same tests), predicts anomalies on it,
and re-executes the test binary along each anomaly's clip on racekit's
controlled scheduler: every goroutine runs its part of
the clip in the clip's order, the accesses of the anomaly being scheduling
points. An anomaly is confirmed when the run performed its events in the
pattern's order on the same variables (and, for a race, back to back);
it is pruned when a goroutine departed from the clip (it took another
branch, blocked, or never came) or the run hung. Each result says what the
program did: a panic, a test failure, a deadlock, or nothing.

A race that no clip run made happen is not pruned when the recorded run
had it already: when the happens-before detector (racekit analyze
-algo=hb) reports the same two statements racing on the same variable
in the recorded trace, the two accesses were unordered by happens-before
in a real execution, a data race as the Go memory model and go test -race
define it. Its verdict is "observed". Such races are often ones no
interleaving brings back to back: the read runs only after a flag that
the writer sets after its write, plain variables both (a race of the
memory model, not of the interleaving).

One recorded run shows only the paths it took: -recordings N records N
runs (seeds N, N+1, ... with -record-seed; Go's scheduler otherwise) and
predicts on each. A prediction (kind, pattern and source lines) counts
once; it is hatched along the clip of the first recording that made it,
and, if no run confirmed it, along the next one's, and so on. A list
gives each recording's seed: -record-seed 0,1,2 records once under Go's
scheduler (real timing: a timeout that fires while the work runs) and
then under the random scheduler with seeds 1 and 2.

Under the random scheduler only synchronization is a scheduling point,
so a check and the store it guards (if p.cache == nil { p.cache = ... })
never interleave with another goroutine's in a recording, and the races
that need it are never predicted. -record-preempt P makes each data
access of a random-scheduler recording a scheduling point too, with
probability P drawn from the seed (so a seed still gives one run); in a
list, N/P gives one recording its own (-record-seed 0,1,2,1/0.5,2/0.5).
A clip of a random-scheduler recording runs on the same virtual clock as
the recording (timers, sleeps, time.Now; see racekit fuzz), so that an
expiry or a timeout comes at the same place; a clip of a run under Go's
scheduler, or of -use-trace, runs on the real clock.

-from selects the predictions: pecan (default: races, atomicity violations
and atomic-set serializability violations with their clips, as racekit
anomalies gives them; -kinds selects families), or rdit / mcm (predicted
races, each with its witness: a reordering of the trace that makes the two
accesses adjacent).

Positions in a clip count each goroutine's synchronization, goroutine
life, atomics and accesses at the anomaly's statements in the recorded
trace; other plain accesses, which vary with the data, do not move them.
Those accesses must still be recorded alike: hatch records every access,
where racekit test by default drops an access a goroutine repeats with no
synchronization in between (how many it drops depends on timing); give
-dedup for a -use-trace that racekit test recorded, and never a trace
recorded with -sample or -filter.
A run that departs from its clip is pruned and stopped there (outcome
"stopped").
Functions marked //racekit:atomic are atomic regions (as in racekit
anomalies); -atomic-funcs makes invocations of the named functions
(comma-separated, package-qualified as in the trace, or "all") atomic
regions too, and -patterns adds user patterns from FILE (racekit help
anomalies gives the notation), whose anomalies are hatched like the
built-in ones (-kinds= leaves only them). A run is deterministic as long as no goroutine leaves the
scheduler's control (see racekit fuzz).

PECAN predicts from the events a run showed: a check-then-act on a
locked counter (if s.available() { s.take() }, each method locked) whose
recorded run never shows the second goroutine's act (it saw the item gone)
is out of its reach. So hatch also runs AtomFuzzer (as racekit fuzz
-atomicity; -atomfuzz=false leaves it out) on the recordings' atomic
regions whose critical sections on one lock are split in two: -runs runs
each (at least 4) that pause a goroutine between its two sections. A
region is confirmed when a run that interleaved it failed, with the
test's own message and a racekit replay -split command.

Hatch reports its progress on standard error: a line per recording (its
events and predictions) and per clip hatched (its runs, and how many
confirmed it), with the time since the start; -q prints none.

Exit status: 66 if an anomaly was confirmed or a race observed, 0 if
none, 1 on a build or run error, 2 on a usage error.
`,
})

var (
	hatchFlags   *frontendFlags
	hatchFrom    = cmdHatch.flags.String("from", "pecan", "predictions to hatch: pecan, rdit or mcm")
	hatchTrace   = cmdHatch.flags.String("use-trace", "", "predict on this trace (racekit test -keep-trace of the same tests) instead of a new recorded run")
	hatchKinds   = cmdHatch.flags.String("kinds", "race,atomicity,asv", "with -from=pecan: pattern families (race, atomicity, asv; empty: none)")
	hatchPattern = cmdHatch.flags.String("patterns", "", "with -from=pecan: file of user patterns (as racekit anomalies -patterns)")
	hatchFuncs   = cmdHatch.flags.String("atomic-funcs", "", "with -from=pecan: functions whose invocations are atomic regions: comma-separated names, or all")
	hatchRuns    = cmdHatch.flags.Int("runs", 1, "runs per anomaly (seeds -seed, -seed+1, ... for the choices after the clip)")
	hatchJobs    = cmdHatch.flags.Int("j", runtime.NumCPU(), "runs in parallel")
	hatchSeed    = cmdHatch.flags.Uint64("seed", 1, "first seed")
	hatchJSON    = cmdHatch.flags.Bool("json", false, "print the result as JSON")
	hatchHTML    = cmdHatch.flags.String("html", "", "with -from=pecan: write the clip pages, with their verdicts, to DIR")
	hatchKeep    = cmdHatch.flags.String("keep", "", "keep each run's clip, schedule and trace in DIR")
	hatchTimeout = cmdHatch.flags.Duration("timeout", time.Minute, "time limit of one run")
	hatchControl = cmdHatch.flags.String("control", "auto", "with -from=pecan: accesses under control in a run: anomaly (the anomaly's statements), clip (every access of a full clip), auto (anomaly, then clip after a departure)")
	hatchRecSeed = cmdHatch.flags.String("record-seed", "0", "record under the controlled random scheduler with this seed (0: Go's scheduler), for schedules a quiet machine rarely shows; a comma list (0,1,2) gives each recording's seed, N/P with preemption P (-record-preempt)")
	hatchPreempt = cmdHatch.flags.Float64("record-preempt", 0, "with -record-seed: each data access of a recording is also a scheduling point with this probability, so that a check and its store may interleave")
	hatchDedup   = cmdHatch.flags.Bool("dedup", false, "record as racekit test does by default, dropping an access a goroutine repeats with no synchronization in between (needed for a -use-trace racekit test recorded)")
	hatchQuiet   = cmdHatch.flags.Bool("q", false, "print no progress lines on stderr")
	hatchAtoms   = cmdHatch.flags.Bool("atomfuzz", true, "also run AtomFuzzer on the recordings' atomic regions whose critical sections on one lock are split in two (as racekit fuzz -atomicity; -runs runs each, at least 4)")
	hatchRecs    = cmdHatch.flags.Int("recordings", 1, "record this many runs (-record-seed N, N+1, ...; or Go's scheduler each time; or the seeds of a -record-seed list) and hatch what any of them predicts; a prediction not confirmed along one recording's clip is tried along the next's")
)

func init() {
	cmdHatch.run = runHatch
	cmdHatch.goTest = goTestRuns
	hatchFlags = addBuildFlags(cmdHatch.flags)
}

// hatchEvent is one event of an anomaly, located in the recorded trace.
type hatchEvent struct {
	G    string // stable name (sched.Names)
	Ev   int    // position among G's events (sched.Positions)
	Kind sched.Kind
	Site string // file:line
	Obj  uint64 // address in the recorded run
}

// hatchCand is one prediction to hatch.
type hatchCand struct {
	Kind        string
	Pattern     string
	Sites       []string
	Vars        []string
	consecutive bool
	events      []hatchEvent
	steps       []sched.ClipStep
	anomaly     *anomaly.Anomaly // -from=pecan
	// extra are more statements under test than the anomaly's own; wide
	// is the same clip with every access it lists under control (a full
	// clip's access sites in extra), nil when there is none.
	extra []string
	wide  *hatchCand
	// recording is the index of the recording it was predicted on.
	recording int
	// virtual: that recording ran on the random scheduler's virtual clock,
	// so the clip runs on it too (RACEKIT_SCHED_TIME=virtual): an expiry
	// checked against time.Now, a timeout, a sleep's end then come at the
	// same places in the clip as in the recording, not when the serialized
	// run's real clock says.
	virtual bool
}

// key identifies a prediction across recordings: PECAN reports one
// anomaly per distinct combination of pattern and source lines.
func (cd *hatchCand) key() string {
	return cd.Kind + " " + cd.Pattern + " " + strings.Join(cd.Sites, " ")
}

// hatchGroup is one distinct prediction and its clips, one per recording
// that made it, in recording order; runs holds the runs along each clip
// hatched so far.
type hatchGroup struct {
	alts []*hatchCand
	runs [][]HatchRun
}

// confirmed reports whether a run along one of g's clips confirmed it.
func (g *hatchGroup) confirmed() bool {
	for _, rs := range g.runs {
		for _, r := range rs {
			if r.Confirmed {
				return true
			}
		}
	}
	return false
}

// HatchRun is one controlled run along a clip.
type HatchRun struct {
	Seed      uint64  `json:"seed"`
	Confirmed bool    `json:"confirmed"`
	Reason    string  `json:"reason,omitempty"` // why it was not confirmed
	Outcome   string  `json:"outcome"`          // none, panic, test failure, deadlock, timeout, stopped (at a departure), exit N
	Detail    string  `json:"detail,omitempty"`
	Steps     int     `json:"steps"`
	Seconds   float64 `json:"seconds"`
	// Control is "clip" for a run with every access of the clip under
	// control (-control), "" for the anomaly's accesses only.
	Control string `json:"control,omitempty"`
	// Recording is the recording (1, 2, ...) whose clip the run followed,
	// with -recordings above 1.
	Recording int `json:"recording,omitempty"`
}

// HatchAnomaly is the result for one prediction.
type HatchAnomaly struct {
	Kind    string     `json:"kind"`
	Pattern string     `json:"pattern"`
	Sites   []string   `json:"sites"`
	Vars    []string   `json:"vars,omitempty"`
	Verdict string     `json:"verdict"` // confirmed, observed (a race of the recorded run; see observedRaces) or pruned
	Runs    []HatchRun `json:"runs"`
}

// HatchRecording is one recorded run (-recordings): its trace and the
// predictions made on it, of which New were not made on an earlier one.
type HatchRecording struct {
	Trace string `json:"trace"`
	// Seed is the controlled random scheduler's seed, 0 for Go's scheduler;
	// Preempt its RACEKIT_SCHED_PREEMPT.
	Seed          uint64  `json:"seed,omitempty"`
	Preempt       float64 `json:"preempt,omitempty"`
	Events        int     `json:"events"`
	RecordSeconds float64 `json:"record_seconds"`
	SearchSeconds float64 `json:"search_seconds"`
	Predicted     int     `json:"predicted"`
	New           int     `json:"new"`
}

// HatchResult is racekit hatch's -json output. With several recordings,
// Trace is the first, Events, RecordSeconds and SearchSeconds the sums,
// Goroutines and SharedVars the largest; Predicted counts distinct
// predictions (kind, pattern and sites).
type HatchResult struct {
	Package       string           `json:"package"`
	Trace         string           `json:"trace"`
	Recordings    []HatchRecording `json:"recordings"`
	From          string           `json:"from"`
	Events        int              `json:"events"`
	Goroutines    int              `json:"goroutines"`
	SharedVars    int              `json:"shared_vars"` // addresses accessed by two goroutines or more
	RecordSeconds float64          `json:"record_seconds"`
	SearchSeconds float64          `json:"search_seconds"`
	HatchSeconds  float64          `json:"hatch_seconds"`
	Predicted     int              `json:"predicted"`
	Confirmed     int              `json:"confirmed"`
	Observed      int              `json:"observed"` // races not confirmed that the recorded run had
	Anomalies     []HatchAnomaly   `json:"anomalies"`
	// Splits are the atomic regions whose critical sections on one lock
	// are split in two (-atomfuzz: AtomFuzzer), with their verdicts.
	Splits []AtomicitySplit `json:"splits,omitempty"`
}

func runHatch(c *command, args []string) int {
	pkgs := args
	if len(pkgs) != 1 {
		c.errorf("hatch takes one package, got %d", len(pkgs))
		return exitUsage
	}
	switch *hatchFrom {
	case "pecan", "rdit", "mcm":
	default:
		c.errorf("-from %q: want pecan, rdit or mcm", *hatchFrom)
		return exitUsage
	}
	var patterns []*anomaly.Pattern
	if *hatchFrom == "pecan" {
		var code int
		if patterns, code = anomalyPatterns(c, *hatchKinds, *hatchPattern); code != exitOK {
			return code
		}
	} else if *hatchPattern != "" || *hatchFuncs != "" {
		c.errorf("-patterns and -atomic-funcs select PECAN's predictions: give -from=pecan")
		return exitUsage
	}
	opt := anomaly.Options{AtomicFunc: atomicFuncs(*hatchFuncs)}
	switch *hatchControl {
	case "auto", "anomaly", "clip":
	default:
		c.errorf("-control %q: want auto, anomaly or clip", *hatchControl)
		return exitUsage
	}
	if *hatchRuns < 1 || *hatchJobs < 1 || *hatchRecs < 1 {
		c.errorf("-runs, -recordings and -j must be at least 1")
		return exitUsage
	}
	if *hatchPreempt < 0 || *hatchPreempt > 1 {
		c.errorf("-record-preempt %v: want a probability from 0 to 1", *hatchPreempt)
		return exitUsage
	}
	recs, err := recordSpecs(*hatchRecSeed, *hatchRecs, *hatchPreempt)
	if err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	if len(recs) > 1 && *hatchTrace != "" {
		c.errorf("-recordings records runs; -use-trace reads one")
		return exitUsage
	}
	if *hatchPreempt > 0 && !slices.ContainsFunc(recs, func(r recordSpec) bool { return r.seed != 0 }) {
		c.errorf("-record-preempt acts on the random scheduler's recordings: give -record-seed N")
		return exitUsage
	}
	targets, tmp, ok := testBinaries(c, hatchFlags, pkgs, "racekit-hatch-")
	if !ok {
		return exitError
	}
	defer os.RemoveAll(tmp)
	t := targets[0]
	testArgs := c.line.binaryArgs()
	outDir := tmp
	if *hatchKeep != "" {
		if err := os.MkdirAll(*hatchKeep, 0o777); err != nil {
			c.errorf("%v", err)
			return exitError
		}
		outDir = *hatchKeep
	}

	// Record and predict, once per recording.
	prog := newProgressLines("hatch", *hatchQuiet)
	res := HatchResult{Package: t.Pkg, From: *hatchFrom}
	var groups []*hatchGroup
	byKey := map[string]*hatchGroup{}
	var observed []map[string]bool // per recording
	for i, spec := range recs {
		start := time.Now()
		path := *hatchTrace
		if path == "" {
			path = filepath.Join(outDir, "recorded.rkt")
			if i > 0 {
				path = filepath.Join(outDir, fmt.Sprintf("recorded-%d.rkt", i+1))
			}
			env := []string{dedupEnv()}
			if spec.seed != 0 {
				env = append(env, randomSchedEnv(spec.seed)...)
				if spec.preempt > 0 {
					env = append(env, preemptEnv(spec.preempt))
				}
			}
			if err := recordTests(t, testArgs, env, path, *hatchTimeout); err != nil {
				c.errorf("%s: %v", t.Pkg, err)
				return exitError
			}
		}
		rec := HatchRecording{Trace: path, Seed: spec.seed, Preempt: spec.preempt, RecordSeconds: time.Since(start).Seconds()}
		if *hatchTrace != "" {
			rec.Seed, rec.Preempt, rec.RecordSeconds = 0, 0, 0
		}
		tr, err := readTraceFile(c, path)
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		rec.Events = len(tr.Events)
		goroutines, shared := traceShape(tr)

		start = time.Now()
		var cands []*hatchCand
		if *hatchFrom == "pecan" {
			cands = anomalyCands(tr, anomaly.Find(tr, patterns, opt))
		} else {
			cands, err = witnessCands(tr, *hatchFrom)
			if err != nil {
				c.errorf("%v", err)
				return exitError
			}
		}
		rec.SearchSeconds = time.Since(start).Seconds()
		rec.Predicted = len(cands)
		virtual := spec.seed != 0 && *hatchTrace == "" && os.Getenv("RACEKIT_SCHED_TIME") != "real"
		for _, cd := range cands {
			cd.recording, cd.virtual = i, virtual
			if cd.wide != nil {
				cd.wide.virtual = virtual
			}
			k := cd.key()
			if g := byKey[k]; g != nil {
				g.alts = append(g.alts, cd)
				continue
			}
			rec.New++
			g := &hatchGroup{alts: []*hatchCand{cd}}
			byKey[k] = g
			groups = append(groups, g)
		}
		observed = append(observed, observedRaces(tr))
		prog.printf("recording %d/%d: %d events, %d predictions (%s, %d new)", i+1, len(recs), len(tr.Events), len(cands), *hatchFrom, rec.New)
		if *hatchFlags.verbose {
			fmt.Fprintf(os.Stderr, "racekit hatch: %s: %d events, %d predictions (%s, %d new) in %.2fs\n", path, len(tr.Events), len(cands), *hatchFrom, rec.New, rec.SearchSeconds)
		}
		if i == 0 {
			res.Trace = path
		}
		res.Events += rec.Events
		res.Goroutines, res.SharedVars = max(res.Goroutines, goroutines), max(res.SharedVars, shared)
		res.RecordSeconds += rec.RecordSeconds
		res.SearchSeconds += rec.SearchSeconds
		res.Recordings = append(res.Recordings, rec)
	}
	res.Predicted = len(groups)

	// Hatch: each prediction along its first clip; then, round by round,
	// those not yet confirmed along the clip of the next recording that
	// predicted them.
	start := time.Now()
	per := *hatchRuns
	for round := 0; ; round++ {
		var todo []int
		for i, g := range groups {
			if round < len(g.alts) && !g.confirmed() {
				todo = append(todo, i)
			}
		}
		if len(todo) == 0 {
			break
		}
		got := make([][]HatchRun, len(todo))
		for j := range got {
			got[j] = make([]HatchRun, per)
		}
		prog.printf("round %d: %d clips, %d runs each, %d at a time", round+1, len(todo), per, *hatchJobs)
		var progMu sync.Mutex
		left := make([]int, len(todo))
		runErr := inParallel(len(todo)*per, *hatchJobs, func(n int) error {
			j, k := n/per, n%per
			i := todo[j]
			cd := groups[i].alts[round]
			seed := *hatchSeed + uint64(k)
			prefix := filepath.Join(outDir, fmt.Sprintf("a%d-%d", i+1, seed))
			if round > 0 {
				prefix = filepath.Join(outDir, fmt.Sprintf("a%d-r%d-%d", i+1, cd.recording+1, seed))
			}
			r, err := hatchControlled(t, testArgs, cd, seed, prefix)
			if len(recs) > 1 {
				r.Recording = cd.recording + 1
			}
			got[j][k] = r
			progMu.Lock()
			if left[j]++; left[j] == per {
				n := 0
				for _, r := range got[j] {
					if r.Confirmed {
						n++
					}
				}
				prog.printf("clip %d/%d (prediction %d, %s %s): %d runs, %d confirmed", j+1, len(todo), i+1, cd.Kind, cd.Pattern, per, n)
			}
			progMu.Unlock()
			return err
		})
		if runErr != nil {
			c.errorf("%v", runErr)
			return exitError
		}
		for j, i := range todo {
			groups[i].runs = append(groups[i].runs, got[j])
		}
	}
	if *hatchAtoms {
		// A recording of its own, with the tests' names (the clips'
		// recordings have none), so that each region's runs run only the
		// tests that showed it.
		path := filepath.Join(outDir, "atomicity.rkt")
		if err := recordNamed(t, testArgs, path, -1, 0, *hatchTimeout); err != nil {
			c.errorf("%s: %v", t.Pkg, err)
			return exitError
		}
		var jobs []splitJob
		seen := map[string]bool{}
		for _, p := range append([]string{path}, traceList(res.Recordings)...) {
			if jobs, err = addSplits(jobs, seen, t, p); err != nil {
				c.errorf("%v", err)
				return exitError
			}
		}
		runs := max(*hatchRuns, 4)
		prog.printf("atomicity: %d split regions (AtomFuzzer), %d runs each, %d at a time", len(jobs), runs, *hatchJobs)
		results, err := atomFuzzRuns(jobs, testArgs, runs, *hatchSeed, *hatchJobs, *hatchTimeout, outDir, prog)
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		res.Splits = atomVerdicts(jobs, results, c.line.goTestArgs())
	}
	res.HatchSeconds = time.Since(start).Seconds()
	var shown []*hatchCand // per group, the alternative its verdict and page come from
	for _, g := range groups {
		verdict, cd := "pruned", g.alts[0]
		for k, alt := range g.alts {
			var rs []HatchRun // none if it was confirmed along an earlier clip
			if k < len(g.runs) {
				rs = g.runs[k]
			}
			v := verdictOf(alt, rs, observed[alt.recording])
			if v == "confirmed" || v == "observed" && verdict == "pruned" {
				verdict, cd = v, alt
			}
		}
		shown = append(shown, cd)
		ha := HatchAnomaly{Kind: cd.Kind, Pattern: cd.Pattern, Sites: cd.Sites, Vars: cd.Vars, Verdict: verdict, Runs: slices.Concat(g.runs...)}
		switch ha.Verdict {
		case "confirmed":
			res.Confirmed++
		case "observed":
			res.Observed++
		}
		if cd.anomaly != nil {
			cd.anomaly.Evidence = ha.Verdict
		}
		res.Anomalies = append(res.Anomalies, ha)
	}
	if *hatchHTML != "" && *hatchFrom == "pecan" {
		var as []anomaly.Anomaly
		for _, cd := range shown {
			as = append(as, *cd.anomaly)
		}
		title := res.Trace
		if len(res.Recordings) > 1 {
			title = fmt.Sprintf("%s and %d more recordings", res.Trace, len(res.Recordings)-1)
		}
		if err := writeClipPages(*hatchHTML, title, as); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	if *hatchJSON {
		if err := writeJSON(os.Stdout, res); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	} else {
		printHatch(os.Stdout, &res)
	}
	if res.Confirmed > 0 || res.Observed > 0 || slices.ContainsFunc(res.Splits, func(s AtomicitySplit) bool { return s.Verdict == "confirmed" }) {
		return exitRaces
	}
	return exitOK
}

// verdictOf is a prediction's verdict: confirmed when a run along its
// clip made it happen; otherwise observed when it is a race the recorded
// run itself had (observed: observedRaces); otherwise pruned.
func verdictOf(cd *hatchCand, runs []HatchRun, observed map[string]bool) string {
	for _, r := range runs {
		if r.Confirmed {
			return "confirmed"
		}
	}
	if cd.consecutive && len(cd.events) == 2 && observed[raceKey(cd.events[0].Site, cd.events[1].Site, cd.events[0].Obj)] {
		return "observed"
	}
	return "pruned"
}

func parseAnomalyKinds(c *command, s string) ([]anomaly.Kind, bool) {
	var kinds []anomaly.Kind
	for _, k := range strings.Split(s, ",") {
		switch k = strings.TrimSpace(k); k {
		case "":
		case "race", "atomicity", "asv":
			kinds = append(kinds, anomaly.Kind(k))
		default:
			c.errorf("unknown kind %q (want race, atomicity, asv)", k)
			return nil, false
		}
	}
	return kinds, true
}
