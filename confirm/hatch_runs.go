package confirm

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/racekit/racekit/sched"
)

// dedupEnv is the recording setting of every run. Without dedup each
// goroutine records the same events whatever the interleaving; rt's
// dedup forgets what it saw when a goroutine born in untraced code
// appears, at a time that depends on the schedule, and event positions
// shift.
func (h *hatcher) dedupEnv() string {
	if h.Dedup {
		return "RACEKIT_DEDUP=1"
	}
	return "RACEKIT_DEDUP=0"
}

// controlled runs the test binary along cd's clip under h.Control:
// with the anomaly's accesses under control, and (auto) once more with
// every access of the clip when the first run departed from it.
func (h *hatcher) controlled(cd *hatchCand, seed uint64, prefix string) (HatchRun, error) {
	if h.Control == "clip" && cd.wide != nil {
		r, err := h.one(cd.wide, seed, prefix)
		r.Control = "clip"
		return r, err
	}
	r, err := h.one(cd, seed, prefix)
	if err != nil || r.Confirmed || h.Control != "auto" || cd.wide == nil || !strings.HasPrefix(r.Reason, "departed") {
		return r, err
	}
	w, err := h.one(cd.wide, seed, prefix+"w")
	if err != nil {
		return r, err
	}
	w.Control = "clip"
	if w.Confirmed {
		w.Seconds += r.Seconds
		return w, nil
	}
	r.Reason += "; with every access of the clip under control: " + w.Reason
	r.Seconds += w.Seconds
	return r, nil
}

// one runs the test binary once along cd's clip.
func (h *hatcher) one(cd *hatchCand, seed uint64, prefix string) (HatchRun, error) {
	clipPath, pairPath := prefix+".clip", prefix+".pair"
	if err := writeClip(clipPath, cd.steps); err != nil {
		return HatchRun{}, err
	}
	if err := os.WriteFile(pairPath, []byte(cd.pair().String()+"\n"), 0o666); err != nil {
		return HatchRun{}, err
	}
	env := []string{
		"RACEKIT_SCHED=clip",
		"RACEKIT_SEED=" + strconv.FormatUint(seed, 10),
		"RACEKIT_SCHEDULE_IN=" + clipPath,
		"RACEKIT_PAIR_FILE=" + pairPath,
		"RACEKIT_CLIP_STOP=1",
		"RACEKIT_TRACE=" + prefix + ".rkt",
		h.dedupEnv(),
	}
	if cd.virtual {
		env = append(env, "RACEKIT_SCHED_TIME=virtual")
	}
	r, err := controlledRun(h.t, h.TestArgs, env, prefix+".sched", h.Timeout, nil)
	hr := HatchRun{Seed: seed, Outcome: r.Outcome, Detail: r.Detail, Steps: r.Steps, Seconds: r.Elapsed.Seconds()}
	if err != nil {
		return hr, err
	}
	hr.Confirmed, hr.Reason = hatched(cd, r.Schedule)
	return hr, nil
}

// hatched decides from a run's schedule whether it made the anomaly
// happen: no goroutine departed from the clip, and each anomaly event ran
// as a scheduling point (the point of its goroutine whose segment holds
// the event: an access at its site), in pattern order, back to back for a
// race, with the same variables equal (and different ones different) as
// in the recorded run.
func hatched(cd *hatchCand, s *sched.Schedule) (bool, string) {
	if d := s.NotesOf("departure"); len(d) > 0 {
		return false, "departed from the clip: " + d[0]
	}
	pos := make([]int, len(cd.events))
	objs := make([]uint64, len(cd.events))
	for k, e := range cd.events {
		pos[k] = -1
		best := -1
		for i, st := range s.Steps {
			if st.G == e.G && st.Ev >= 0 && st.Ev <= e.Ev && (best < 0 || st.Ev >= s.Steps[best].Ev) {
				best = i
			}
		}
		if best < 0 {
			return false, fmt.Sprintf("%s never reached position %d (%s)", e.G, e.Ev, e.Site)
		}
		st := s.Steps[best]
		if !st.Kind.IsAccess() || !sched.SameSite(st.Site, e.Site) {
			return false, fmt.Sprintf("%s ran %s#%d %s %s where the clip has its %s at %s", e.G, st.G, st.N, st.Kind, st.Site, e.Kind, e.Site)
		}
		pos[k], objs[k] = best, st.Obj
	}
	for k := 1; k < len(pos); k++ {
		if pos[k] <= pos[k-1] {
			return false, fmt.Sprintf("anomaly events %d and %d ran in the other order", k, k+1)
		}
		if cd.consecutive {
			if why := between(s.Steps, pos[k-1], pos[k]); why != "" {
				return false, fmt.Sprintf("anomaly events %d and %d did not run back to back: %s", k, k+1, why)
			}
		}
	}
	for a := range cd.events {
		for b := a + 1; b < len(cd.events); b++ {
			if (cd.events[a].Obj == cd.events[b].Obj) != (objs[a] == objs[b]) {
				return false, fmt.Sprintf("anomaly events %d and %d: the variables differ from the recorded run's", a+1, b+1)
			}
		}
	}
	return true, ""
}

// between says why the steps strictly between positions a and b of a run
// keep the access at a from being adjacent to the one at b, "" if every
// one of them commutes with a's (another goroutine's step that is not a
// conflicting access to a's variable), so that running them first gives
// an equivalent run in which the two accesses are back to back. A later
// instance of the first access (the same statement on the same variable,
// by any goroutine but the second's: the statement in a loop, or every
// worker's write of a shared field) takes its place: the same pair of
// statements then races, from that instance on.
func between(steps []sched.Step, a, b int) string {
	e, f := steps[a], steps[b]
	for _, st := range steps[a+1 : b] {
		switch {
		case st.G == f.G && st.Kind == f.Kind && st.Obj == f.Obj && sched.SameSite(st.Site, f.Site):
			return "" // an earlier instance of the second access: that one raced
		case st.G != f.G && st.Kind == e.Kind && st.Obj == e.Obj && sched.SameSite(st.Site, e.Site):
			e = st // a later instance of the first access
		case st.G == e.G:
			return fmt.Sprintf("%s ran %s %s in between", st.G, st.Kind, st.Site)
		case st.Kind.IsAccess() && st.Obj == e.Obj && (st.Kind == sched.KindWrite || e.Kind == sched.KindWrite):
			return fmt.Sprintf("%s ran %s %s on the same variable in between", st.G, st.Kind, st.Site)
		}
	}
	return ""
}

// PrintHatch writes racekit hatch's result as text.
func PrintHatch(w io.Writer, r *HatchResult) {
	fmt.Fprintf(w, "racekit hatch: %s: %d events recorded, %d predictions (%s), %d confirmed, %d observed, %d pruned\n",
		r.Package, r.Events, r.Predicted, r.From, r.Confirmed, r.Observed, r.Predicted-r.Confirmed-r.Observed)
	as := append([]HatchAnomaly(nil), r.Anomalies...)
	sort.SliceStable(as, func(i, j int) bool { return as[i].Verdict < as[j].Verdict })
	for _, a := range as {
		fmt.Fprintf(w, "\n%-9s %s %s: %s\n", strings.ToUpper(a.Verdict), a.Kind, a.Pattern, strings.Join(relSites(a.Sites), " -> "))
		if len(a.Vars) > 0 {
			fmt.Fprintf(w, "          variables: %s\n", strings.Join(a.Vars, ", "))
		}
		if a.Verdict == "observed" {
			fmt.Fprintf(w, "          the recorded run had this race (the accesses unordered by happens-before); no run along the clip made it happen back to back:\n")
		}
		for _, run := range a.Runs {
			what := run.Outcome
			if run.Detail != "" {
				what += ": " + run.Detail
			}
			if run.Confirmed {
				fmt.Fprintf(w, "          seed %d: happened; the program then: %s\n", run.Seed, what)
			} else {
				fmt.Fprintf(w, "          seed %d: %s (program: %s)\n", run.Seed, run.Reason, what)
			}
		}
	}
	if len(r.Splits) > 0 {
		fmt.Fprintf(w, "\nAtomFuzzer, on the atomic regions whose critical sections on one lock are split in two:\n")
		PrintAtomicity(w, "hatch", r.Splits)
	}
	fmt.Fprintf(w, "\nrecord %.2fs, search %.2fs, hatch %.2fs\n", r.RecordSeconds, r.SearchSeconds, r.HatchSeconds)
}

func relSites(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = relSite(s)
	}
	return out
}

// RecordSpec is how one recording runs: under the controlled random
// scheduler with Seed (0: under Go's scheduler), each access a scheduling
// point with probability Preempt.
type RecordSpec struct {
	Seed    uint64
	Preempt float64
}

// RecordSpecs returns each recording's spec from -record-seed,
// -recordings and -record-preempt: a single seed N gives N, N+1, ... (0
// each time for Go's scheduler); a list gives its seeds, one recording
// each, where "N/P" is seed N with preemption P instead of
// -record-preempt's.
func RecordSpecs(list string, recordings int, preempt float64) ([]RecordSpec, error) {
	bad := fmt.Errorf("-record-seed %q: want a seed, or a comma list of seeds, each N or N/P (P: its preemption probability)", list)
	var specs []RecordSpec
	for _, f := range strings.Split(list, ",") {
		seed, pre, hasPre := strings.Cut(strings.TrimSpace(f), "/")
		n, err := strconv.ParseUint(seed, 10, 64)
		if err != nil {
			return nil, bad
		}
		sp := RecordSpec{Seed: n}
		if n != 0 {
			sp.Preempt = preempt
		}
		if hasPre {
			p, err := strconv.ParseFloat(pre, 64)
			if err != nil || p < 0 || p > 1 || n == 0 {
				return nil, bad
			}
			sp.Preempt = p
		}
		specs = append(specs, sp)
	}
	if len(specs) > 1 {
		if recordings != 1 && recordings != len(specs) {
			return nil, fmt.Errorf("-record-seed lists %d seeds, -recordings says %d", len(specs), recordings)
		}
		return specs, nil
	}
	for i := 1; i < recordings; i++ {
		sp := specs[0]
		if sp.Seed != 0 {
			sp.Seed += uint64(i)
		}
		specs = append(specs, sp)
	}
	return specs, nil
}

// traceList is the recordings' trace files.
func traceList(recs []HatchRecording) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Trace)
	}
	return out
}
