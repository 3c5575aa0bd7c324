package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/racekit/racekit/bench/truth"
)

// subjectSrc has three races (one benign, one flaky), one atomicity
// violation, and one lockset false alarm.
const subjectSrc = `package s

var a, b, c, d int

func f() {
	a++ // racekit:race id=r1 kind=race benign=false self
	b = 1 // racekit:race id=r2 kind=race benign=true
	_ = b // racekit:race id=r2 kind=race benign=true
	c = 1 // racekit:race id=r3 kind=race benign=false flaky
	_ = c // racekit:race id=r3 kind=race benign=false flaky racekit:race id=av kind=atomicity benign=false
	c = 2 // racekit:race id=av kind=atomicity benign=false
	d = 1 // racekit:norace id=n1 why=joined
	_ = d // racekit:norace id=n1 why=joined
}
`

func loadSubject(t *testing.T) *truth.Subject {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.go"), []byte(subjectSrc), 0o666); err != nil {
		t.Fatal(err)
	}
	s, err := truth.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pair(a, b int) Finding {
	return Finding{Sites: []Site{{File: "s.go", Line: a, Col: 2}, {File: "s.go", Line: b, Col: 3}}, Evidence: "observed"}
}

// fake reports fixed findings, or an error, per subject name.
type fake struct {
	findings map[string][]Finding
	fail     map[string]error
	prepared int
	closed   int
}

func (f *fake) Name() string        { return "fake" }
func (f *fake) Kinds() []truth.Kind { return []truth.Kind{truth.KindRace} }
func (f *fake) Analyze(_ context.Context, s *truth.Subject) (*Result, error) {
	if err := f.fail[s.Name]; err != nil {
		return nil, err
	}
	return &Result{Findings: f.findings[s.Name], Events: 100, Goroutines: 3, Elapsed: 2 * time.Millisecond}, nil
}
func (f *fake) Prepare(context.Context, []*truth.Subject) error { f.prepared++; return nil }
func (f *fake) Close() error                                    { f.closed++; return nil }

func TestScore(t *testing.T) {
	s := loadSubject(t)
	res := &Result{Findings: []Finding{
		pair(6, 6),   // r1 (self)
		pair(8, 7),   // r2, reversed order
		pair(7, 8),   // r2 again, same lines: not counted twice
		pair(12, 13), // n1: a known false alarm
		pair(6, 7),   // a false finding of no entry
		{Sites: []Site{{File: "other.go", Line: 6}, {File: "s.go", Line: 6}}}, // another file
	}}
	row := Score(s, []truth.Kind{truth.KindRace}, res)
	want := Row{Subject: "s", Findings: 5, True: 2, False: 3, KnownFalse: 1, Expected: 3, Found: 2, Missed: 1, Benign: 1}
	got := row
	got.Lines, got.GoStmts, got.Precision, got.Recall = 0, 0, nil, nil
	got.MissedIDs, got.FoundIDs, got.FalseLines, got.TrueLines = nil, nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Score = %+v\nwant    %+v", got, want)
	}
	if *row.Precision != 2.0/5 || *row.Recall != 2.0/3 {
		t.Errorf("precision %v, recall %v; want 0.4, 0.667", *row.Precision, *row.Recall)
	}
	if !reflect.DeepEqual(row.MissedIDs, []string{"r3 (flaky)"}) || !reflect.DeepEqual(row.FoundIDs, []string{"r1", "r2"}) {
		t.Errorf("missed %v, found %v", row.MissedIDs, row.FoundIDs)
	}
	wantFalse := []string{"other.go:6-s.go:6", "s.go:12-s.go:13 [norace n1]", "s.go:6-s.go:7"}
	if !reflect.DeepEqual(row.FalseLines, wantFalse) {
		t.Errorf("false lines %v, want %v", row.FalseLines, wantFalse)
	}
	if row.Lines != strings.Count(subjectSrc, "\n") {
		t.Errorf("lines %d", row.Lines)
	}
}

// An anomaly analysis is scored against the atomicity entries only, and a
// race finding on an atomicity id's lines is false for it.
func TestScoreKinds(t *testing.T) {
	s := loadSubject(t)
	res := &Result{Findings: []Finding{
		{Kind: truth.KindAtomicity, Sites: []Site{{File: "s.go", Line: 10}, {File: "s.go", Line: 11}, {File: "s.go", Line: 10}}},
		{Kind: truth.KindRace, Sites: []Site{{File: "s.go", Line: 10}, {File: "s.go", Line: 11}}},
	}}
	row := Score(s, []truth.Kind{truth.KindAtomicity}, res)
	// The atomicity finding repeats line 10, which is not marked self:
	// it does not match; the race finding's kind is not expected.
	if row.Expected != 1 || row.True != 0 || row.False != 2 || row.Missed != 1 {
		t.Fatalf("got %+v", row)
	}
	res.Findings[0].Sites = res.Findings[0].Sites[:2]
	row = Score(s, []truth.Kind{truth.KindAtomicity}, res)
	if row.True != 1 || row.False != 1 || row.Found != 1 || *row.Recall != 1 {
		t.Fatalf("got %+v", row)
	}
}

func TestRunTotalsAndOutput(t *testing.T) {
	s := loadSubject(t)
	s2 := *s
	s2.Name = "t"
	s3 := *s
	s3.Name = "broken"
	f := &fake{
		findings: map[string][]Finding{
			"s": {pair(6, 6), pair(7, 8), pair(6, 7)},
			"t": {pair(9, 10)},
		},
		fail: map[string]error{"broken": errors.New("no trace")},
	}
	rep, err := Run(context.Background(), f, []*truth.Subject{s, &s2, &s3}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f.prepared != 1 || f.closed != 1 {
		t.Errorf("prepared %d, closed %d times", f.prepared, f.closed)
	}
	tot := rep.Total
	if tot.Subjects != 2 || tot.FailedCount != 1 || tot.Findings != 4 || tot.True != 3 || tot.False != 1 ||
		tot.Expected != 6 || tot.Found != 3 || tot.Missed != 3 || tot.Events != 200 || tot.TimeMS != 4 {
		t.Fatalf("total = %+v", tot)
	}
	if *tot.Precision != 0.75 || *tot.Recall != 0.5 {
		t.Errorf("precision %v, recall %v; want 0.75, 0.5", *tot.Precision, *tot.Recall)
	}
	if rep.Rows[2].Error != "no trace" || rep.Rows[2].Findings != 0 || rep.Rows[2].Missed != 0 {
		t.Errorf("failed row = %+v", rep.Rows[2])
	}

	var text bytes.Buffer
	if err := rep.WriteText(&text, true); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, want := range []string{
		"racekit bench: fake (race) over 3 subjects",
		"  total  ",
		"1 subjects failed and are left out of the total:\n  broken: no trace",
		"\ns:\n  missed r3 (flaky)\n  false  s.go:6-s.go:7\n",
		"\nt:\n  missed r1\n  missed r2\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "0.75") || !strings.Contains(out, "0.50") {
		t.Errorf("text output lacks the total ratios:\n%s", out)
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Analysis != "fake" || len(back.Rows) != 3 || back.Total.True != 3 || *back.Total.Recall != 0.5 || back.Rows[2].Precision != nil {
		t.Fatalf("JSON round trip: %+v", back)
	}
}

func TestParseVet(t *testing.T) {
	data := []byte(`{"evidence":"potential","warnings":[
		{"object":"p.x","a":{"site":"/m/subj/a.go:12:4"},"b":{"site":"/m/subj/sub/b.go:3:1"}},
		{"object":"q","a":{"site":"/elsewhere/c.go:5"},"b":{"site":"/m/subj/a.go:12:4"}},
		{"object":"r","a":{"site":"?"},"b":{"site":"/m/subj/a.go:1:1"}}]}`)
	res, err := parseVet(data, "/m/subj")
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{
		{Sites: []Site{{"a.go", 12, 4}, {"sub/b.go", 3, 1}}, Evidence: "potential", Object: "p.x"},
		{Sites: []Site{{"/elsewhere/c.go", 5, 0}, {"a.go", 12, 4}}, Evidence: "potential", Object: "q"},
		{Sites: []Site{{"?", 0, 0}, {"a.go", 1, 1}}, Evidence: "potential", Object: "r"},
	}
	if !reflect.DeepEqual(res.Findings, want) {
		t.Fatalf("parseVet = %+v\nwant %+v", res.Findings, want)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "warning 2 on r") {
		t.Fatalf("notes %q", res.Notes)
	}
	for _, bad := range []string{`{"warnings":[{"a":{"site":"nowhere"},"b":{"site":"/x.go:1:1"}}]}`, `not json`} {
		if _, err := parseVet([]byte(bad), "/m"); err == nil {
			t.Errorf("parseVet(%s) accepted", bad)
		}
	}
}

func TestFailedTests(t *testing.T) {
	out := []byte("ok  \tm/a\t0.1s\n--- FAIL: TestX (0.00s)\n    x_test.go:3: boom\nFAIL\nFAIL\tm/b\t0.2s\nFAIL\tm/c\t(racekit: 2 data race(s))\nFAIL\tm/d [build failed]\n")
	got := failedTests(out)
	want := map[string]string{"m/b": "--- FAIL: TestX (0.00s)", "m/d": "[build failed]"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("failedTests = %q, want %q", got, want)
	}
}

func TestModulePath(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("// comment\nmodule example.com/m // x\n\ngo 1.26\n"), 0o666)
	if p, err := modulePath(dir); err != nil || p != "example.com/m" {
		t.Fatalf("modulePath = %q, %v", p, err)
	}
	sub := filepath.Join(dir, "a", "b")
	os.MkdirAll(sub, 0o777)
	if m, err := FindModule(sub); err != nil || m != dir {
		t.Fatalf("FindModule = %q, %v", m, err)
	}
}
