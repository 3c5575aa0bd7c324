package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racekit/racekit/detect/anomaly"
)

func TestAnomaliesPECANFigure1(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := racekit(t, "anomalies", "--kinds=race", "--html", dir, "testdata/pecan-fig1.rktx")
	if code != exitRaces {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitRaces, stderr)
	}
	var res struct {
		Anomalies []anomaly.Anomaly `json:"anomalies"`
		Stats     map[string]int64  `json:"stats"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	var got []string
	for _, a := range res.Anomalies {
		got = append(got, a.Pattern+" "+strings.Join(a.Sites, ","))
	}
	want := []string{"race-w-r fig1.go:2,fig1.go:5", "race-w-w fig1.go:6,fig1.go:2", "race-w-r fig1.go:7,fig1.go:3"}
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("anomalies %q, want %q", got, want)
	}
	var order []string
	for _, s := range res.Anomalies[2].Clip.Steps {
		if s.Op == "r" || s.Op == "w" {
			order = append(order, strings.TrimPrefix(s.Site, "fig1.go:"))
		}
	}
	if strings.Join(order, ",") != "1,5,2,6,7,3" {
		t.Errorf("clip of (3,7) runs lines %v, want 1,5,2,6,7,3", order)
	}
	for _, f := range []string{"index.html", "clip-001-race-w-r.html", "clip-003-race-w-r.html"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !strings.Contains(string(b), "</html>") {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestAnomaliesExitCodes(t *testing.T) {
	if _, _, code := racekit(t, "anomalies", "--kinds=atomicity", "testdata/pecan-fig1.rktx"); code != exitOK {
		t.Errorf("no atomicity violation: exit %d, want 0", code)
	}
	if _, _, code := racekit(t, "anomalies", "--kinds=bogus", "testdata/pecan-fig1.rktx"); code != exitUsage {
		t.Errorf("bad kind: exit %d, want 2", code)
	}
	if _, _, code := racekit(t, "anomalies"); code != exitUsage {
		t.Errorf("no trace: exit %d, want 2", code)
	}
	bad := filepath.Join(t.TempDir(), "bad.pat")
	os.WriteFile(bad, []byte("p T=a-b SV=s-s AR=u-v AT=r-q\n"), 0o644)
	_, stderr, code := racekit(t, "anomalies", "--patterns", bad, "testdata/pecan-fig1.rktx")
	if code != exitError || !strings.Contains(stderr, "bad.pat:1:28: access type \"q\"") {
		t.Errorf("bad pattern file: exit %d, stderr %q", code, stderr)
	}
}
