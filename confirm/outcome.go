package confirm

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/racekit/racekit/sched"
)

// resolution is "A before B" for a race note "G#N kind A | G#N kind B".
func resolution(note string) string {
	parts := strings.SplitN(note, " | ", 2)
	if len(parts) != 2 {
		return note
	}
	return pointSite(parts[0]) + " before " + pointSite(parts[1])
}

// pointSite is the site (and access kind) of a point's text "G#N kind site".
func pointSite(p string) string {
	f := strings.SplitN(strings.TrimSpace(p), " ", 3)
	if len(f) < 3 {
		return p
	}
	return relSite(f[2]) + " (" + map[string]string{"r": "read", "w": "write"}[f[1]] + ")"
}

// relSite shortens an absolute file name relative to the working
// directory when it is below it.
func relSite(s string) string {
	if wd, err := os.Getwd(); err == nil && strings.HasPrefix(s, wd+string(filepath.Separator)) {
		return s[len(wd)+1:]
	}
	return s
}

// classify names what a run led to.
func classify(timedOut bool, code int, out string, s *sched.Schedule) (string, string) {
	switch {
	case timedOut:
		return "timeout", ""
	case len(s.NotesOf("departure")) > 0 && code == sched.DepartedExit:
		return "stopped", "at its first departure from the clip"
	case len(s.NotesOf("deadlock")) > 0 && code == 3:
		return "deadlock", strings.Join(s.NotesOf("deadlock"), "; ")
	case strings.Contains(out, "fatal error: all goroutines are asleep"):
		return "deadlock", "fatal error: all goroutines are asleep"
	case strings.Contains(out, "\npanic: ") || strings.HasPrefix(out, "panic: "):
		i := strings.Index(out, "panic: ")
		line := out[i:]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		return "panic", strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "panic: "), " [recovered]")
	case code == 0:
		return "none", ""
	case strings.Contains(out, "--- FAIL"):
		var fails []string
		for _, l := range strings.Split(out, "\n") {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "--- FAIL: ") {
				name := strings.Fields(strings.TrimPrefix(t, "--- FAIL: "))[0]
				fails = append(fails, name)
			}
		}
		return "test failure", strings.Join(fails, ", ")
	}
	return "exit " + strconv.Itoa(code), ""
}

// summarize groups a pair's runs by resolution and outcome.
func summarize(pair string, t *Target, runs []Run, goFlags []string) FuzzPair {
	fp := FuzzPair{Pair: pair, Package: t.Pkg}
	idx := map[[3]string]int{}
	for _, r := range runs {
		if r.Outcome == "" {
			fp.Skipped++ // not run: past the time budget
			continue
		}
		fp.Runs++
		fp.Seconds += r.Elapsed.Seconds()
		if r.Escapes > 0 {
			fp.Escapes++
		}
		if r.Created {
			fp.Created++
			if fp.Replay == "" {
				fp.Replay = replayCommand(r.Seed, "-pair", pair, t.Pkg, goFlags)
			}
		}
		k := [3]string{r.Resolution, r.Outcome, r.Detail}
		i, ok := idx[k]
		if !ok {
			i = len(fp.Outcomes)
			idx[k] = i
			fp.Outcomes = append(fp.Outcomes, FuzzOutcome{Resolution: r.Resolution, Outcome: r.Outcome, Detail: r.Detail, digest: r.Digest, steps: r.Steps})
		}
		fp.Outcomes[i].Runs++
		fp.Outcomes[i].Seeds = append(fp.Outcomes[i].Seeds, r.Seed)
	}
	fp.sortOutcomes()
	fp.Real = fp.Created > 0
	if fp.Runs > 0 {
		fp.Probability = float64(fp.Created) / float64(fp.Runs)
	}
	return fp
}

// sortOutcomes puts the outcomes that created the race first, then the
// most frequent.
func (fp *FuzzPair) sortOutcomes() {
	sort.SliceStable(fp.Outcomes, func(i, j int) bool {
		a, b := fp.Outcomes[i], fp.Outcomes[j]
		if a.Resolution != b.Resolution {
			return a.Resolution > b.Resolution // created ones first
		}
		return a.Runs > b.Runs
	})
}

// setVerdict is "confirmed" when a run created the race, else "observed"
// when hb reported it in phase 1 (or racekit test on its run), else
// "predicted" for a race a predictive detector gave, else "not created".
func (fp *FuzzPair) setVerdict() {
	switch {
	case fp.Real:
		fp.Verdict = "confirmed"
	case fp.Observed:
		fp.Verdict = "observed"
	case slices.Contains(fp.Sources, "predicted"):
		fp.Verdict = "predicted"
	case slices.Contains(fp.Sources, "potential"):
		fp.Verdict = "potential"
	default:
		fp.Verdict = "not created"
	}
}

// baselineOutcomes groups one package's baseline runs by outcome.
func baselineOutcomes(pkg string, runs []Run) []BaselineOutcome {
	var out []BaselineOutcome
	idx := map[[2]string]int{}
	for _, r := range runs {
		k := [2]string{r.Outcome, r.Detail}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, BaselineOutcome{Package: pkg, Outcome: r.Outcome, Detail: r.Detail})
		}
		out[i].Seeds = append(out[i].Seeds, r.Seed)
	}
	return out
}

// countBaselines sets each outcome's Baseline: the baseline runs of its
// package with the same outcome and detail.
func (res *FuzzResult) countBaselines() {
	for p := range res.Pairs {
		fp := &res.Pairs[p]
		for o := range fp.Outcomes {
			oc := &fp.Outcomes[o]
			oc.Baseline = 0
			for _, b := range res.Baselines {
				if b.Package == fp.Package && b.Outcome == oc.Outcome && b.Detail == oc.Detail {
					oc.Baseline += len(b.Seeds)
				}
			}
		}
	}
}

// Races reports whether a pair was confirmed or observed: a race (racekit
// fuzz's exit status 66).
func (res *FuzzResult) Races() bool {
	for _, p := range res.Pairs {
		if p.Real || p.Observed {
			return true
		}
	}
	return false
}

// replayOutcomes replays, for every outcome that created its pair's race,
// the outcome's first seed -replay times (the runs of RaceFuzzer §2.2's
// replay: the seed alone, nothing recorded) and counts the replays whose
// schedule is the original run's, step for step.
func (f *raceFuzzer) replayOutcomes() error {
	pairs, jobs := f.res.Pairs, f.cands.jobs
	type task struct{ p, o, k int }
	var tasks []task
	for p := range pairs {
		for o, oc := range pairs[p].Outcomes {
			if oc.Resolution == "" {
				continue
			}
			for k := 0; k < f.Replay; k++ {
				tasks = append(tasks, task{p, o, k})
			}
		}
	}
	var mu sync.Mutex
	return inParallel(len(tasks), f.Jobs, func(i int) error {
		tk := tasks[i]
		oc := &pairs[tk.p].Outcomes[tk.o]
		path := filepath.Join(f.Tmp, fmt.Sprintf("replay%d-%d-%d.sched", tk.p, tk.o, tk.k))
		// The replay runs as the original did: its test alone, if so.
		r, err := controlledRun(jobs[tk.p].t, f.testArgs(jobs[tk.p].test), raceFuzzerEnv(oc.Seeds[0], jobs[tk.p].pair), path, f.Timeout, nil)
		os.Remove(path)
		if err != nil {
			return err
		}
		d := sched.DigestSteps(r.Schedule.Steps)
		mu.Lock()
		defer mu.Unlock()
		oc.Replayed++
		switch {
		case d == oc.digest:
			oc.Identical++
		case oc.ReplayDiff == "":
			oc.ReplayDiff = fmt.Sprintf("replay %d: %d steps, the original %d; outcome %s", tk.k+1, r.Steps, oc.steps, r.Outcome)
			switch {
			case !r.Created:
				oc.ReplayDiff += ", race not created"
			case r.Resolution != oc.Resolution:
				oc.ReplayDiff += ", race " + r.Resolution
			}
		}
		return nil
	})
}

// replayCommand is the racekit replay command line for one run: flag
// -pair with a race pair, -cycle with a lock-order cycle.
func replayCommand(seed uint64, flag, arg, pkg string, goFlags []string) string {
	s := fmt.Sprintf("racekit replay -seed %d %s", seed, flag)
	if arg != "" {
		s += " " + shellQuote(arg) // a boolean flag (-delays) takes none
	}
	s += " " + pkg
	if len(goFlags) > 0 {
		var q []string
		for _, f := range goFlags {
			q = append(q, shellQuote(f))
		}
		s += " -- " + strings.Join(q, " ")
	}
	return s
}

func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == '~' || r == '=' || r == ',' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			safe = false
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// printFuzz writes the result as text, in the style of the race
// detector's reports.
func PrintFuzz(w io.Writer, res FuzzResult) {
	res0 := res
	real := 0
	observed := 0
	for _, p := range res.Pairs {
		a, b, _ := strings.Cut(p.Pair, "~")
		if !p.Real && p.Observed {
			observed++
			fmt.Fprintf(w, "==================\nWARNING: DATA RACE (observed: unordered by happens-before in a recorded run; racekit fuzz did not create it in %d runs)\n", p.Runs)
			fmt.Fprintf(w, "  between %s\n      and %s\n  in package %s\n  candidate from %s\n", relSite(a), relSite(b), p.Package, strings.Join(p.Sources, ", "))
			fmt.Fprintf(w, "  no run brought the two accesses next to each other: the value is likely\n  published through a plain flag; racekit test -algo=hb reports it with stacks\n==================\n")
			continue
		}
		if !p.Real {
			fmt.Fprintf(w, "racekit fuzz: %s and %s (%s, from %s): not created in %d runs", relSite(a), relSite(b), p.Package, strings.Join(p.Sources, ", "), p.Runs)
			if len(p.Outcomes) > 0 && p.Outcomes[0].Outcome != "none" {
				o := p.Outcomes[0]
				fmt.Fprintf(w, " (%d runs: %s %s)", o.Runs, o.Outcome, o.Detail)
			}
			fmt.Fprintln(w)
			continue
		}
		real++
		fmt.Fprintf(w, "==================\nWARNING: DATA RACE (confirmed: racekit fuzz created it in %d of %d runs, probability %.2f)\n", p.Created, p.Runs, p.Probability)
		fmt.Fprintf(w, "  between %s\n      and %s\n  in package %s\n  candidate from %s\n", relSite(a), relSite(b), p.Package, strings.Join(p.Sources, ", "))
		printOutcomes(w, p, res0.BaselineRuns)
		fmt.Fprintf(w, "  replay: %s\n==================\n", p.Replay)
	}
	fmt.Fprintf(w, "racekit fuzz: %d candidate pairs (%s), %d real races confirmed", len(res.Pairs), res.Phase1, real)
	if observed > 0 {
		fmt.Fprintf(w, ", %d more observed but not created", observed)
	}
	fmt.Fprintln(w)
}

// stmtText is a pair's statement as a report shows it: file:line:col
// (write), its file relative to the working directory.
func stmtText(s string) string {
	st, ok := sched.ParseStmt(s)
	if !ok || st.Kind == sched.KindOther {
		return relSite(s)
	}
	kind := st.Kind
	st.Kind = sched.KindOther
	return relSite(st.String()) + " (" + map[sched.Kind]string{sched.KindRead: "read", sched.KindWrite: "write"}[kind] + ")"
}

// printOutcomes writes what each resolution of a created race led to,
// with its seeds and replays, and the runs that escaped control.
func printOutcomes(w io.Writer, p FuzzPair, baselineRuns int) {
	for _, o := range p.Outcomes {
		res := o.Resolution
		if res == "" {
			res = "not created"
		}
		what := o.Outcome
		if what == "none" {
			what = "no failure"
		}
		if o.Detail != "" {
			what += ": " + o.Detail
		}
		if o.Outcome != "none" && o.Baseline > 0 {
			what += fmt.Sprintf(" (also in %d of %d runs without the race: not its doing)", o.Baseline, baselineRuns)
		}
		fmt.Fprintf(w, "  %s -> %s\n      %d runs, seeds %s\n", res, what, o.Runs, seedList(o.Seeds))
		switch {
		case o.Replayed == 0:
		case o.Identical == o.Replayed:
			fmt.Fprintf(w, "      seed %d replayed %d times: the same schedule each time\n", o.Seeds[0], o.Replayed)
		default:
			fmt.Fprintf(w, "      seed %d replayed %d times: %d with the same schedule (%s)\n", o.Seeds[0], o.Replayed, o.Identical, o.ReplayDiff)
		}
	}
	if p.Escapes > 0 {
		fmt.Fprintf(w, "  (%d runs had goroutines leave the scheduler's control: they may not replay exactly)\n", p.Escapes)
	}
}

// PrintVerdicts writes the verdict of each race racekit test reported
// (Given pairs), once each: confirmed with what each resolution led to
// and a replay command, or still observed or predicted, with the runs
// made and those the time budget left out.
func PrintVerdicts(w io.Writer, res FuzzResult, elapsed time.Duration) {
	count := map[string]int{}
	fmt.Fprintf(w, "==================\nracekit: each race re-executed under RaceFuzzer's controlled scheduler\n")
	for _, p := range res.Pairs {
		switch p.Verdict {
		case "confirmed", "observed", "predicted":
			count[p.Verdict]++
		default:
			count["potential"]++
			continue // a candidate no run made happen: not a race to report
		}
		a, b, _ := strings.Cut(p.Pair, "~")
		runs := fmt.Sprintf("%d runs", p.Runs)
		if p.Skipped > 0 {
			runs += fmt.Sprintf(" (%d more left out: the time budget ran out)", p.Skipped)
		}
		switch p.Verdict {
		case "confirmed":
			fmt.Fprintf(w, "RACE CONFIRMED: created in %d of %s, probability %.2f\n", p.Created, runs, p.Probability)
		case "observed":
			fmt.Fprintf(w, "RACE OBSERVED: not created in %s; the recorded run had it (its two accesses unordered by happens-before)\n", runs)
		case "predicted":
			fmt.Fprintf(w, "RACE PREDICTED: not created in %s; another interleaving of the recorded run has it\n", runs)
		}
		where := "package " + p.Package
		if p.Test != "" {
			where += ", " + p.Test
		}
		fmt.Fprintf(w, "  between %s\n      and %s\n  in %s\n", stmtText(a), stmtText(b), where)
		if p.Real {
			printOutcomes(w, p, res.BaselineRuns)
			fmt.Fprintf(w, "  replay: %s\n", p.Replay)
		}
	}
	races := len(res.Pairs) - count["potential"]
	fmt.Fprintf(w, "==================\nracekit: %d race(s): %d confirmed, %d observed, %d predicted", races, count["confirmed"], count["observed"], count["predicted"])
	if n := count["potential"]; n > 0 {
		fmt.Fprintf(w, "; %d more potential pair(s) (hybrid, lockset or racekit vet) no run made happen, not reported", n)
	}
	fmt.Fprintf(w, " (%.1fs)\n", elapsed.Seconds())
}

func seedList(s []uint64) string {
	var b strings.Builder
	for i, x := range s {
		if i == 8 {
			fmt.Fprintf(&b, " ... (%d more)", len(s)-8)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatUint(x, 10))
	}
	return b.String()
}
