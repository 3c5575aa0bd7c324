// Command sample reproduces LiteRace's sampler comparison (Marino et al.,
// PLDI'09: Table 3, Figures 4 and 5) over recorded traces of racekit's
// subject programs:
//
//	go build -o /tmp/rk3 ./cmd/racekit
//	RACEKIT_DEDUP=0 /tmp/rk3 test --keep-trace /tmp/subj-traces3 ./bench/subjects/...
//	go run ./bench/sample -traces /tmp/subj-traces3 > table.md
//
// As in the paper's §5.3, every sampler is judged on the same execution:
// each trace was recorded in full, and each sampler (filter/sample) replays
// its dispatch check at every function entry and keeps what it would have
// logged. For each trace and sampler it reports the effective sampling rate
// (ESR: the share of memory accesses logged) and the detection rate: the
// share of the distinct races (site pairs) that hb finds on the full trace
// that hb also finds on the sampled one. Races are split into rare and
// frequent as the paper does (Table 4: rare when it occurs fewer than 3
// times per million memory accesses of the run), counting a race's dynamic
// occurrences as the reports hb makes for its site pair on the full trace.
// Random samplers run with several seeds and count by their mean.
//
// Besides Table 3's seven samplers it reports gs-ad and tp-ad, racekit's
// adaptations of TL-Ad to Go (counters per goroutine creation site, or per
// slot of a goroutine pool, and function; see filter/sample), as rows
// labelled as not the paper's.
//
// Aggregates follow §5.2-5.3: the average ESR is the plain mean over
// subjects, the weighted average weighs each subject by its memory
// accesses (so it is logged/accesses over all of them); detection rates
// are given pooled (races found over all races) and as the mean of the
// subjects' rates.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/filter"
	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

func main() {
	dirs := flag.String("traces", "", "comma-separated directories of .rkt traces (one run per file)")
	seeds := flag.Int("seeds", 10, "seeds per random sampler (rnd10, rnd25)")
	perMillion := flag.Float64("rare-per-million", 3, "a race is rare when it occurs fewer times than this per million memory accesses of its run (the paper's Table 4)")
	rareCount := flag.Int("rare-count", 3, "second split, for small runs: a race is rare when it occurs fewer times than this in its run")
	online := flag.String("online", "", "NAME=DIR[,DIR...]: traces recorded with a sampler at run time (racekit test --sample ...), compared subject by subject with the full traces (other executions: see onlineTable)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: sample -traces DIR[,DIR...] [-seeds N] [-rare-per-million X] [-rare-count N]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *dirs == "" || flag.NArg() > 0 || *seeds < 1 {
		flag.Usage()
		os.Exit(2)
	}
	var files []string
	for _, d := range strings.Split(*dirs, ",") {
		fs := tracefile.List(d)
		if len(fs) == 0 {
			fmt.Fprintf(os.Stderr, "sample: no .rkt traces in %s\n", d)
			os.Exit(1)
		}
		files = append(files, fs...)
	}
	cfg := config{seeds: *seeds, perMillion: *perMillion, rareCount: *rareCount}
	var runs []runResult
	for _, path := range files {
		tr, err := load(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sample: %v\n", err)
			os.Exit(1)
		}
		r, err := analyze(subjectName(path), tr, cfg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sample: %s: %v\n", path, err)
			os.Exit(1)
		}
		runs = append(runs, r)
		fmt.Fprintf(os.Stderr, "%s: %d events, %d accesses, %d races\n", r.subject, len(tr.Events), r.accesses, len(r.races))
	}
	render(os.Stdout, cfg, runs)
	if *online != "" {
		name, dirs, ok := strings.Cut(*online, "=")
		if !ok {
			fmt.Fprintln(os.Stderr, "sample: -online wants NAME=DIR[,DIR...]")
			os.Exit(2)
		}
		var on []onlineRun
		for _, d := range strings.Split(dirs, ",") {
			for _, path := range tracefile.List(d) {
				tr, err := load(path)
				if err == nil {
					var o onlineRun
					o, err = measureOnline(subjectName(path), tr)
					on = append(on, o)
				}
				if err != nil {
					fmt.Fprintf(os.Stderr, "sample: %s: %v\n", path, err)
					os.Exit(1)
				}
			}
		}
		if len(on) == 0 {
			fmt.Fprintf(os.Stderr, "sample: no .rkt traces in %s\n", dirs)
			os.Exit(1)
		}
		onlineTable(os.Stdout, name, runs, on)
	}
}

// onlineRun is one trace recorded with a sampler at run time.
type onlineRun struct {
	subject  string
	accesses int64
	pairs    []finding.Pair
}

func measureOnline(subject string, tr *trace.Trace) (onlineRun, error) {
	o := onlineRun{subject: subject, accesses: countAccesses(tr)}
	c, err := hbRaces(tr.Iter())
	if err != nil {
		return o, err
	}
	o.pairs = c.Pairs()
	return o, nil
}

// onlineTable compares traces recorded with a runtime sampler (loop regions,
// say, which a full trace cannot replay: it has no loop boundaries) with
// the full traces, subject by subject. They are other executions, so this
// is not the paper's same-execution comparison: ESR is the sampled runs'
// mean accesses over the full runs' mean, and detection the share of the
// races of all full runs of a subject (site pairs, union) that some sampled
// run of it reports. A sampled run's race outside that union is counted
// apart ("elsewhere"): a race the full runs missed, never a false one
// (sampling drops accesses only).
func onlineTable(w io.Writer, name string, full []runResult, on []onlineRun) {
	type agg struct {
		fullRuns, onRuns int
		fullAcc, onAcc   float64
		races, onRaces   map[finding.Pair]bool
	}
	subs := map[string]*agg{}
	get := func(s string) *agg {
		if subs[s] == nil {
			subs[s] = &agg{races: map[finding.Pair]bool{}, onRaces: map[finding.Pair]bool{}}
		}
		return subs[s]
	}
	for _, r := range full {
		a := get(r.subject)
		a.fullRuns++
		a.fullAcc += float64(r.accesses)
		for _, x := range r.races {
			a.races[x.pair] = true
		}
	}
	for _, o := range on {
		a := get(o.subject)
		a.onRuns++
		a.onAcc += float64(o.accesses)
		for _, p := range o.pairs {
			a.onRaces[p] = true
		}
	}
	var names []string
	for s := range subs {
		names = append(names, s)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "\n## Recorded with %s at run time (other executions)\n\n", name)
	fmt.Fprintf(w, "| subject | full runs | %s runs | accesses (full, mean) | accesses (%s, mean) | ESR | races (full, union) | found | elsewhere |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n", name, name)
	var acc, onAcc, races, found, elsewhere, esrSum float64
	var detSum float64
	var nsub, nrace int
	for _, s := range names {
		a := subs[s]
		if a.fullRuns == 0 || a.onRuns == 0 {
			fmt.Fprintf(w, "| %s | %d | %d | | | | | | |\n", s, a.fullRuns, a.onRuns)
			continue
		}
		fa, oa := a.fullAcc/float64(a.fullRuns), a.onAcc/float64(a.onRuns)
		f, e := 0, 0
		for p := range a.onRaces {
			if a.races[p] {
				f++
			} else {
				e++
			}
		}
		esr := 1.0
		if fa > 0 {
			esr = oa / fa
		}
		nsub++
		esrSum += esr
		acc += fa
		onAcc += oa
		races += float64(len(a.races))
		found += float64(f)
		elsewhere += float64(e)
		if len(a.races) > 0 {
			nrace++
			detSum += float64(f) / float64(len(a.races))
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.0f | %.0f | %s | %d | %d | %d |\n", s, a.fullRuns, a.onRuns, fa, oa, pct(esr), len(a.races), f, e)
	}
	meanDet := "–"
	if nrace > 0 {
		meanDet = pct(detSum / float64(nrace))
	}
	fmt.Fprintf(w, "\n%s over %d subjects: weighted ESR %s, mean ESR %s; detection %s pooled (%.0f of %.0f races), %s mean of the %d subjects with races; %.0f races found only in sampled runs.\n",
		name, nsub, ratio(onAcc, acc), ratio(esrSum, float64(nsub)), ratio(found, races), found, races, meanDet, nrace, elsewhere)
}

// config holds the knobs of one comparison.
type config struct {
	seeds      int
	perMillion float64
	rareCount  int
}

func load(path string) (*trace.Trace, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return trace.ReadAll(f)
}

// subjectName turns "github.com_racekit_racekit_bench_subjects_tsp.test.16908.rkt"
// into "tsp".
func subjectName(path string) string {
	n := filepath.Base(path)
	if i := strings.Index(n, ".test."); i >= 0 {
		n = n[:i]
	} else {
		n = strings.TrimSuffix(n, ".rkt")
	}
	if i := strings.LastIndex(n, "_subjects_"); i >= 0 {
		n = n[i+len("_subjects_"):]
	}
	return n
}

// race is one distinct race of a full trace.
type race struct {
	pair  finding.Pair
	count int  // dynamic occurrences (hb reports for the pair)
	rare  bool // by the per-million rule
	rareN bool // by the count rule
}

// samplerResult is one sampler on one run, averaged over its seeds.
type samplerResult struct {
	logged   float64 // accesses kept
	root     int64   // accesses outside every function frame
	found    float64 // distinct full-trace races found
	foundR   float64 // rare ones found (per-million rule)
	foundF   float64 // frequent ones found
	foundRN  float64 // rare ones found (count rule)
	foundFN  float64 // frequent ones found (count rule)
	invented int     // races of the sampled trace not in the full one (must be 0)
}

// runResult is one trace.
type runResult struct {
	subject  string
	accesses int64
	races    []race
	sampler  map[string]*samplerResult
}

func (r *runResult) count(rule func(race) bool) int {
	n := 0
	for _, x := range r.races {
		if rule(x) {
			n++
		}
	}
	return n
}

// countAccesses is the number of memory accesses in tr.
func countAccesses(tr *trace.Trace) int64 {
	n := int64(0)
	for i := range tr.Events {
		if tr.Events[i].Op.IsAccess() {
			n++
		}
	}
	return n
}

// hbRaces runs hb over r and returns the reports grouped by site pair.
func hbRaces(r trace.Reader) (*finding.Collector, error) {
	c := finding.NewCollector()
	_, err := detect.Run(r, hb.New(c))
	return c, err
}

// analyze runs hb on the full trace and on every sampler's output.
func analyze(subject string, tr *trace.Trace, cfg config) (runResult, error) {
	res := runResult{subject: subject, sampler: map[string]*samplerResult{}, accesses: countAccesses(tr)}
	full, err := hbRaces(tr.Iter())
	if err != nil {
		return res, err
	}
	idx := map[finding.Pair]int{}
	for _, g := range full.Groups() {
		x := race{pair: g.Pair(), count: g.Count}
		x.rare = float64(g.Count)*1e6 < cfg.perMillion*float64(res.accesses)
		x.rareN = g.Count < cfg.rareCount
		idx[x.pair] = len(res.races)
		res.races = append(res.races, x)
	}
	for _, name := range sample.Names() {
		p, err := sample.Lookup(name)
		if err != nil {
			return res, err
		}
		n := 1
		if p.Scope == sample.PerCall {
			n = cfg.seeds
		}
		sr := &samplerResult{}
		for seed := 1; seed <= n; seed++ {
			f := sample.NewPolicyFilter(p, int64(seed))
			got, err := hbRaces(filter.NewReader(tr.Iter(), f))
			if err != nil {
				return res, err
			}
			st := f.Stats()
			sr.logged += float64(st.Logged)
			sr.root = st.RootAccesses
			for _, pair := range got.Pairs() {
				i, ok := idx[pair]
				if !ok {
					sr.invented++
					continue
				}
				x := res.races[i]
				sr.found++
				if x.rare {
					sr.foundR++
				} else {
					sr.foundF++
				}
				if x.rareN {
					sr.foundRN++
				} else {
					sr.foundFN++
				}
			}
		}
		k := float64(n)
		sr.logged /= k
		sr.found /= k
		sr.foundR /= k
		sr.foundF /= k
		sr.foundRN /= k
		sr.foundFN /= k
		res.sampler[name] = sr
	}
	return res, nil
}

// subject is the runs of one subject, averaged.
type subject struct {
	name          string
	runs          int
	accesses      float64
	races         float64
	rare, rareN   float64
	esr           map[string]float64
	det           map[string]float64 // detection rate, over runs with races
	hasRaces      bool
	logged, found map[string]float64
}

func bySubject(runs []runResult) []*subject {
	m := map[string]*subject{}
	var out []*subject
	for i := range runs {
		r := &runs[i]
		s := m[r.subject]
		if s == nil {
			s = &subject{name: r.subject, esr: map[string]float64{}, det: map[string]float64{}, logged: map[string]float64{}, found: map[string]float64{}}
			m[r.subject] = s
			out = append(out, s)
		}
		s.runs++
		s.accesses += float64(r.accesses)
		s.races += float64(len(r.races))
		s.rare += float64(r.count(func(x race) bool { return x.rare }))
		s.rareN += float64(r.count(func(x race) bool { return x.rareN }))
		for name, sr := range r.sampler {
			s.logged[name] += sr.logged
			s.found[name] += sr.found
		}
	}
	for _, s := range out {
		s.hasRaces = s.races > 0
		for name := range s.logged {
			if s.accesses > 0 {
				s.esr[name] = s.logged[name] / s.accesses
			} else {
				s.esr[name] = 1
			}
			if s.hasRaces {
				s.det[name] = s.found[name] / s.races
			}
		}
		k := float64(s.runs)
		s.accesses /= k
		s.races /= k
		s.rare /= k
		s.rareN /= k
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return pct(a / b)
}

func render(w io.Writer, cfg config, runs []runResult) {
	names := sample.Names()
	subs := bySubject(runs)
	short := map[string]string{}
	for _, p := range sample.Policies() {
		short[p.Name] = p.Short
	}

	// Totals over all runs.
	var acc, races, rare, freq, rareN, freqN float64
	logged := map[string]float64{}
	found := map[string]float64{}
	fR, fF, fRN, fFN := map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]float64{}
	root := int64(0)
	invented := map[string]int{}
	for _, r := range runs {
		acc += float64(r.accesses)
		races += float64(len(r.races))
		nr := float64(r.count(func(x race) bool { return x.rare }))
		nrN := float64(r.count(func(x race) bool { return x.rareN }))
		rare += nr
		freq += float64(len(r.races)) - nr
		rareN += nrN
		freqN += float64(len(r.races)) - nrN
		root += r.sampler[names[0]].root
		for _, n := range names {
			sr := r.sampler[n]
			logged[n] += sr.logged
			found[n] += sr.found
			fR[n] += sr.foundR
			fF[n] += sr.foundF
			fRN[n] += sr.foundRN
			fFN[n] += sr.foundFN
			invented[n] += sr.invented
		}
	}
	withRaces := 0
	for _, s := range subs {
		if s.hasRaces {
			withRaces++
		}
	}

	fmt.Fprintf(w, "# LiteRace samplers on racekit's subjects\n\n")
	fmt.Fprintf(w, "%d traces of %d subjects (%d with races under hb); %.0f memory accesses, %.0f distinct races (site pairs) found by hb on the full traces. Random samplers: mean of %d seeds. Accesses outside every function frame (dispatched as the goroutine's start routine): %d (%s).\n\n",
		len(runs), len(subs), withRaces, acc, races, cfg.seeds, root, ratio(float64(root), acc))

	fmt.Fprintf(w, "## Table 3: effective sampling rate and detection rate\n\n")
	fmt.Fprintf(w, "| sampler | description | weighted avg ESR | avg ESR | detection (pooled) | detection (mean of subjects) | false races |\n|---|---|---|---|---|---|---|\n")
	for _, n := range names {
		var esrSum, detSum float64
		for _, s := range subs {
			esrSum += s.esr[n]
			if s.hasRaces {
				detSum += s.det[n]
			}
		}
		p, _ := sample.Lookup(n)
		meanDet := "–"
		if withRaces > 0 {
			meanDet = pct(detSum / float64(withRaces))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %d |\n", short[n], p.Description, ratio(logged[n], acc), pct(esrSum/float64(len(subs))),
			ratio(found[n], races), meanDet, invented[n])
	}

	fmt.Fprintf(w, "\n## Figure 5: rare and frequent races\n\n")
	fmt.Fprintf(w, "Paper's rule (Table 4): a race is rare when it occurs fewer than %g times per million memory accesses of its run: %.0f rare, %.0f frequent. Count rule (for runs too small for the paper's rule to call anything rare): rare when it occurs fewer than %d times: %.0f rare, %.0f frequent.\n\n",
		cfg.perMillion, rare, freq, cfg.rareCount, rareN, freqN)
	fmt.Fprintf(w, "| sampler | rare (per-million rule) | frequent (per-million rule) | rare (count rule) | frequent (count rule) |\n|---|---|---|---|---|\n")
	for _, n := range names {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", short[n], ratio(fR[n], rare), ratio(fF[n], freq), ratio(fRN[n], rareN), ratio(fFN[n], freqN))
	}

	fmt.Fprintf(w, "\n## Figure 4 by subject: detection rate (ESR)\n\n")
	fmt.Fprintf(w, "| subject | accesses (mean per run) | races (mean per run) | rare (per-million / count) |")
	for _, n := range names {
		fmt.Fprintf(w, " %s |", short[n])
	}
	fmt.Fprintf(w, "\n|---|---|---|---|%s\n", strings.Repeat("---|", len(names)))
	for _, s := range subs {
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %.0f / %.0f |", s.name, s.accesses, s.races, s.rare, s.rareN)
		for _, n := range names {
			det := "–"
			if s.hasRaces {
				det = pct(s.det[n])
			}
			fmt.Fprintf(w, " %s (%s) |", det, pct(s.esr[n]))
		}
		fmt.Fprintln(w)
	}

	tl := "tl-ad"
	esr := logged[tl] / acc
	det := found[tl] / races
	verdict := "met"
	if !(det >= 0.70 && esr <= 0.05) {
		verdict = "NOT met"
	}
	fmt.Fprintf(w, "\n## Target\n\nTL-Ad finds at least 70%% of the distinct races full recording finds while logging at most 5%% of memory accesses: %s (pooled detection %s, weighted ESR %s).\n",
		verdict, pct(det), pct(esr))
	var meet []string
	for _, n := range names {
		if races > 0 && found[n]/races >= 0.70 && logged[n]/acc <= 0.05 {
			meet = append(meet, short[n])
		}
	}
	if len(meet) == 0 {
		meet = []string{"none"}
	}
	fmt.Fprintf(w, "\nSamplers meeting both halves (pooled detection ≥ 70%%, weighted ESR ≤ 5%%): %s.\n", strings.Join(meet, ", "))
}
