package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// measured is a module's result with a -race run and k racekit runs, same
// of union tests the same in all.
func measured(path, verdict string, k, same, union int) *ModuleResult {
	m := &ModuleResult{Path: path, Version: "v1.0.0", GoLine: "1.20", Race: &RunSummary{Verdict: "ok", NTests: union, Run: &Run{}}}
	for i := 0; i < k; i++ {
		m.Racekit = append(m.Racekit, RunSummary{Verdict: verdict, NTests: union, Run: &Run{}})
	}
	m.Compare = &Comparison{Tests: union, Union: union, Same: same}
	return m
}

// rowOf is the table's row of module path in a rendered README.
func rowOf(t *testing.T, readme, path string) string {
	t.Helper()
	for _, l := range strings.Split(readme, "\n") {
		if strings.HasPrefix(l, "| "+path+" |") {
			return l
		}
	}
	t.Fatalf("no row for %s in:\n%s", path, readme)
	return ""
}

func TestMerge(t *testing.T) {
	dir := t.TempDir()
	x, y, z := corpus[0].Path, corpus[1].Path, corpus[2].Path
	// The older file, plain JSON: x and y measured (3 runs), z an error.
	old := &Results{Command: "go run ./bench/corpus -only x,y,z", Racekit: "aaaa111", Go: "go1.26.0", Modules: []*ModuleResult{
		measured(x, "ok", 3, 10, 10),
		measured(y, "ok", 3, 7, 8),
		{Path: z, Version: "v1.0.0", Error: "go mod download: old error"},
	}}
	// The newer one, gzipped: x again (1 run), y and z errors only.
	newer := &Results{Command: "go run ./bench/corpus -only x,y,z -runs 1", Racekit: "bbbb222", Go: "go1.26.0", Modules: []*ModuleResult{
		measured(x, "FAIL", 1, 4, 5),
		{Path: y, Version: "v1.0.0", Error: "go mod download: a proxy timeout"},
		{Path: z, Version: "v1.0.0", Error: "go mod download: new error"},
	}}
	f1, f2 := filepath.Join(dir, "results.json"), filepath.Join(dir, "results-B.json.gz")
	for f, r := range map[string]*Results{f1: old, f2: newer} {
		if err := writeResults(f, r); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(f2); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("%s is not gzipped", f2)
	}

	res, err := mergeResults(f1+","+f2, "go run ./bench/corpus -merge ...")
	if err != nil {
		t.Fatal(err)
	}
	if res.Racekit != "merged" || res.Command != "go run ./bench/corpus -merge ..." || len(res.Merged) != 2 {
		t.Errorf("racekit %q, command %q, merged %+v", res.Racekit, res.Command, res.Merged)
	}
	got := map[string]*ModuleResult{}
	for _, m := range res.Modules {
		got[m.Path] = m
	}
	if len(res.Modules) != 3 {
		t.Fatalf("%d modules, want 3", len(res.Modules))
	}
	if m := got[x]; m.From != f2 || m.RacekitAt != "bbbb222" || len(m.Racekit) != 1 {
		t.Errorf("x: from %s at %s, %d runs; want the later file's, 1 run", m.From, m.RacekitAt, len(m.Racekit))
	}
	if m := got[y]; m.From != f1 || m.RacekitAt != "aaaa111" || m.Race == nil || m.Error != "" {
		t.Errorf("y: from %s at %s, error %q; want the earlier file's measurement", m.From, m.RacekitAt, m.Error)
	}
	if m := got[z]; m.From != f2 || m.Error != "go mod download: new error" {
		t.Errorf("z: from %s, error %q; want the later error", m.From, m.Error)
	}
	if res.Merged[0].Rows != 1 || res.Merged[1].Rows != 2 {
		t.Errorf("rows per file %d, %d; want 1, 2", res.Merged[0].Rows, res.Merged[1].Rows)
	}

	// Written and read back (gzipped), then rendered.
	out := filepath.Join(dir, "latest.json.gz")
	if err := writeResults(out, res); err != nil {
		t.Fatal(err)
	}
	back, err := readResults(out)
	if err != nil {
		t.Fatal(err)
	}
	readme := renderReadme(back, readmeOpts{outLink: "latest.json.gz"})
	for _, want := range []string{
		"merges the results of 2 partial runs",
		"1. `" + f1 + "`: racekit `aaaa111`; 1 row;",
		"2. `" + f2 + "`: racekit `bbbb222`; 2 rows;",
		"| racekit at (file) |",
		"| racekit runs | same in all runs |",
		"same verdict in every racekit run of their module: 11 (84.6%)",
		"1 with 3 runs (7 of 8 tests the same in all, 87.5%); 1 with 1 run (4 of 5 tests the same in all, 80.0%)",
		"an error only: 1",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q:\n%s", want, readme)
		}
	}
	if strings.Contains(readme, "×3") || strings.Contains(readme, "3/3") || strings.Contains(readme, "3 of 3") {
		t.Errorf("README claims 3 runs:\n%s", readme)
	}
	if r := rowOf(t, readme, x); !strings.Contains(r, "`bbbb222` (2)") || !strings.Contains(r, "| FAIL |") || !strings.Contains(r, "4/5 (1 run)") {
		t.Errorf("x's row %q", r)
	}
	if r := rowOf(t, readme, y); !strings.Contains(r, "`aaaa111` (1)") || !strings.Contains(r, "7/8 (3 runs)") {
		t.Errorf("y's row %q", r)
	}
	if r := rowOf(t, readme, z); !strings.Contains(r, "`bbbb222` (2)") || !strings.Contains(r, "new error") {
		t.Errorf("z's row %q", r)
	}

	// FILE@REV gives the commit racekit was built from.
	res, err = mergeResults(f1+"@0123abc,"+f2, "")
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Modules[1]; m.Path != y || m.RacekitAt != "0123abc" || m.From != f1 || res.Merged[0].Recorded != "aaaa111" {
		t.Errorf("y with @0123abc: %s at %s from %s (recorded %q)", m.Path, m.RacekitAt, m.From, res.Merged[0].Recorded)
	}
}

func TestMergeBadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := writeResults(good, &Results{Modules: []*ModuleResult{measured(corpus[0].Path, "ok", 3, 1, 1)}}); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"bad.json":    "{not json",
		"bad.json.gz": "{}",             // not gzip
		"empty.json":  `{"modules":[]}`, // no modules
	}
	for name, content := range files {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := mergeResults(good+","+f, ""); err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
	}
	missing := filepath.Join(dir, "missing.json")
	if _, err := mergeResults(good+","+missing, ""); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: error %v, want one naming it", err)
	}
}

// A render of results whose modules all had 3 racekit runs says what it
// always did; one with 1 run each says 1.
func TestRenderRunCounts(t *testing.T) {
	three := &Results{Command: "c", Modules: []*ModuleResult{measured(corpus[0].Path, "ok", 3, 2, 2)}}
	r := renderReadme(three, readmeOpts{})
	for _, want := range []string{"(3 times)", "| racekit ×3 | same 3/3 |", "same verdict in 3 of 3 racekit runs: 2 (100.0%)", "| 2/2 |", "not run (time)"} {
		if !strings.Contains(r, want) {
			t.Errorf("3 runs: README lacks %q", want)
		}
	}
	if strings.Contains(r, "racekit at (file)") || strings.Contains(r, "(3 runs)") {
		t.Errorf("3 runs, not merged: merge wording in README")
	}
	one := &Results{Command: "c", Modules: []*ModuleResult{measured(corpus[0].Path, "ok", 1, 2, 2)}}
	r = renderReadme(one, readmeOpts{})
	for _, want := range []string{"(once)", "| racekit ×1 | same 1/1 |", "same verdict in 1 of 1 racekit runs: 2 (100.0%)"} {
		if !strings.Contains(r, want) {
			t.Errorf("1 run: README lacks %q", want)
		}
	}
	if strings.Contains(r, "3/3") || strings.Contains(r, "×3") {
		t.Errorf("1 run: README claims 3")
	}
}

// A merge recomputes each row's comparison from its test rows, by the
// comparison's current rules: names with an address in a middle component
// (unstable from run to run) drop out of an older row's differences.
func TestRecompare(t *testing.T) {
	m := measured(corpus[0].Path, "ok", 3, 1, 3)
	m.TestRows = []TestRow{
		{Test: "p T", Race: Pass, Racekit: "pass pass pass"},
		{Test: "p T/[1]{0xc000072780}/s", Race: Pass, Racekit: "missing missing missing"},
		{Test: "p T/[1]{0x16f5dd082270}/s", Race: Missing, Racekit: "pass missing missing"},
		{Test: "p U", Race: Pass, Racekit: "pass fail pass", Races: "0 | 0 1 0"},
	}
	m.Compare.Differ = []TestDiff{{Test: "p T/[1]{0xc000072780}/s"}, {Test: "p T/[1]{0x16f5dd082270}/s"}, {Test: "p U"}}
	recompare(m)
	c := m.Compare
	if c.Union != 2 || c.Same != 1 || len(c.Differ) != 1 || c.Differ[0].Test != "p U" || c.Unstable != 2 {
		t.Fatalf("recompared: %+v; want union 2, same 1, p U the one difference, 2 unstable", c)
	}
	if got := c.Differ[0].RacekitRaces; len(got) != 3 || got[1] != 1 {
		t.Errorf("p U's races per run = %v, want [0 1 0]", got)
	}
}
