// Package harness runs a racekit analysis over the subject programs of
// bench/subjects and scores its findings against their ground truth
// (package truth), the way the seed papers' tables do: per subject its
// size, the time taken, the findings, how many are true, false and missed,
// and over all subjects precision and recall.
//
// Scoring is by source line, the granularity of the markers. A finding is
// a tuple of sites (two for a race); findings with the same lines count
// once. A finding is true when it matches an expected entry of its kind
// (truth.Entry.Matches: both lines carry the id), false otherwise; a false
// finding that matches a racekit:norace entry is a known false alarm (the
// "fa" column). An expected entry (an id of a kind the analysis reports)
// no finding matches is missed. Precision is true/findings, recall is
// found ids/expected ids.
//
// Analyses plug in through the Analysis interface; Dynamic (the hb,
// fasttrack, lockset and hybrid detectors over the traces of `racekit test`)
// and Vet (`racekit vet --json`, RELAY) are the ones racekit has now.
package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/racekit/racekit/bench/truth"
)

// Site is one access of a finding. File is the slash path relative to the
// subject directory when the file is below it (see RelSite), else the path
// the analysis gave.
type Site struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col,omitempty"`
}

func (s Site) line() truth.Line { return truth.Line{File: s.File, Line: s.Line} }

func (s Site) String() string {
	if s.Col > 0 {
		return fmt.Sprintf("%s:%d:%d", s.File, s.Line, s.Col)
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// RelSite makes a Site from an analysis's absolute file name, relative to
// the subject directory dir when the file is below it.
func RelSite(dir, file string, line, col int) Site {
	if rel, err := filepath.Rel(dir, file); err == nil && filepath.IsAbs(file) && !strings.HasPrefix(rel, "..") {
		file = filepath.ToSlash(rel)
	}
	return Site{File: file, Line: line, Col: col}
}

// Finding is one report of an analysis.
type Finding struct {
	Kind     truth.Kind `json:"kind,omitempty"` // "" means a data race
	Sites    []Site     `json:"sites"`          // two for a race
	Evidence string     `json:"evidence,omitempty"`
	Count    int        `json:"count,omitempty"` // dynamic occurrences, when known
	Object   string     `json:"object,omitempty"`
}

func (f *Finding) kind() truth.Kind {
	if f.Kind == "" {
		return truth.KindRace
	}
	return f.Kind
}

// lines returns the finding's lines in canonical order (sorted), the key
// under which findings are counted.
func (f *Finding) lines() []truth.Line {
	ls := make([]truth.Line, len(f.Sites))
	for i, s := range f.Sites {
		ls[i] = s.line()
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].Less(ls[j]) })
	return ls
}

func linesKey(k truth.Kind, ls []truth.Line) string {
	var b strings.Builder
	b.WriteString(string(k))
	for _, l := range ls {
		b.WriteByte(' ')
		b.WriteString(l.String())
	}
	return b.String()
}

func linesString(ls []truth.Line) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.String()
	}
	return strings.Join(parts, "-")
}

// Result is what an analysis found in one subject.
type Result struct {
	Findings   []Finding
	Events     int64         // events analyzed (dynamic analyses)
	Goroutines int           // goroutines in the traces (dynamic analyses)
	Elapsed    time.Duration // the analysis's own time; 0: the harness times Analyze
	Notes      []string      // warnings worth showing (a test that failed, a damaged trace)
}

// Analysis is a racekit analysis the harness can run.
type Analysis interface {
	// Name names the analysis in reports ("fasttrack", "vet").
	Name() string
	// Kinds are the kinds of anomaly it reports; the subjects' entries of
	// these kinds are what it is expected to find.
	Kinds() []truth.Kind
	// Analyze analyzes one subject.
	Analyze(ctx context.Context, s *truth.Subject) (*Result, error)
}

// Preparer is implemented by analyses that do shared work once before the
// subjects are analyzed one by one (one instrumented build for all).
type Preparer interface {
	Prepare(ctx context.Context, subjects []*truth.Subject) error
}

// Closer is implemented by analyses that hold resources (temporary trace
// directories) until the run is over.
type Closer interface {
	Close() error
}

// Row is one line of the table: one subject, or the total.
type Row struct {
	Subject    string   `json:"subject"`
	Lines      int      `json:"lines"`      // non-test Go lines
	GoStmts    int      `json:"go_stmts"`   // go statements in the source
	Goroutines int      `json:"goroutines"` // in the traces (dynamic analyses)
	Events     int64    `json:"events"`     // in the traces (dynamic analyses)
	TimeMS     float64  `json:"time_ms"`
	Findings   int      `json:"findings"` // distinct by line tuple
	True       int      `json:"true"`
	False      int      `json:"false"`
	KnownFalse int      `json:"known_false"` // false findings marked racekit:norace
	Expected   int      `json:"expected"`    // ids of the analysis's kinds
	Found      int      `json:"found"`
	Missed     int      `json:"missed"`
	Benign     int      `json:"benign_found"` // found ids that are benign races
	Precision  *float64 `json:"precision"`    // null when there is no finding
	Recall     *float64 `json:"recall"`       // null when nothing is expected

	MissedIDs   []string `json:"missed_ids,omitempty"`   // "id" or "id (flaky)"
	FoundIDs    []string `json:"found_ids,omitempty"`    // sorted
	FalseLines  []string `json:"false_lines,omitempty"`  // "a.go:3-b.go:9", with " [norace id]" when known
	Notes       []string `json:"notes,omitempty"`        //
	Error       string   `json:"error,omitempty"`        // the analysis failed on this subject
	TrueLines   []string `json:"true_lines,omitempty"`   // "a.go:3-b.go:9 [id]"
	Subjects    int      `json:"subjects,omitempty"`     // total row: subjects scored
	FailedCount int      `json:"failed_count,omitempty"` // total row: subjects with an error
}

// Report is the result of running one analysis over subjects.
type Report struct {
	Analysis string    `json:"analysis"`
	Kinds    []string  `json:"kinds"`
	Command  string    `json:"command,omitempty"` // the command line that produced it
	Date     string    `json:"date,omitempty"`
	Rows     []Row     `json:"subjects"`
	Total    Row       `json:"total"`
	Elapsed  float64   `json:"elapsed_ms"` // wall time of the whole run, preparation included
	started  time.Time //
}

// Score matches one subject's findings against its ground truth for an
// analysis reporting the given kinds.
func Score(s *truth.Subject, kinds []truth.Kind, res *Result) Row {
	row := Row{Subject: s.Name, Lines: s.Lines, GoStmts: s.GoStmts}
	expected := s.Entries(kinds...)
	row.Expected = len(expected)
	found := map[string]bool{}
	if res != nil {
		row.Events, row.Goroutines = res.Events, res.Goroutines
		row.TimeMS = float64(res.Elapsed.Microseconds()) / 1000
		row.Notes = res.Notes
		seen := map[string]bool{}
		for i := range res.Findings {
			f := &res.Findings[i]
			k, ls := f.kind(), f.lines()
			key := linesKey(k, ls)
			if seen[key] {
				continue
			}
			seen[key] = true
			row.Findings++
			var ids []string
			for _, e := range expected {
				if e.Kind == k && e.Matches(ls) {
					ids = append(ids, e.ID)
					found[e.ID] = true
				}
			}
			if len(ids) > 0 {
				row.True++
				row.TrueLines = append(row.TrueLines, linesString(ls)+" ["+strings.Join(ids, ",")+"]")
				continue
			}
			row.False++
			desc := linesString(ls)
			var fa []string
			for _, e := range s.NoRaces {
				if e.Matches(ls) {
					fa = append(fa, e.ID)
				}
			}
			if len(fa) > 0 {
				row.KnownFalse++
				desc += " [norace " + strings.Join(fa, ",") + "]"
			}
			row.FalseLines = append(row.FalseLines, desc)
		}
	}
	for _, e := range expected {
		switch {
		case found[e.ID]:
			row.Found++
			row.FoundIDs = append(row.FoundIDs, e.ID)
			if e.Benign {
				row.Benign++
			}
		case e.Flaky:
			row.MissedIDs = append(row.MissedIDs, e.ID+" (flaky)")
		default:
			row.MissedIDs = append(row.MissedIDs, e.ID)
		}
	}
	row.Missed = row.Expected - row.Found
	sort.Strings(row.TrueLines)
	sort.Strings(row.FalseLines)
	row.ratios()
	return row
}

func (r *Row) ratios() {
	r.Precision, r.Recall = nil, nil
	if r.Findings > 0 {
		p := float64(r.True) / float64(r.Findings)
		r.Precision = &p
	}
	if r.Expected > 0 {
		q := float64(r.Found) / float64(r.Expected)
		r.Recall = &q
	}
}

// Options configure Run.
type Options struct {
	// Progress, when set, receives one line per subject as it is done.
	Progress io.Writer
}

// Run prepares the analysis, analyzes each subject and scores it. A
// subject the analysis fails on gets a row with Error set and is left out
// of the totals; the error returned is for failures of the whole run.
func Run(ctx context.Context, a Analysis, subjects []*truth.Subject, opts Options) (*Report, error) {
	rep := &Report{Analysis: a.Name(), started: time.Now(), Date: time.Now().UTC().Format(time.RFC3339)}
	for _, k := range a.Kinds() {
		rep.Kinds = append(rep.Kinds, string(k))
	}
	if c, ok := a.(Closer); ok {
		defer c.Close()
	}
	if p, ok := a.(Preparer); ok {
		if err := p.Prepare(ctx, subjects); err != nil {
			return nil, fmt.Errorf("%s: %w", a.Name(), err)
		}
	}
	for _, s := range subjects {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		res, err := a.Analyze(ctx, s)
		elapsed := time.Since(start)
		var row Row
		if err != nil {
			row = Score(s, a.Kinds(), nil)
			row.Error = err.Error()
			row.Findings, row.Missed, row.MissedIDs = 0, 0, nil
			row.ratios()
		} else {
			if res.Elapsed == 0 {
				res.Elapsed = elapsed
			}
			row = Score(s, a.Kinds(), res)
		}
		if opts.Progress != nil {
			status := fmt.Sprintf("%d findings, %d true, %d false, %d missed", row.Findings, row.True, row.False, row.Missed)
			if row.Error != "" {
				status = "error: " + row.Error
			}
			fmt.Fprintf(opts.Progress, "%s: %s\n", s.Name, status)
		}
		rep.Rows = append(rep.Rows, row)
	}
	rep.total()
	rep.Elapsed = float64(time.Since(rep.started).Microseconds()) / 1000
	return rep, nil
}

// total sums the rows without an error into Total.
func (r *Report) total() {
	t := Row{Subject: "total"}
	for _, x := range r.Rows {
		if x.Error != "" {
			t.FailedCount++
			continue
		}
		t.Subjects++
		t.Lines += x.Lines
		t.GoStmts += x.GoStmts
		t.Goroutines += x.Goroutines
		t.Events += x.Events
		t.TimeMS += x.TimeMS
		t.Findings += x.Findings
		t.True += x.True
		t.False += x.False
		t.KnownFalse += x.KnownFalse
		t.Expected += x.Expected
		t.Found += x.Found
		t.Missed += x.Missed
		t.Benign += x.Benign
	}
	t.ratios()
	r.Total = t
}

// NewReport assembles a report from rows already scored (for tools that
// merge runs); it computes the total.
func NewReport(analysis string, kinds []truth.Kind, rows []Row) *Report {
	r := &Report{Analysis: analysis, Rows: rows}
	for _, k := range kinds {
		r.Kinds = append(r.Kinds, string(k))
	}
	r.total()
	return r
}

func ratio(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *p)
}

func dash(n int64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// WriteText prints the table; with details, each subject's missed ids and
// false findings follow it.
func (r *Report) WriteText(w io.Writer, details bool) error {
	fmt.Fprintf(w, "racekit bench: %s (%s) over %d subjects\n\n", r.Analysis, strings.Join(r.Kinds, ", "), len(r.Rows))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "subject\tlines\tgo stmts\tgoroutines\tevents\ttime ms\tfindings\ttrue\tfalse\t(fa)\tmissed\tprecision\trecall\t")
	line := func(x Row) {
		if x.Error != "" {
			fmt.Fprintf(tw, "%s\t%d\t%d\t\t\t\t\t\t\t\t\terror\t\t\n", x.Subject, x.Lines, x.GoStmts)
			return
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%.1f\t%d\t%d\t%d\t%d\t%d/%d\t%s\t%s\t\n",
			x.Subject, x.Lines, x.GoStmts, dash(int64(x.Goroutines)), dash(x.Events), x.TimeMS,
			x.Findings, x.True, x.False, x.KnownFalse, x.Missed, x.Expected, ratio(x.Precision), ratio(x.Recall))
	}
	for _, x := range r.Rows {
		line(x)
	}
	line(r.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nfindings are distinct line tuples; (fa) = false findings marked racekit:norace (lockset false alarms);\nmissed = expected ids not found / expected ids; %d benign races found.\n", r.Total.Benign)
	if r.Total.FailedCount > 0 {
		fmt.Fprintf(w, "%d subjects failed and are left out of the total:\n", r.Total.FailedCount)
		for _, x := range r.Rows {
			if x.Error != "" {
				fmt.Fprintf(w, "  %s: %s\n", x.Subject, x.Error)
			}
		}
	}
	if details {
		for _, x := range r.Rows {
			if len(x.MissedIDs)+len(x.FalseLines)+len(x.Notes) == 0 {
				continue
			}
			fmt.Fprintf(w, "\n%s:\n", x.Subject)
			for _, n := range x.Notes {
				fmt.Fprintf(w, "  note: %s\n", n)
			}
			for _, m := range x.MissedIDs {
				fmt.Fprintf(w, "  missed %s\n", m)
			}
			for _, f := range x.FalseLines {
				fmt.Fprintf(w, "  false  %s\n", f)
			}
		}
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
