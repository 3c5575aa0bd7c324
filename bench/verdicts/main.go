// Command verdicts measures racekit's whole pipeline in one command over
// racekit's subject programs (bench/subjects, ground truth in
// bench/truth): one `racekit test -confirm -predict` run over every
// subject records, detects, predicts and re-executes each race reported
// under RaceFuzzer, and the table scores each race id of the ground truth
// by the verdict racekit gave it (confirmed, observed, predicted, or
// missed), with the time taken:
//
//	go build -o /tmp/rk ./cmd/racekit
//	go run ./bench/verdicts -racekit /tmp/rk -json bench/results/verdicts/verdicts.json > bench/results/verdicts/table.md
//
// "Found before" are the ids some earlier racekit command found on the
// same subjects, read from the results files -before names (racekit
// bench's found_ids; racekit fuzz's Table 1, its known ids less those it
// missed): an id found before and missed here is a loss of the one
// command against the others. A pair racekit reported that matches no id
// is listed by verdict: a confirmed one outside the ground truth is a
// real race the ground truth lacks, or a fault of the confirmation.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/racekit/racekit/bench/harness"
	"github.com/racekit/racekit/bench/truth"
	"github.com/racekit/racekit/confirm"
)

// Row is one subject's line of the table.
type Row struct {
	Subject     string   `json:"subject"`
	Known       int      `json:"known"`
	Confirmed   []string `json:"confirmed,omitempty"` // ids a confirmed pair covers
	Observed    []string `json:"observed,omitempty"`  // ids covered by an observed pair and no confirmed one
	Predicted   []string `json:"predicted,omitempty"` // ids covered by a predicted pair alone
	Missed      []string `json:"missed,omitempty"`
	FoundBefore []string `json:"found_before,omitempty"` // ids an earlier command found
	Lost        []string `json:"lost,omitempty"`         // found before, missed here
	Outside     []string `json:"outside,omitempty"`      // pairs matching no id: "verdict pair"
	Runs        int      `json:"runs"`
	Skipped     int      `json:"skipped"`
}

// Result is the whole run.
type Result struct {
	Command string  `json:"command"`
	Date    string  `json:"date"`
	Seconds float64 `json:"seconds"` // racekit test -confirm's wall time, build and confirmation included
	Exit    int     `json:"exit"`
	Rows    []Row   `json:"rows"`
}

func main() {
	rk := flag.String("racekit", "racekit", "the racekit binary")
	budget := flag.Duration("budget", 20*time.Minute, "racekit test -budget")
	runs := flag.Int("runs", 10, "racekit test -confirm-runs")
	record := flag.Int("record", 3, "racekit test -confirm-record")
	vet := flag.Bool("vet", false, "racekit test -confirm-vet")
	root := flag.String("subjects", "bench/subjects", "the subjects' directory")
	before := flag.String("before", "bench/results/hb.json,bench/results/fasttrack.json,bench/results/hb-random1.json,bench/results/hb-random2.json,bench/results/fuzz/table1.json", "earlier results, comma-separated: racekit bench -out files and bench/fuzz -json files")
	jsonOut := flag.String("json", "", "also write the result as JSON to FILE")
	flag.Parse()
	subjects, err := truth.LoadAll(*root)
	if err != nil {
		fatal(err)
	}
	subjects = truth.Select(subjects, flag.Args())
	found, err := foundBefore(strings.Split(*before, ","), subjects)
	if err != nil {
		fatal(err)
	}
	tmp, err := os.MkdirTemp("", "bench-verdicts-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	verdicts := tmp + "/verdicts.json"
	args := []string{"test", "-q", "-predict", "-confirm", "-budget", budget.String(), "-confirm-runs", fmt.Sprint(*runs), "-confirm-record", fmt.Sprint(*record), "-confirm-json", verdicts}
	if *vet {
		args = append(args, "-confirm-vet")
	}
	n := len(args)
	for _, s := range subjects {
		args = append(args, "./"+harness.RelToWd(s.Dir))
	}
	res := Result{Command: "racekit " + strings.ReplaceAll(strings.Join(args[:n], " "), verdicts, "FILE") + " ./bench/subjects/...", Date: time.Now().UTC().Format(time.RFC3339)}
	start := time.Now()
	cmd := exec.Command(*rk, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	err = cmd.Run()
	res.Seconds = time.Since(start).Seconds()
	if ee, ok := err.(*exec.ExitError); ok {
		res.Exit = ee.ExitCode()
	} else if err != nil {
		fatal(err)
	}
	data, err := os.ReadFile(verdicts)
	if err != nil {
		fatal(fmt.Errorf("racekit test wrote no verdicts (%v): %s", err, stderr.String()))
	}
	var fr confirm.FuzzResult
	if err := json.Unmarshal(data, &fr); err != nil {
		fatal(err)
	}
	for _, s := range subjects {
		res.Rows = append(res.Rows, score(s, fr.Pairs, found[s.Name]))
	}
	if err := harness.WriteJSONFile(*jsonOut, res); err != nil {
		fatal(err)
	}
	table(os.Stdout, res, *runs, *budget)
}

// score gives each of s's race ids the best verdict of the pairs that
// cover it (confirmed, then observed, then predicted).
func score(s *truth.Subject, pairs []confirm.FuzzPair, before map[string]bool) Row {
	r := Row{Subject: s.Name}
	expected := map[truth.Pair]*truth.Entry{}
	for _, e := range s.Entries(truth.KindRace) {
		r.Known++
		for _, p := range e.Pairs() {
			expected[p] = e
		}
	}
	best := map[string]string{}
	rank := map[string]int{"confirmed": 3, "observed": 2, "predicted": 1}
	for _, p := range pairs {
		tp, ok := s.PairOf(p.Pair)
		if !ok {
			continue // another subject's
		}
		r.Runs += p.Runs
		r.Skipped += p.Skipped
		e := expected[tp]
		if e == nil {
			r.Outside = append(r.Outside, p.Verdict+" "+tp.String())
			continue
		}
		if rank[p.Verdict] > rank[best[e.ID]] {
			best[e.ID] = p.Verdict
		}
	}
	for _, e := range s.Entries(truth.KindRace) {
		switch best[e.ID] {
		case "confirmed":
			r.Confirmed = append(r.Confirmed, e.ID)
		case "observed":
			r.Observed = append(r.Observed, e.ID)
		case "predicted":
			r.Predicted = append(r.Predicted, e.ID)
		default:
			r.Missed = append(r.Missed, e.ID)
			if before[e.ID] {
				r.Lost = append(r.Lost, e.ID)
			}
		}
		if before[e.ID] {
			r.FoundBefore = append(r.FoundBefore, e.ID)
		}
	}
	return r
}

// foundBefore reads the ids each earlier result found, per subject.
func foundBefore(files []string, subjects []*truth.Subject) (map[string]map[string]bool, error) {
	out := map[string]map[string]bool{}
	add := func(subject, id string) {
		if out[subject] == nil {
			out[subject] = map[string]bool{}
		}
		out[subject][id] = true
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var bench struct {
			Subjects []struct {
				Subject  string   `json:"subject"`
				FoundIDs []string `json:"found_ids"`
			} `json:"subjects"`
		}
		if json.Unmarshal(data, &bench) == nil && len(bench.Subjects) > 0 {
			for _, s := range bench.Subjects {
				for _, id := range s.FoundIDs {
					add(s.Subject, id)
				}
			}
			continue
		}
		var fuzz []struct {
			Subject string   `json:"subject"`
			Missed  []string `json:"missed"`
		}
		if err := json.Unmarshal(data, &fuzz); err != nil {
			return nil, fmt.Errorf("%s: neither racekit bench's nor bench/fuzz's results: %v", f, err)
		}
		for _, row := range fuzz {
			for _, s := range subjects {
				if s.Name != row.Subject {
					continue
				}
				for _, e := range s.Entries(truth.KindRace) {
					if !slices.ContainsFunc(row.Missed, func(m string) bool { return strings.HasPrefix(m, e.ID+" ") || m == e.ID }) {
						add(s.Name, e.ID)
					}
				}
			}
		}
	}
	return out, nil
}

func table(w io.Writer, res Result, runs int, budget time.Duration) {
	fmt.Fprintf(w, "# One command: racekit test -confirm over the subjects\n\n")
	fmt.Fprintf(w, "`%s` (%d controlled runs per race, budget %v), %s: %.1f s wall time, build, tests, analysis and confirmation included; exit status %d.\n\n", res.Command, runs, budget, res.Date, res.Seconds, res.Exit)
	fmt.Fprintf(w, "| subject | known | confirmed | observed | predicted | missed | found before | lost | outside the truth | runs (left out) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	var t Row
	sort.SliceStable(res.Rows, func(i, j int) bool { return res.Rows[i].Subject < res.Rows[j].Subject })
	for _, r := range res.Rows {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %s | %s | %d (%d) |\n", r.Subject, r.Known, len(r.Confirmed), len(r.Observed), len(r.Predicted), len(r.Missed), len(r.FoundBefore), list(r.Lost), list(r.Outside), r.Runs, r.Skipped)
		t.Known += r.Known
		t.Confirmed = append(t.Confirmed, r.Confirmed...)
		t.Observed = append(t.Observed, r.Observed...)
		t.Predicted = append(t.Predicted, r.Predicted...)
		t.Missed = append(t.Missed, r.Missed...)
		t.FoundBefore = append(t.FoundBefore, r.FoundBefore...)
		t.Lost = append(t.Lost, r.Lost...)
		t.Outside = append(t.Outside, r.Outside...)
		t.Runs += r.Runs
		t.Skipped += r.Skipped
	}
	fmt.Fprintf(w, "| **total** | %d | %d | %d | %d | %d | %d | %d | %d | %d (%d) |\n\n", t.Known, len(t.Confirmed), len(t.Observed), len(t.Predicted), len(t.Missed), len(t.FoundBefore), len(t.Lost), len(t.Outside), t.Runs, t.Skipped)
	fmt.Fprintf(w, "Missed ids: %s.\n", list(t.Missed))
}

func list(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "bench/verdicts: %v\n", err)
	os.Exit(1)
}
