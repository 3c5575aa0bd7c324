package harness

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/racekit/racekit/bench/truth"
)

// A trace as racekit test writes it, in racekit's text format: two forked
// goroutines race on x (a.go:12 against a.go:15), and a third access is
// ordered by the join.
const dynTrace = `#!addr prog 0x0 "program example.com/m/bench/subjects/subj.test"
T0|fork(T1)
T0|fork(T2)
T1|w(x)|%[1]s/a.go:12:4
T2|r(x)|%[1]s/a.go:15:2
T2|w(x)|%[1]s/a.go:15:2
T0|join(T1)
T0|join(T2)
T0|r(x)|%[1]s/a.go:20:2
`

func TestAnalyzeTraceAndCollect(t *testing.T) {
	mod := t.TempDir()
	subj := filepath.Join(mod, "bench", "subjects", "subj")
	os.MkdirAll(subj, 0o777)
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/m\n"), 0o666)
	src := "package subj\n\nvar x int\n\nfunc A() {\n" + strings.Repeat("\tx++\n", 16) + "}\n"
	lines := strings.Split(src, "\n")
	lines[11] += " // racekit:race id=r kind=race benign=false"
	lines[14] += " // racekit:race id=r kind=race benign=false"
	os.WriteFile(filepath.Join(subj, "a.go"), []byte(strings.Join(lines, "\n")), 0o666)
	s, err := truth.Load(subj)
	if err != nil {
		t.Fatal(err)
	}
	tracePath := filepath.Join(t.TempDir(), "subj.rktx")
	os.WriteFile(tracePath, []byte(strings.ReplaceAll(dynTrace, "%[1]s", subj)), 0o666)

	tr, err := analyzeTrace(tracePath, Detectors["hb"])
	if err != nil {
		t.Fatal(err)
	}
	if tr.program != "example.com/m/bench/subjects/subj" || tr.events != 8 || tr.goroutines != 3 || len(tr.races) != 1 {
		t.Fatalf("analyzeTrace = %+v", tr)
	}
	d := &Dynamic{Algo: "hb", ModDir: mod, module: "example.com/m", traces: []*traceResult{tr}}
	res, err := d.Analyze(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{{Sites: []Site{{"a.go", 12, 4}, {"a.go", 15, 2}}, Evidence: "observed", Count: 2}}
	if !reflect.DeepEqual(res.Findings, want) {
		t.Fatalf("findings %+v, want %+v", res.Findings, want)
	}
	row := Score(s, d.Kinds(), res)
	if row.True != 1 || row.False != 0 || row.Missed != 0 || row.Events != 8 {
		t.Fatalf("row %+v", row)
	}
	// A subject without a trace is an error naming it.
	other := *s
	other.Dir = filepath.Join(mod, "bench", "subjects", "other")
	if _, err := d.Analyze(context.Background(), &other); err == nil || !strings.Contains(err.Error(), "example.com/m/bench/subjects/other") {
		t.Fatalf("Analyze without a trace = %v", err)
	}
}
