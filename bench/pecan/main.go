// Command pecan reproduces PECAN's Table 1 (Huang and Zhang, ISSTA'11)
// over racekit's subject programs (bench/subjects, ground truth in
// bench/truth):
//
//	go build -o /tmp/rk ./cmd/racekit
//	go run ./bench/pecan -racekit /tmp/rk -j 2 -json bench/results/pecan/table1.json > bench/results/pecan/table1.md
//
// For each subject it runs racekit hatch (PECAN's anomalies on one
// recorded run of the subject's tests, or on several with -recordings,
// each re-executed along its clip)
// and reports the paper's columns: goroutines, shared variables and events
// of the recorded trace; the recording overhead (the recorded run against
// the uninstrumented test binary); search and hatching times; the races,
// atomicity violations and atomic-set violations predicted; how many were
// confirmed by re-execution (real), and of those how many runs panicked
// or failed a test.
//
// Scoring against the ground truth: an anomaly is true when the lines of
// its events all belong to one entry of the ground truth of its family
// (truth.Entry.Matches: a race pair, or an atomicity or atomic-set
// violation's lines). The targets: every entry of the ground truth
// predicted and confirmed; no false anomaly confirmed.
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
	"sort"
	"strings"
	"time"

	"github.com/racekit/racekit/bench/harness"
	"github.com/racekit/racekit/bench/truth"
	"github.com/racekit/racekit/confirm"
)

// Row is one subject's line of the table.
type Row struct {
	Subject    string   `json:"subject"`
	Goroutines int      `json:"goroutines"`
	SharedVars int      `json:"shared_vars"`
	Events     int      `json:"events"`
	NormalSec  float64  `json:"normal_sec"`
	RecordSec  float64  `json:"record_sec"`
	SearchSec  float64  `json:"search_sec"`
	HatchSec   float64  `json:"hatch_sec"`
	Races      int      `json:"races"`
	Atomicity  int      `json:"atomicity"`
	ASV        int      `json:"asv"`
	Real       int      `json:"real"`
	RealFalse  []string `json:"real_false,omitempty"` // confirmed, not in the ground truth
	Panics     int      `json:"panics"`
	Failed     int      `json:"failed"`
	Known      int      `json:"known"`
	Predicted  int      `json:"known_predicted"`
	Confirmed  int      `json:"known_confirmed"`
	// Observed: entries not confirmed by hatching whose race the recorded
	// run had (racekit hatch's verdict "observed"); ObservedFalse: such
	// races the ground truth does not list.
	Observed      int      `json:"known_observed"`
	ObservedFalse []string `json:"observed_false,omitempty"`
	Missed        []string `json:"missed,omitempty"`
	PrunedTrue    []string `json:"pruned_true,omitempty"` // true anomalies pruned, with why
	PrunedFalse   int      `json:"pruned_false"`
	Error         string   `json:"error,omitempty"`
}

func main() {
	rk := flag.String("racekit", "racekit", "the racekit binary")
	jobs := flag.Int("j", 2, "runs in parallel")
	timeout := flag.Duration("timeout", 30*time.Second, "time limit of one hatching run")
	jsonOut := flag.String("json", "", "also write the rows as JSON to FILE")
	root := flag.String("subjects", "bench/subjects", "the subjects' directory")
	flag.StringVar(&recordSeed, "record-seed", "0", "record each subject under the controlled random scheduler with this seed (racekit hatch --record-seed; 0: Go's scheduler; a comma list gives each recording's)")
	flag.Float64Var(&preempt, "record-preempt", 0, "with -record-seed: each access of a random-scheduler recording is also a scheduling point with this probability (racekit hatch --record-preempt)")
	flag.IntVar(&runs, "runs", 1, "hatching runs per clip (racekit hatch --runs): seeds 1, 2, ... for the choices the clip leaves open")
	flag.IntVar(&recordings, "recordings", 1, "recorded runs per subject (racekit hatch --recordings): seeds -record-seed, +1, ...")
	flag.StringVar(&from, "from", "pecan", "predictions to hatch (racekit hatch --from): pecan, or rdit / mcm for predicted races and their witnesses")
	flag.Parse()
	rows, err := harness.EachSubject("pecan", *root, flag.Args(), func(s *truth.Subject, tmp string) Row {
		return subject(s, *rk, *jobs, *timeout, tmp)
	})
	if err != nil {
		fatal(err)
	}
	if err := harness.WriteJSONFile(*jsonOut, rows); err != nil {
		fatal(err)
	}
	table(os.Stdout, rows)
}

var (
	from       string
	recordSeed string
	preempt    float64
	recordings int
	runs       int
)

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "bench/pecan: %v\n", err)
	os.Exit(1)
}

func subject(s *truth.Subject, rk string, jobs int, timeout time.Duration, tmp string) Row {
	r := Row{Subject: s.Name}
	pkg := "./" + filepath.ToSlash(harness.RelToWd(s.Dir))
	cmd := exec.Command(rk, "hatch", "--json", "--from", from, "--record-seed", recordSeed, "--record-preempt", fmt.Sprint(preempt), "--recordings", fmt.Sprint(recordings), "--runs", fmt.Sprint(runs), "-j", fmt.Sprint(jobs), "--timeout", timeout.String(), pkg)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var hr confirm.HatchResult
	if jerr := json.Unmarshal(out.Bytes(), &hr); jerr != nil {
		r.Error = fmt.Sprintf("racekit hatch: %v: %s", err, strings.TrimSpace(errb.String()))
		return r
	}
	r.Goroutines, r.SharedVars, r.Events = hr.Goroutines, hr.SharedVars, hr.Events
	r.RecordSec, r.SearchSec, r.HatchSec = hr.RecordSeconds, hr.SearchSeconds, hr.HatchSeconds

	entries := s.Entries()
	r.Known = len(entries)
	predicted, confirmed, observed := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, a := range hr.Anomalies {
		switch a.Kind {
		case "race":
			r.Races++
		case "atomicity":
			r.Atomicity++
		case "asv":
			r.ASV++
		}
		var lines []truth.Line
		ok := true
		for _, site := range a.Sites {
			l, lok := s.LineOf(site)
			ok = ok && lok
			lines = append(lines, l)
		}
		family := map[string]truth.Kind{"race": truth.KindRace, "atomicity": truth.KindAtomicity, "asv": truth.KindAtomicSet}[a.Kind]
		var match *truth.Entry
		if ok {
			for _, e := range entries {
				if e.Kind == family && e.Matches(lines) {
					match = e
					break
				}
			}
		}
		real := a.Verdict == "confirmed"
		desc := a.Pattern + " " + strings.Join(relSites(a.Sites), ",")
		if a.Verdict == "observed" {
			if match != nil {
				observed[match.ID] = true
			} else {
				r.ObservedFalse = append(r.ObservedFalse, desc)
			}
		}
		if match != nil {
			predicted[match.ID] = true
			if real {
				confirmed[match.ID] = true
			} else if len(a.Runs) > 0 {
				r.PrunedTrue = append(r.PrunedTrue, match.ID+": "+desc+": "+a.Runs[0].Reason)
			}
		} else if !real {
			r.PrunedFalse++
		}
		if !real {
			continue
		}
		r.Real++
		if match == nil {
			r.RealFalse = append(r.RealFalse, desc)
		}
		for _, run := range a.Runs {
			if !run.Confirmed {
				continue
			}
			switch run.Outcome {
			case "panic":
				r.Panics++
			case "test failure":
				r.Failed++
			}
			break
		}
	}
	for _, e := range entries {
		switch {
		case confirmed[e.ID]:
			r.Confirmed++
			r.Predicted++
		case observed[e.ID]:
			r.Predicted++
			r.Observed++
			r.Missed = append(r.Missed, e.ID+" ("+string(e.Kind)+": predicted, not hatched, observed in the recording)")
		case predicted[e.ID]:
			r.Predicted++
			r.Missed = append(r.Missed, e.ID+" ("+string(e.Kind)+": predicted, pruned)")
		default:
			r.Missed = append(r.Missed, e.ID+" ("+string(e.Kind)+": not predicted)")
		}
	}

	// The uninstrumented test binary, for the recording overhead.
	bin := filepath.Join(tmp, s.Name+".plain.test")
	if b, err := exec.Command("go", "test", "-c", "-o", bin, pkg).CombinedOutput(); err != nil {
		r.Error = fmt.Sprintf("go test -c: %v: %s", err, b)
		return r
	}
	const n = 3
	var total time.Duration
	for i := 0; i < n; i++ {
		c := exec.Command(bin, "-test.count=1")
		c.Dir = s.Dir
		t0 := time.Now()
		_ = c.Run()
		total += time.Since(t0)
	}
	r.NormalSec = total.Seconds() / n
	return r
}

func relSites(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = harness.RelToWd(s)
	}
	return out
}

func table(w io.Writer, rows []Row) {
	fmt.Fprintf(w, "# PECAN Table 1 over racekit's subjects (predictions: %s)\n\n", from)
	rec := "racekit hatch"
	nrec := recordings
	if n := strings.Count(recordSeed, ",") + 1; n > 1 {
		nrec = n
		rec = fmt.Sprintf("racekit hatch --record-seed %s: recorded with each of these seeds in turn, 0 under Go's scheduler, the others under the controlled random scheduler", recordSeed)
	} else if recordSeed != "0" {
		rec = fmt.Sprintf("racekit hatch --record-seed %s: recorded under the controlled random scheduler", recordSeed)
	}
	if preempt > 0 {
		rec += fmt.Sprintf(" --record-preempt %g: in a random-scheduler recording each access is also a scheduling point with that probability", preempt)
	}
	what := "One recorded run"
	if nrec > 1 {
		if recordings > 1 {
			rec += fmt.Sprintf(" --recordings %d", recordings)
		}
		rec += ": each prediction counted once, hatched along the clip of the first recording that made it, then of the next while not confirmed; events, Record and Search are sums over the recordings"
		what = fmt.Sprintf("%d recorded runs", nrec)
	}
	if runs > 1 {
		rec += fmt.Sprintf("; --runs %d: each clip followed with seeds 1 to %d for the choices it leaves open (which case a select takes, which key a map range visits first)", runs, runs)
	}
	fmt.Fprintf(w, what+" of each subject's tests (%s). Times in seconds: Normal is one run of the uninstrumented test binary (mean of 3), Record the instrumented run with the trace, Search PECAN's search with schedule generation, Hatch the re-execution of every clip (one run each, -j in parallel). Anomalies are distinct pattern and site combinations; Real are those a re-execution along the clip confirmed; Panics and Failed count real anomalies whose run then panicked or failed a test. Known is the ground truth's entries (races, atomicity and atomic-set violations); predicted and confirmed count those an anomaly of matching lines covers; observed counts those not confirmed whose race the recorded run itself had (racekit hatch's verdict observed: the happens-before detector reports the two statements on the variable in the recorded trace), which are real races that no clip run made happen.\n\n", rec)
	fmt.Fprintf(w, "| subject | goroutines | shared vars | events | Normal | Record | Search | Hatch | races | atomicity | ASV | real | of which not in truth | panics | failed | known | predicted | confirmed | observed |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var tot Row
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(w, "| %s | error: %s ||||||||||||||||||\n", r.Subject, strings.ReplaceAll(r.Error, "\n", " "))
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %.3f | %.3f | %.3f | %.2f | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n",
			r.Subject, r.Goroutines, r.SharedVars, r.Events, r.NormalSec, r.RecordSec, r.SearchSec, r.HatchSec,
			r.Races, r.Atomicity, r.ASV, r.Real, len(r.RealFalse), r.Panics, r.Failed, r.Known, r.Predicted, r.Confirmed, r.Observed)
		tot.Events += r.Events
		tot.Races += r.Races
		tot.Atomicity += r.Atomicity
		tot.ASV += r.ASV
		tot.Real += r.Real
		tot.RealFalse = append(tot.RealFalse, r.RealFalse...)
		tot.Panics += r.Panics
		tot.Failed += r.Failed
		tot.Known += r.Known
		tot.Predicted += r.Predicted
		tot.Confirmed += r.Confirmed
		tot.Observed += r.Observed
		tot.ObservedFalse = append(tot.ObservedFalse, r.ObservedFalse...)
		tot.PrunedFalse += r.PrunedFalse
		tot.SearchSec += r.SearchSec
		tot.HatchSec += r.HatchSec
	}
	fmt.Fprintf(w, "| **total** | | | %d | | | %.3f | %.2f | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n\n",
		tot.Events, tot.SearchSec, tot.HatchSec, tot.Races, tot.Atomicity, tot.ASV, tot.Real, len(tot.RealFalse), tot.Panics, tot.Failed, tot.Known, tot.Predicted, tot.Confirmed, tot.Observed)
	fmt.Fprintf(w, "%d anomalies that match no ground-truth entry were pruned by re-execution.\n\n", tot.PrunedFalse)
	fmt.Fprintf(w, "## Ground truth not confirmed\n\n")
	for _, r := range rows {
		if len(r.Missed) > 0 {
			fmt.Fprintf(w, "- %s: %s\n", r.Subject, strings.Join(r.Missed, "; "))
		}
	}
	fmt.Fprintf(w, "\n## True anomalies pruned (why)\n\n")
	for _, r := range rows {
		sort.Strings(r.PrunedTrue)
		for _, p := range r.PrunedTrue {
			fmt.Fprintf(w, "- %s: %s\n", r.Subject, p)
		}
	}
	fmt.Fprintf(w, "\n## Confirmed anomalies the ground truth does not list\n\n")
	for _, r := range rows {
		for _, p := range r.RealFalse {
			fmt.Fprintf(w, "- %s: %s\n", r.Subject, p)
		}
	}
	fmt.Fprintf(w, "\n## Observed races the ground truth does not list\n\n")
	for _, r := range rows {
		for _, p := range r.ObservedFalse {
			fmt.Fprintf(w, "- %s: %s\n", r.Subject, p)
		}
	}
}
