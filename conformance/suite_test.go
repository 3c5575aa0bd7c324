package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// writeSuite copies the suite's files but the excluded ones, with
// runtime.RaceDisable replaced, writes a go.mod and returns the tests the
// filter keeps, by name.
func TestWriteSuite(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	files := map[string]string{
		"b_test.go":   "package racetest\n\nfunc TestRaceB(t *testing.T) {}\nfunc TestNoRaceFailingB(t *testing.T) { runtime.RaceDisable() }\n",
		"a_test.go":   "package racetest\n\nfunc TestRaceA(t *testing.T) {}\n\tfunc TestNotAtLineStart(t *testing.T) {}\nfunc helper() {}\n",
		"cgo_test.go": "package racetest\n\nfunc TestRaceCgo(t *testing.T) {}\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	cases, err := writeSuite(src, dir, &Options{Filter: regexp.MustCompile("B|A"), Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range cases {
		names = append(names, k.Name)
	}
	if got := strings.Join(names, " "); got != "TestNoRaceFailingB TestRaceA TestRaceB" {
		t.Errorf("cases %s", got)
	}
	if k := cases[0]; k.WantRace || !k.Failing {
		t.Errorf("%s: WantRace %v, Failing %v", k.Name, k.WantRace, k.Failing)
	}
	if k := cases[1]; !k.WantRace || k.Failing {
		t.Errorf("%s: WantRace %v, Failing %v", k.Name, k.WantRace, k.Failing)
	}
	if got := out.String(); got != "left out cgo_test.go: needs cgo and internal/testenv\n" {
		t.Errorf("output %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgo_test.go")); err == nil {
		t.Errorf("cgo_test.go copied")
	}
	b, err := os.ReadFile(filepath.Join(dir, "b_test.go"))
	if err != nil || !strings.Contains(string(b), "{ func() {}() }") {
		t.Errorf("b_test.go: %v\n%s", err, b)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if want := "module racetest\n\ngo " + goLine(runtime.Version()) + "\n"; err != nil || string(mod) != want {
		t.Errorf("go.mod: %v: %q, want %q", err, mod, want)
	}
	if _, err := writeSuite(t.TempDir(), dir, &Options{}); err == nil || !strings.Contains(err.Error(), "no tests in ") {
		t.Errorf("empty suite: %v", err)
	}
}

func TestGoLine(t *testing.T) {
	for v, want := range map[string]string{
		"go1.26.8":                      "1.26.8",
		"go1.26rc1":                     "1.26rc1",
		"go1.27-devel_abc Fri Jan 2":    "1.27",
		"go1.26.8 X:nocoverageredesign": "1.26.8",
	} {
		if got := goLine(v); got != want {
			t.Errorf("goLine(%q) = %q, want %q", v, got, want)
		}
	}
}
