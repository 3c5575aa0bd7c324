package verdictdiff

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func TestParseGoTest(t *testing.T) {
	out := []byte(`--- FAIL: TestX (0.00s)
FAIL
FAIL	example.com/m/a	0.012s
ok  	example.com/m/b	0.034s
?   	example.com/m/c	[no test files]
FAIL	example.com/m/d [build failed]
FAIL	example.com/m/b	(racekit: 2 data races)
FAIL	example.com/m/e	(racekit: 1 data race)
ok  	example.com/m/f	(cached)
`)
	want := map[string]verdict{
		"example.com/m/a": {result: "FAIL"},
		"example.com/m/b": {result: "ok", races: 2},
		"example.com/m/c": {result: "no tests"},
		"example.com/m/d": {result: "FAIL"},
		"example.com/m/e": {races: 1},
		"example.com/m/f": {result: "ok"},
	}
	if got := parseGoTest(out); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// merge keeps the packages with a plain verdict, by path; a package with
// no instrumented verdict is "missing".
func TestMergeTally(t *testing.T) {
	plain := map[string]verdict{"p/b": {result: "ok"}, "p/a": {result: "ok"}, "p/c": {result: "FAIL"}, "p/d": {races: 1}, "p/e": {result: "ok"}}
	rk := map[string]verdict{"p/a": {result: "ok", races: 3}, "p/b": {result: "FAIL"}, "p/c": {result: "FAIL"}, "p/e": {races: 1}}
	got := merge("m", plain, rk)
	want := []Package{
		{"m", "p/a", "ok", "ok", 3},
		{"m", "p/b", "ok", "FAIL", 0},
		{"m", "p/c", "FAIL", "FAIL", 0},
		{"m", "p/e", "ok", "missing", 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if passing, kept := tally(got); passing != 3 || kept != 1 {
		t.Errorf("tally: %d passing, %d kept; want 3, 1", passing, kept)
	}
}

func TestParseSpec(t *testing.T) {
	for spec, want := range map[string]string{
		"self":                             "self ./...",
		"self:./a,./b/...":                 "self ./a ./b/...",
		"golang.org/x/sync@v0.1.0":         "golang.org/x/sync@v0.1.0 ./...",
		"golang.org/x/mod@v0.2.0:./semver": "golang.org/x/mod@v0.2.0 ./semver",
	} {
		mod, pats := parseSpec(spec)
		if got := mod + " " + strings.Join(pats, " "); got != want {
			t.Errorf("parseSpec(%q) = %s, want %s", spec, got, want)
		}
	}
	if _, _, _, err := fetch("nosuchversion", t.TempDir()); err == nil || err.Error() != "want MODULE@VERSION[:PATTERNS] or self[:PATTERNS]" {
		t.Errorf("fetch of a spec without a version: %v", err)
	}
}

func TestPrint(t *testing.T) {
	res := &Result{Packages: []Package{
		{"m", "p/a", "ok", "ok", 3},
		{"m", "p/b", "ok", "FAIL", 0},
		{"m", "p/c", "FAIL", "FAIL", 0},
	}, Passing: 2, Kept: 1}
	var b strings.Builder
	Print(&b, res)
	want := fmt.Sprintf("%-60s %-9s %-9s %s\n", "package", "plain", "racekit", "races") +
		fmt.Sprintf("%-60s %-9s %-9s %d\n", "p/a", "ok", "ok", 3) +
		fmt.Sprintf("%-60s %-9s %-9s %d  BEHAVIOUR CHANGED\n", "p/b", "ok", "FAIL", 0) +
		fmt.Sprintf("%-60s %-9s %-9s %d\n", "p/c", "FAIL", "FAIL", 0) +
		"\n1 of 2 packages whose tests pass plainly pass instrumented (50.0%)\n"
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	b.Reset()
	Print(&b, &Result{})
	if !strings.HasSuffix(b.String(), "\n0 of 0 packages whose tests pass plainly pass instrumented (0.0%)\n") {
		t.Errorf("empty: %q", b.String())
	}
}

// Run over self with a stand-in for racekit: the plain run's verdicts,
// the stand-in's, the logs kept in Work, the progress lines and the JSON.
func TestRun(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in for racekit is a shell script")
	}
	mod := t.TempDir()
	files := map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.21\n",
		"a/a.go":      "package a\n",
		"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n",
		"b/b.go":      "package b\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) {}\n",
		"c/c.go":      "package c\n",
		"racekit":     "#!/bin/sh\necho \"$@\" > args\nprintf 'ok  \\texample.com/m/a\\t0.01s\\nFAIL\\texample.com/m/b\\t(racekit: 2 data races)\\nFAIL\\texample.com/m/b\\t0.02s\\n'\nexit 1\n",
	}
	for name, data := range files {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(mod)
	work := filepath.Join(t.TempDir(), "work")
	var logs []string
	res, err := Run(Options{
		Specs: []string{"self:./...", "bad"}, Racekit: filepath.Join(mod, "racekit"), Work: work,
		Logf: func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Package{
		{"self", "example.com/m/a", "ok", "ok", 0},
		{"self", "example.com/m/b", "ok", "FAIL", 2},
		{"self", "example.com/m/c", "no tests", "missing", 0},
	}
	if !reflect.DeepEqual(res.Packages, want) || res.Passing != 2 || res.Kept != 1 {
		t.Errorf("got %v, %d passing, %d kept\nwant %v, 2, 1", res.Packages, res.Passing, res.Kept, want)
	}
	if len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0].Error(), "bad: want MODULE@VERSION") {
		t.Errorf("errors %v", res.Errors)
	}
	if len(logs) != 3 || logs[0] != "self: ./..." || !strings.HasPrefix(logs[1], "self: done in ") || logs[2] != res.Errors[0].Error() {
		t.Errorf("log lines %q", logs)
	}
	if b, err := os.ReadFile(filepath.Join(mod, "args")); err != nil || string(b) != "test ./... -- -timeout=10m\n" {
		t.Errorf("racekit's arguments: %q, %v", b, err)
	}
	for _, log := range []string{"m0.plain.log", "m0.racekit.log"} {
		if _, err := os.Stat(filepath.Join(work, log)); err != nil {
			t.Errorf("log not kept: %v", err)
		}
	}
	js := filepath.Join(t.TempDir(), "r.json")
	if err := WriteJSON(js, res); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(js)
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back["passing_plain"] != 2.0 || back["passing_instrumented"] != 1.0 || len(back["specs"].([]any)) != 2 || len(back) != 4 {
		t.Errorf("JSON:\n%s", b)
	}
}
