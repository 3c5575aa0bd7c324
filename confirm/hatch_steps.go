package confirm

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/racekit/racekit/detect/anomaly"
	"github.com/racekit/racekit/trace"
)

// The steps of Hatch, in the order it takes them.

// record records and predicts once per recording, since one recorded run
// shows only the paths it took (-recordings).
func (h *hatcher) record() error {
	for i, spec := range h.Recordings {
		if err := h.recordOne(i, spec); err != nil {
			return err
		}
	}
	h.res.Predicted = len(h.groups)
	return nil
}

// recordOne is recording i: its trace, its predictions grouped with the
// earlier recordings', and its share of the result's totals.
func (h *hatcher) recordOne(i int, spec RecordSpec) error {
	start := time.Now()
	path, err := h.recordTrace(i, spec)
	if err != nil {
		return err
	}
	rec := HatchRecording{Trace: path, Seed: spec.Seed, Preempt: spec.Preempt, RecordSeconds: time.Since(start).Seconds()}
	if h.Trace != "" {
		rec.Seed, rec.Preempt, rec.RecordSeconds = 0, 0, 0
	}
	tr, err := ReadTrace(path, h.Warn)
	if err != nil {
		return err
	}
	rec.Events = len(tr.Events)
	goroutines, shared := traceShape(tr)

	start = time.Now()
	cands, err := h.predict(tr)
	if err != nil {
		return err
	}
	rec.SearchSeconds = time.Since(start).Seconds()
	rec.Predicted = len(cands)
	virtual := spec.Seed != 0 && h.Trace == "" && os.Getenv("RACEKIT_SCHED_TIME") != "real"
	rec.New = h.group(i, virtual, cands)
	h.observed = append(h.observed, observedRaces(tr))
	h.Progress.Printf("recording %d/%d: %d events, %d predictions (%s, %d new)", i+1, len(h.Recordings), len(tr.Events), len(cands), h.From, rec.New)
	if h.Verbose {
		fmt.Fprintf(os.Stderr, "racekit hatch: %s: %d events, %d predictions (%s, %d new) in %.2fs\n", path, len(tr.Events), len(cands), h.From, rec.New, rec.SearchSeconds)
	}
	res := &h.res
	if i == 0 {
		res.Trace = path
	}
	res.Events += rec.Events
	res.Goroutines, res.SharedVars = max(res.Goroutines, goroutines), max(res.SharedVars, shared)
	res.RecordSeconds += rec.RecordSeconds
	res.SearchSeconds += rec.SearchSeconds
	res.Recordings = append(res.Recordings, rec)
	return nil
}

// recordTrace runs the tests to record recording i as spec says, every
// access recorded (dedupEnv), and returns its trace file; with -use-trace
// it records nothing and returns that file.
func (h *hatcher) recordTrace(i int, spec RecordSpec) (string, error) {
	if h.Trace != "" {
		return h.Trace, nil
	}
	path := filepath.Join(h.outDir, "recorded.rkt")
	if i > 0 {
		path = filepath.Join(h.outDir, fmt.Sprintf("recorded-%d.rkt", i+1))
	}
	env := []string{h.dedupEnv()}
	if spec.Seed != 0 {
		env = append(env, randomSchedEnv(spec.Seed)...)
		if spec.Preempt > 0 {
			env = append(env, preemptEnv(spec.Preempt))
		}
	}
	if err := recordTests(h.t, h.TestArgs, env, path, h.Timeout); err != nil {
		return "", fmt.Errorf("%s: %w", h.t.Pkg, err)
	}
	return path, nil
}

// predict is the predictions -from makes on one recorded trace, each with
// its clip.
func (h *hatcher) predict(tr *trace.Trace) ([]*hatchCand, error) {
	if h.From == "pecan" {
		return anomalyCands(tr, anomaly.Find(tr, h.Patterns, h.Anomaly)), nil
	}
	return witnessCands(tr, h.From)
}

// group adds recording i's predictions to the distinct ones (hatchCand.key):
// one made before gains a clip to try next, a new one a group of its own.
// It returns how many were new.
func (h *hatcher) group(i int, virtual bool, cands []*hatchCand) int {
	n := 0
	for _, cd := range cands {
		cd.recording, cd.virtual = i, virtual
		if cd.wide != nil {
			cd.wide.virtual = virtual
		}
		k := cd.key()
		if g := h.byKey[k]; g != nil {
			g.alts = append(g.alts, cd)
			continue
		}
		n++
		g := &hatchGroup{index: len(h.groups) + 1, alts: []*hatchCand{cd}}
		h.byKey[k] = g
		h.groups = append(h.groups, g)
	}
	return n
}

// hatchClips runs each prediction along its first clip; then, round by
// round, those not yet confirmed along the clip of the next recording
// that predicted them.
func (h *hatcher) hatchClips() error {
	for round := 0; ; round++ {
		var todo []int
		for i, g := range h.groups {
			if round < len(g.alts) && !g.confirmed() {
				todo = append(todo, i)
			}
		}
		if len(todo) == 0 {
			return nil
		}
		got, err := h.hatchRound(round, todo)
		if err != nil {
			return err
		}
		for j, i := range todo {
			h.groups[i].runs = append(h.groups[i].runs, got[j])
		}
	}
}

// hatchRound runs the groups todo along their clip number round, -runs
// runs each (seeds -seed, -seed+1, ...), -j at a time, with a progress
// line per clip done; got[j] are the runs of group todo[j].
func (h *hatcher) hatchRound(round int, todo []int) ([][]HatchRun, error) {
	per := h.Runs
	got := make([][]HatchRun, len(todo))
	for j := range got {
		got[j] = make([]HatchRun, per)
	}
	h.Progress.Printf("round %d: %d clips, %d runs each, %d at a time", round+1, len(todo), per, h.Jobs)
	var progMu sync.Mutex
	left := make([]int, len(todo))
	err := inParallel(len(todo)*per, h.Jobs, func(n int) error {
		j, k := n/per, n%per
		i := todo[j]
		cd := h.groups[i].alts[round]
		seed := h.Seed + uint64(k)
		prefix := filepath.Join(h.outDir, fmt.Sprintf("a%d-%d", i+1, seed))
		if round > 0 {
			prefix = filepath.Join(h.outDir, fmt.Sprintf("a%d-r%d-%d", i+1, cd.recording+1, seed))
		}
		r, err := h.controlled(cd, seed, prefix)
		if len(h.Recordings) > 1 {
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
			h.Progress.Printf("clip %d/%d (prediction %d, %s %s): %d runs, %d confirmed", j+1, len(todo), i+1, cd.Kind, cd.Pattern, per, n)
		}
		progMu.Unlock()
		return err
	})
	return got, err
}

// fuzzSplits runs AtomFuzzer (-atomfuzz) on the atomic regions split in
// two on one lock, for the check-then-act PECAN cannot predict when the
// recorded run never showed the second goroutine's act.
func (h *hatcher) fuzzSplits() error {
	// A recording of its own, with the tests' names (the clips'
	// recordings have none), so that each region's runs run only the
	// tests that showed it.
	path := filepath.Join(h.outDir, "atomicity.rkt")
	if err := recordNamed(h.t, h.TestArgs, path, -1, 0, h.Timeout); err != nil {
		return fmt.Errorf("%s: %w", h.t.Pkg, err)
	}
	var jobs []splitJob
	seen := map[string]bool{}
	for _, p := range append([]string{path}, traceList(h.res.Recordings)...) {
		var err error
		if jobs, err = addSplits(jobs, seen, h.t, p, h.MaxSplits); err != nil {
			return err
		}
	}
	jobs = inShard(h.Shard, jobs, func(jb splitJob) string { return shardKey(jb.t.Pkg, jb.split.String()) })
	runs := max(h.Runs, 4)
	h.Progress.Printf("atomicity: %d split regions (AtomFuzzer), %d runs each, %d at a time", len(jobs), runs, h.Jobs)
	results, err := atomFuzzRuns(jobs, h.TestArgs, runs, h.Seed, h.Jobs, h.Timeout, h.outDir, h.Progress)
	if err != nil {
		return err
	}
	h.res.Splits = atomVerdicts(jobs, results, h.GoFlags)
	return nil
}

// classify gives each distinct prediction the best verdict of its clips
// (confirmed, then observed, then pruned; verdictOf) and counts them: the
// alternative it came from is the one shown, and its anomaly carries it.
func (h *hatcher) classify() {
	for _, g := range h.groups {
		verdict, cd := "pruned", g.alts[0]
		for k, alt := range g.alts {
			var rs []HatchRun // none if it was confirmed along an earlier clip
			if k < len(g.runs) {
				rs = g.runs[k]
			}
			v := verdictOf(alt, rs, h.observed[alt.recording])
			if v == "confirmed" || v == "observed" && verdict == "pruned" {
				verdict, cd = v, alt
			}
		}
		h.shown = append(h.shown, cd)
		ha := HatchAnomaly{Index: g.index, Kind: cd.Kind, Pattern: cd.Pattern, Sites: cd.Sites, Vars: cd.Vars, Verdict: verdict, Runs: slices.Concat(g.runs...)}
		switch ha.Verdict {
		case "confirmed":
			h.res.Confirmed++
		case "observed":
			h.res.Observed++
		}
		if cd.anomaly != nil {
			cd.anomaly.Evidence = ha.Verdict
		}
		h.res.Anomalies = append(h.res.Anomalies, ha)
	}
}

// shownAnomalies are the anomalies of the distinct predictions, each from
// the alternative its verdict came from, with the verdict as evidence
// (-from=pecan; the other sources have no anomalies).
func (h *hatcher) shownAnomalies() []anomaly.Anomaly {
	var as []anomaly.Anomaly
	for _, cd := range h.shown {
		if cd.anomaly != nil {
			as = append(as, *cd.anomaly)
		}
	}
	return as
}

// Found reports whether an anomaly was confirmed, a race observed or a
// split region confirmed (racekit hatch's exit status 66).
func (r *HatchResult) Found() bool {
	return r.Confirmed > 0 || r.Observed > 0 || slices.ContainsFunc(r.Splits, func(s AtomicitySplit) bool { return s.Verdict == "confirmed" })
}
