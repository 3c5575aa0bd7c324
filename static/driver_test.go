package static_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racekit/racekit/report/sarif/sariftest"
	"github.com/racekit/racekit/static"
)

// writeModule writes a two-package module: counter (no imports, so the
// test does not analyze the standard library) and spawn, which starts
// counter.Bump in a loop: Bump's summary reaches spawn as a fact.
func writeModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"counter/counter.go": `package counter

var N int

func Bump() { N++ }
`,
		"spawn/spawn.go": `package spawn

import "example.com/m/counter"

func Start(n int) {
	for i := 0; i < n; i++ {
		go counter.Bump()
	}
}
`,
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRun drives the whole pipeline on a module (go/packages, bottom-up
// over packages with facts) and checks every output format.
func TestRun(t *testing.T) {
	dir := writeModule(t)
	rep, err := static.Run([]string{"./..."}, static.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Fatalf("load errors: %v", rep.Errors)
	}
	if rep.Stats.Packages != 2 || rep.Stats.Facts != 2 || rep.Stats.GoSites != 1 || rep.Stats.Lines != 14 {
		t.Errorf("stats: %+v", rep.Stats)
	}
	kept := rep.Kept()
	if len(kept) != 1 {
		t.Fatalf("want 1 warning, got %d: %+v", len(kept), rep.Warnings)
	}

	var text bytes.Buffer
	if err := static.WriteText(&text, kept, dir); err != nil {
		t.Fatal(err)
	}
	wantText := "./counter/counter.go:5:15: potential race on counter.N: write in goroutine counter.Bump started at spawn.go:7:3 holding no lock; " +
		"conflicts with read at ./counter/counter.go:5:15 in another instance of the same goroutine holding no lock\n"
	if text.String() != wantText {
		t.Errorf("text:\n%s\nwant:\n%s", text.String(), wantText)
	}

	var pairs bytes.Buffer
	if err := static.WritePairs(&pairs, kept); err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(dir, "counter/counter.go") + ":5:15"
	wantPairs := `{"a":"` + site + `","b":"` + site + `","object":"counter.N"}` + "\n"
	if pairs.String() != wantPairs {
		t.Errorf("pairs: %s want %s", pairs.String(), wantPairs)
	}

	var js bytes.Buffer
	if err := static.WriteJSON(&js, rep, false); err != nil {
		t.Fatal(err)
	}
	var jr struct {
		Evidence string
		Warnings []struct {
			Object string
			A, B   struct{ Site, Kind, Thread string }
		}
		Filtered int
	}
	if err := json.Unmarshal(js.Bytes(), &jr); err != nil {
		t.Fatal(err)
	}
	if jr.Evidence != "potential" || len(jr.Warnings) != 1 || jr.Warnings[0].Object != "counter.N" ||
		jr.Warnings[0].A.Kind != "write" || jr.Warnings[0].B.Site != site || jr.Filtered != 0 {
		t.Errorf("json: %s", js.String())
	}

	var sarif bytes.Buffer
	if err := static.WriteSARIF(&sarif, kept, nil, dir); err != nil {
		t.Fatal(err)
	}
	if err := sariftest.Validate(sarif.Bytes()); err != nil {
		t.Errorf("racekit vet's SARIF is not valid SARIF 2.1.0: %v\n%s", err, sarif.String())
	}
	var log struct {
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct{ Rules []struct{ ID string } }
			}
			Results []struct {
				RuleID    string
				Locations []struct {
					PhysicalLocation struct{ ArtifactLocation struct{ URI string } }
				}
				RelatedLocations []struct {
					PhysicalLocation struct {
						Region struct{ StartLine, StartColumn int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(sarif.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) != 1 {
		t.Fatalf("sarif: %s", sarif.String())
	}
	r := log.Runs[0].Results[0]
	if r.RuleID != "RELAY-RW" || r.Locations[0].PhysicalLocation.ArtifactLocation.URI != "counter/counter.go" ||
		len(r.RelatedLocations) != 1 || r.RelatedLocations[0].PhysicalLocation.Region.StartLine != 5 ||
		r.RelatedLocations[0].PhysicalLocation.Region.StartColumn != 15 {
		t.Errorf("sarif result: %+v", r)
	}
	if !strings.Contains(sarif.String(), `"id": "RELAY-WW"`) {
		t.Errorf("sarif rules: %s", sarif.String())
	}
}

// TestRunLoadError: a package that does not type-check is reported, not
// analyzed.
func TestRunLoadError(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/bad\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.go"), []byte("package bad\n\nfunc f() { undefined() }\n"), 0o644)
	rep, err := static.Run([]string{"."}, static.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "bad.go:3:12: undefined: undefined") {
		t.Errorf("errors: %q", rep.Errors)
	}
}
