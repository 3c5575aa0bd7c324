// Command fuzz reproduces RaceFuzzer's Table 1 (Sen, PLDI'08) over
// racekit's subject programs (bench/subjects, ground truth in bench/truth):
//
//	go build -o /tmp/rk ./cmd/racekit
//	go run ./bench/fuzz -racekit /tmp/rk -runs 20 -j 2 -json bench/results/fuzz/table1.json > bench/results/fuzz/table1.md
//
// For each subject it runs racekit fuzz on the subject's tests (phase 1,
// -phase1: by default the union of hybrid's pairs over -record recorded
// runs and -record-random more under the controlled random scheduler, and
// racekit vet's static pairs, each pair labelled with the sources
// that found it; phase 2: -runs controlled runs per pair)
// and reports the paper's columns: the average runtime of a normal run
// (the uninstrumented test binary), of hybrid detection (the recorded run
// plus the hybrid analysis of its trace) and of one RaceFuzzer run; the
// potential pairs phase 1 reports (and how many came from hybrid, from
// vet, from both), the pairs RaceFuzzer confirms (created
// in at least one run) and the known races (race ids of the ground
// truth); the pairs for which a run panicked, failed a test or deadlocked
// (RF) against the distinct failures of as many plain runs of the
// uninstrumented test binary (Simple, the default scheduler); and the
// mean probability of creating a confirmed race; and, with -replay N
// (10 by default), whether every confirmed outcome replays: the first seed
// of each outcome that created its race is replayed N times (racekit fuzz
// --replay) and the outcome counts as exact when every replay had the
// original run's schedule, step for step.
//
// Scoring against the ground truth: a confirmed pair is true when both of
// its lines carry one race id (a line paired with itself only if marked
// self), false otherwise. The targets are every race id confirmed by some
// pair and no false pair confirmed, whichever source proposed it (vet's
// false pairs included); the missed ids are listed with why (phase 1
// never reported a pair of the id, or it was never created).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/racekit/racekit/bench/harness"
	"github.com/racekit/racekit/bench/truth"
	"github.com/racekit/racekit/confirm"
)

// Hybrid's time is hybrid's share of racekit fuzz's phase 1 time divided
// by the recorded runs; vet's is its share (one analysis per subject).

// Row is one subject's line of the table.
type Row struct {
	Subject    string   `json:"subject"`
	Lines      int      `json:"lines"`
	NormalSec  float64  `json:"normal_sec"`
	HybridSec  float64  `json:"hybrid_sec"`
	VetSec     float64  `json:"vet_sec"`
	RFSec      float64  `json:"rf_sec"` // one controlled run, averaged
	Pairs      int      `json:"phase1_pairs"`
	FromHybrid int      `json:"pairs_hybrid"` // pairs hybrid found (some vet found too)
	FromVet    int      `json:"pairs_vet"`    // pairs vet found
	FromBoth   int      `json:"pairs_both"`   // pairs both found
	Real       int      `json:"rf_real"`
	RealTrue   int      `json:"rf_real_true"`
	RealFalse  []string `json:"rf_real_false,omitempty"` // confirmed pairs outside the ground truth, with their sources
	// Pairs no run created that hb reported on a recorded run of phase 1
	// (racekit fuzz's verdict "observed"); those outside the ground truth.
	Observed      int      `json:"rf_observed"`
	ObservedFalse []string `json:"rf_observed_false,omitempty"`
	Phase1False   int      `json:"phase1_false"` // potential pairs that are not true pairs
	HybridFalse   int      `json:"hybrid_false"` // of which hybrid found
	VetFalse      int      `json:"vet_false"`    // of which vet found
	Known         int      `json:"known"`
	KnownFound    int      `json:"known_confirmed"`
	KnownObserved int      `json:"known_observed"`                            // ids not confirmed that an observed pair covers
	VetOnlyIDs    []string `json:"ids_confirmed_only_by_vet_pairs,omitempty"` // ids no hybrid pair confirmed
	Missed        []string `json:"missed,omitempty"`
	ExcRF         int      `json:"exceptions_rf"`
	ExcRFDetail   []string `json:"exceptions_rf_detail,omitempty"`
	ExcBaseline   []string `json:"exceptions_also_baseline,omitempty"` // failures the baseline runs show too
	ExcSimple     int      `json:"exceptions_simple"`
	SimpleRuns    int      `json:"simple_runs"`
	SimpleDetail  []string `json:"exceptions_simple_detail,omitempty"`
	Probability   float64  `json:"probability"` // mean over confirmed true pairs
	EscapeRuns    int      `json:"escape_runs"`
	FuzzRuns      int      `json:"fuzz_runs"`
	FuzzWallSec   float64  `json:"fuzz_wall_sec"`
	// Replayed outcomes (those that created a race, first seed, -replay
	// times each), how many of them replayed exactly every time, and how
	// the others differed.
	ReplayOutcomes int      `json:"replay_outcomes"`
	ReplayExact    int      `json:"replay_exact"`
	ReplayDiffs    []string `json:"replay_diffs,omitempty"`
	Error          string   `json:"error,omitempty"`
}

func main() {
	rk := flag.String("racekit", "racekit", "the racekit binary")
	runs := flag.Int("runs", 20, "controlled runs per pair")
	timeout := flag.Duration("timeout", 30*time.Second, "time limit of one controlled run")
	record := flag.Int("record", 3, "phase 1: recorded runs per subject (racekit fuzz --record)")
	recordRandom := flag.Int("record-random", 10, "phase 1: more recorded runs per subject under the random scheduler (racekit fuzz --record-random)")
	phase1 := flag.String("phase1", "hybrid,vet", "phase 1 sources (racekit fuzz --phase1)")
	jobs := flag.Int("j", 2, "runs in parallel")
	simpleCap := flag.Int("simple-cap", 400, "at most this many plain runs per subject")
	replay := flag.Int("replay", 10, "replay each confirmed outcome's first seed this many times (racekit fuzz --replay)")
	jsonOut := flag.String("json", "", "also write the rows as JSON to FILE")
	root := flag.String("subjects", "bench/subjects", "the subjects' directory")
	flag.Parse()
	rows, err := harness.EachSubject("fuzz", *root, flag.Args(), func(s *truth.Subject, tmp string) Row {
		return subject(s, *rk, *phase1, *record, *recordRandom, *runs, *jobs, *simpleCap, *replay, *timeout, tmp)
	})
	if err != nil {
		fatal(err)
	}
	if err := harness.WriteJSONFile(*jsonOut, rows); err != nil {
		fatal(err)
	}
	table(os.Stdout, rows, *runs, *record, *recordRandom, *replay, *phase1)
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "bench/fuzz: %v\n", err)
	os.Exit(1)
}

func subject(s *truth.Subject, rk, phase1 string, record, recordRandom, runs, jobs, simpleCap, replay int, timeout time.Duration, tmp string) Row {
	r := Row{Subject: s.Name, Lines: s.Lines}
	pkg := "./" + filepath.ToSlash(harness.RelToWd(s.Dir))
	fr, ok := runFuzz(&r, rk, phase1, record, recordRandom, runs, jobs, replay, timeout, pkg)
	if !ok {
		return r
	}
	score(&r, s, &fr)
	runPlain(&r, s, pkg, tmp, simpleCap)
	return r
}

// runFuzz runs racekit fuzz on pkg and returns its result, with r's wall
// time and phase 1 source times filled in; false (r.Error set) when its
// output is not a result.
func runFuzz(r *Row, rk, phase1 string, record, recordRandom, runs, jobs, replay int, timeout time.Duration, pkg string) (confirm.FuzzResult, bool) {
	// RaceFuzzer: phase 1 and phase 2.
	start := time.Now()
	cmd := exec.Command(rk, "fuzz", "--json", "--phase1", phase1, "--record", fmt.Sprint(record), "--record-random", fmt.Sprint(recordRandom), "--runs", fmt.Sprint(runs), "-j", fmt.Sprint(jobs), "--replay", fmt.Sprint(replay), "--timeout", timeout.String(), pkg)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r.FuzzWallSec = time.Since(start).Seconds()
	var fr confirm.FuzzResult
	if jerr := json.Unmarshal(out.Bytes(), &fr); jerr != nil {
		r.Error = fmt.Sprintf("racekit fuzz: %v: %s", err, strings.TrimSpace(errb.String()))
		return fr, false
	}
	if sec, ok := fr.Phase1SourceSeconds["hybrid"]; ok {
		r.HybridSec = sec / float64(max(record, 1)+recordRandom)
	}
	r.VetSec = fr.Phase1SourceSeconds["vet"]
	return fr, true
}

// scoring holds what scoring phase 1's pairs against the ground truth
// gathers besides the row's counts: the race ids each kind of pair covers.
type scoring struct {
	expected  map[truth.Pair]*truth.Entry
	confirmed map[string]bool
	observed  map[string]bool
	byHybrid  map[string]bool // ids a confirmed pair of hybrid's covers
	reported  map[string]bool
	probs     []float64
	rfSec     float64
}

// score fills in r's columns of phase 1's pairs, of RaceFuzzer's runs
// and of the known races, scoring fr's pairs against s's ground truth.
func score(r *Row, s *truth.Subject, fr *confirm.FuzzResult) {
	sc := scoring{
		expected:  map[truth.Pair]*truth.Entry{},
		confirmed: map[string]bool{},
		observed:  map[string]bool{},
		byHybrid:  map[string]bool{},
		reported:  map[string]bool{},
	}
	for _, e := range s.Entries(truth.KindRace) {
		r.Known++
		for _, p := range e.Pairs() {
			sc.expected[p] = e
		}
	}
	for _, p := range fr.Pairs {
		sc.pair(r, s, p)
	}
	if r.FuzzRuns > 0 {
		r.RFSec = sc.rfSec / float64(r.FuzzRuns)
	}
	sc.known(r, s)
	if len(sc.probs) > 0 {
		sum := 0.0
		for _, p := range sc.probs {
			sum += p
		}
		r.Probability = sum / float64(len(sc.probs))
	}
}

// pair counts one of phase 1's pairs and its runs in r: its sources, true
// or false, confirmed or observed, and its outcomes' failures and replays.
func (sc *scoring) pair(r *Row, s *truth.Subject, p confirm.FuzzPair) {
	r.Pairs++
	hyb, vet := slices.Contains(p.Sources, "hybrid"), slices.Contains(p.Sources, "vet")
	if hyb {
		r.FromHybrid++
	}
	if vet {
		r.FromVet++
	}
	if hyb && vet {
		r.FromBoth++
	}
	r.FuzzRuns += p.Runs
	sc.rfSec += p.Seconds
	if p.Escapes > 0 {
		r.EscapeRuns += p.Escapes
	}
	tp, ok := s.PairOf(p.Pair)
	e := sc.expected[tp]
	if !ok || e == nil {
		r.Phase1False++
		if hyb {
			r.HybridFalse++
		}
		if vet {
			r.VetFalse++
		}
	} else {
		sc.reported[e.ID] = true
	}
	if !p.Real {
		if p.Observed {
			r.Observed++
			if e == nil {
				r.ObservedFalse = append(r.ObservedFalse, p.Pair+" ["+strings.Join(p.Sources, ",")+"]")
			} else {
				sc.observed[e.ID] = true
			}
		}
		return
	}
	r.Real++
	if e == nil {
		r.RealFalse = append(r.RealFalse, p.Pair+" ["+strings.Join(p.Sources, ",")+"]")
	} else {
		r.RealTrue++
		sc.confirmed[e.ID] = true
		if hyb {
			sc.byHybrid[e.ID] = true
		}
		sc.probs = append(sc.probs, p.Probability)
	}
	outcomes(r, tp, p.Outcomes)
}

// outcomes counts a confirmed pair's outcomes in r: their replays, and the
// failures they led to, apart from those the baseline shows too.
func outcomes(r *Row, tp truth.Pair, outs []confirm.FuzzOutcome) {
	var exc, also []string
	for _, o := range outs {
		if o.Replayed > 0 {
			r.ReplayOutcomes++
			if o.Identical == o.Replayed {
				r.ReplayExact++
			} else {
				r.ReplayDiffs = append(r.ReplayDiffs, fmt.Sprintf("%s, %q -> %s, seed %d: %d of %d replays identical (%s)",
					tp, o.Resolution, o.Outcome, o.Seeds[0], o.Identical, o.Replayed, o.ReplayDiff))
			}
		}
		if o.Outcome == "none" {
			continue
		}
		d := fmt.Sprintf("%s %s after %q (%d runs)", o.Outcome, o.Detail, o.Resolution, o.Runs)
		if o.Baseline > 0 {
			// The baseline (controlled, no pair) fails so too.
			also = append(also, d+fmt.Sprintf(", also in %d baseline runs", o.Baseline))
		} else {
			exc = append(exc, d)
		}
	}
	if len(exc) > 0 {
		r.ExcRF++
		r.ExcRFDetail = append(r.ExcRFDetail, tp.String()+": "+strings.Join(exc, "; "))
	}
	if len(also) > 0 {
		r.ExcBaseline = append(r.ExcBaseline, tp.String()+": "+strings.Join(also, "; "))
	}
}

// known counts in r the known races confirmed (and those only through a
// pair vet proposed), and lists the others with why they were missed.
func (sc *scoring) known(r *Row, s *truth.Subject) {
	for _, e := range s.Entries(truth.KindRace) {
		if sc.confirmed[e.ID] {
			r.KnownFound++
			if !sc.byHybrid[e.ID] {
				r.VetOnlyIDs = append(r.VetOnlyIDs, e.ID)
			}
			continue
		}
		why := "phase 1 reported no pair of it"
		switch {
		case sc.observed[e.ID]:
			r.KnownObserved++
			why = "never created; observed: hb reported it on a recorded run"
		case sc.reported[e.ID]:
			why = "never created"
		}
		if e.Flaky {
			why += ", flaky"
		}
		r.Missed = append(r.Missed, e.ID+" ("+why+")")
	}
}

// runPlain builds pkg's uninstrumented test binary and fills in r's Normal
// and Simple columns from its runs (r.Error set if it does not build).
func runPlain(r *Row, s *truth.Subject, pkg, tmp string, simpleCap int) {
	// Normal runs and the default scheduler (Simple): the uninstrumented
	// test binary, as many runs as RaceFuzzer made (at most simpleCap).
	bin := filepath.Join(tmp, s.Name+".plain.test")
	if b, err := exec.Command("go", "test", "-c", "-o", bin, pkg).CombinedOutput(); err != nil {
		r.Error = fmt.Sprintf("go test -c: %v: %s", err, b)
		return
	}
	n := min(max(r.FuzzRuns, 3), simpleCap)
	r.SimpleRuns = n
	var total time.Duration
	failures := map[string]bool{}
	for i := 0; i < n; i++ {
		c := exec.Command(bin, "-test.count=1")
		c.Dir = s.Dir
		t0 := time.Now()
		o, err := c.CombinedOutput()
		total += time.Since(t0)
		if err != nil {
			failures[failure(string(o))] = true
		}
	}
	r.NormalSec = total.Seconds() / float64(n)
	for f := range failures {
		r.SimpleDetail = append(r.SimpleDetail, f)
	}
	sort.Strings(r.SimpleDetail)
	r.ExcSimple = len(failures)
}

// failure names a failed plain run by its panic or failing tests.
func failure(out string) string {
	if i := strings.Index(out, "panic: "); i >= 0 {
		line := out[i:]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		return strings.TrimSuffix(line, " [recovered]")
	}
	var fails []string
	for _, l := range strings.Split(out, "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "--- FAIL: ") {
			fails = append(fails, strings.Fields(strings.TrimPrefix(t, "--- FAIL: "))[0])
		}
	}
	if len(fails) > 0 {
		return "test failure: " + strings.Join(fails, ", ")
	}
	return "failed"
}

func table(w io.Writer, rows []Row, runs, record, recordRandom, replay int, phase1 string) {
	fmt.Fprintf(w, "# RaceFuzzer Table 1 over racekit's subjects\n\n")
	fmt.Fprintf(w, "%d controlled runs per pair; phase 1 is %s (racekit fuzz --phase1 %s; hybrid over %d recorded runs and %d under the controlled random scheduler). Runtimes in seconds: Normal is one run of the uninstrumented test binary, Hybrid the recorded run (every access traced) plus the hybrid analysis, Vet one static analysis of the subject, RF one controlled run (averaged over all runs of the subject). Races are distinct statement pairs; \"Phase 1 pairs\" is the union, with how many hybrid found, vet found, and both found; known is the ground truth's race ids; \"ids\" is how many of them a confirmed pair covers (\"vet only\": ids no confirmed hybrid pair covers). Observed: pairs no run created that hb reported on a recorded run of phase 1 (racekit fuzz's verdict \"observed\": a data race of that execution, typically a value published through a plain flag, which no interleaving brings next to its write), with how many are outside the ground truth; \"ids observed\" counts the ids not confirmed that such a pair covers. Exceptions: RF counts confirmed pairs for which a run panicked, failed or deadlocked in a way racekit fuzz's baseline (controlled runs without a pair) never did; Simple counts the distinct failures in as many plain runs. Probability: mean over confirmed true pairs of created/runs. Replays: the outcomes (resolution and what the run led to) of confirmed pairs, each replayed %d times from its first seed; exact when every replay had the original run's schedule step for step.\n\n", runs, phase1Words(phase1), phase1, record, recordRandom, replay)
	fmt.Fprintf(w, "| subject | SLOC | Normal | Hybrid | Vet | RF | Phase 1 pairs (hybrid / vet / both) | RF real | of which false | observed (false) | known | ids confirmed (vet only) | ids observed | Exc. RF | Exc. Simple (runs) | Probability | runs with escapes | replays exact / outcomes |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var tot Row
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(w, "| %s | %d | error: %s |||||||||||||||| \n", r.Subject, r.Lines, strings.ReplaceAll(r.Error, "\n", " "))
			continue
		}
		prob := "-"
		if r.RealTrue > 0 {
			prob = fmt.Sprintf("%.2f", r.Probability)
		}
		fmt.Fprintf(w, "| %s | %d | %.3f | %.3f | %.3f | %.3f | %d (%d / %d / %d) | %d | %d | %d (%d) | %d | %d (%d) | %d | %d | %d (%d) | %s | %d | %d / %d |\n",
			r.Subject, r.Lines, r.NormalSec, r.HybridSec, r.VetSec, r.RFSec, r.Pairs, r.FromHybrid, r.FromVet, r.FromBoth, r.Real, len(r.RealFalse), r.Observed, len(r.ObservedFalse), r.Known, r.KnownFound, len(r.VetOnlyIDs), r.KnownObserved,
			r.ExcRF, r.ExcSimple, r.SimpleRuns, prob, r.EscapeRuns, r.ReplayExact, r.ReplayOutcomes)
		tot.Lines += r.Lines
		tot.Pairs += r.Pairs
		tot.FromHybrid += r.FromHybrid
		tot.FromVet += r.FromVet
		tot.FromBoth += r.FromBoth
		tot.Real += r.Real
		tot.RealFalse = append(tot.RealFalse, r.RealFalse...)
		tot.Observed += r.Observed
		tot.ObservedFalse = append(tot.ObservedFalse, r.ObservedFalse...)
		tot.Known += r.Known
		tot.KnownFound += r.KnownFound
		tot.KnownObserved += r.KnownObserved
		tot.VetOnlyIDs = append(tot.VetOnlyIDs, r.VetOnlyIDs...)
		tot.ExcRF += r.ExcRF
		tot.ExcSimple += r.ExcSimple
		tot.Phase1False += r.Phase1False
		tot.HybridFalse += r.HybridFalse
		tot.VetFalse += r.VetFalse
		tot.EscapeRuns += r.EscapeRuns
		tot.FuzzRuns += r.FuzzRuns
		tot.ReplayOutcomes += r.ReplayOutcomes
		tot.ReplayExact += r.ReplayExact
	}
	fmt.Fprintf(w, "| **total** | %d | | | | | %d (%d / %d / %d) | %d | %d | %d (%d) | %d | %d (%d) | %d | %d | %d | | %d | %d / %d |\n\n", tot.Lines, tot.Pairs, tot.FromHybrid, tot.FromVet, tot.FromBoth, tot.Real, len(tot.RealFalse), tot.Observed, len(tot.ObservedFalse), tot.Known, tot.KnownFound, len(tot.VetOnlyIDs), tot.KnownObserved, tot.ExcRF, tot.ExcSimple, tot.EscapeRuns, tot.ReplayExact, tot.ReplayOutcomes)
	fmt.Fprintf(w, "%d controlled runs in all; %d phase 1 pairs are not true pairs of the ground truth (%d found by hybrid, %d by vet).\n\n", tot.FuzzRuns, tot.Phase1False, tot.HybridFalse, tot.VetFalse)
	fmt.Fprintf(w, "## Known races not confirmed\n\n")
	for _, r := range rows {
		if len(r.Missed) > 0 {
			fmt.Fprintf(w, "- %s: %s\n", r.Subject, strings.Join(r.Missed, "; "))
		}
	}
	fmt.Fprintf(w, "\n## Known races confirmed only through a pair vet proposed\n\n")
	for _, r := range rows {
		if len(r.VetOnlyIDs) > 0 {
			fmt.Fprintf(w, "- %s: %s\n", r.Subject, strings.Join(r.VetOnlyIDs, ", "))
		}
	}
	pairList(w, "Pairs confirmed that the ground truth does not list", rows, func(r Row) []string { return r.RealFalse })
	pairList(w, "Observed pairs (not created) that the ground truth does not list", rows, func(r Row) []string { return r.ObservedFalse })
	fmt.Fprintf(w, "\n## Confirmed outcomes whose replays differed\n\n")
	for _, r := range rows {
		for _, d := range r.ReplayDiffs {
			fmt.Fprintf(w, "- %s: %s\n", r.Subject, d)
		}
	}
	fmt.Fprintf(w, "\n## Failures\n\n")
	for _, r := range rows {
		for _, d := range r.ExcRFDetail {
			fmt.Fprintf(w, "- %s (RF): %s\n", r.Subject, d)
		}
		for _, d := range r.SimpleDetail {
			fmt.Fprintf(w, "- %s (plain runs): %s\n", r.Subject, d)
		}
		for _, d := range r.ExcBaseline {
			fmt.Fprintf(w, "- %s (RF, not counted: the baseline's controlled runs without a pair fail the same way): %s\n", r.Subject, d)
		}
	}
}

// pairList writes a section listing each row's pairs of, each "pair
// [sources]".
func pairList(w io.Writer, title string, rows []Row, of func(Row) []string) {
	fmt.Fprintf(w, "\n## %s\n\n", title)
	for _, r := range rows {
		for _, p := range of(r) {
			pair, src, _ := strings.Cut(p, " ")
			a, b, _ := strings.Cut(pair, "~")
			fmt.Fprintf(w, "- %s: %s ~ %s %s\n", r.Subject, harness.RelToWd(a), harness.RelToWd(b), src)
		}
	}
}

// phase1Words says what the -phase1 sources are.
func phase1Words(spec string) string {
	var out []string
	for _, x := range strings.Split(spec, ",") {
		switch x = strings.TrimSpace(x); x {
		case "hybrid":
			out = append(out, "hybrid's pairs")
		case "vet":
			out = append(out, "racekit vet's static pairs")
		default:
			out = append(out, x)
		}
	}
	if len(out) > 1 {
		return "the union of " + strings.Join(out, " and ")
	}
	return strings.Join(out, "")
}
