package main

import (
	"regexp"
	"strings"
	"testing"
)

// progressLine matches a progress line of racekit cmd starting with what.
func progressLine(cmd, what string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^racekit ` + cmd + `: \[[0-9.]+m?s\] ` + regexp.QuoteMeta(what))
}

// racekit vet and hatch report their progress on stderr, with the time
// since the start (fuzz: TestFuzzProgress); -q silences it and changes
// nothing else.
func TestProgressLines(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the analyses")
	}
	for _, tc := range []struct {
		cmd  string
		args []string
		want []string
	}{
		{"vet", []string{"../../static/testdata/src/figure1"}, []string{"analyzing ../../static/testdata/src/figure1", "analyzed "}},
		{"hatch", []string{"--json", "--record-seed", "4", "-j", "2", "./testdata/fuzzrand"}, []string{"recording 1/1: ", "round 1: ", "clip 1/"}},
	} {
		out, stderr, code := racekit(t, append([]string{tc.cmd}, tc.args...)...)
		for _, w := range tc.want {
			if !progressLine(tc.cmd, w).MatchString(stderr) {
				t.Errorf("racekit %s: stderr lacks a progress line %q:\n%s", tc.cmd, w, stderr)
			}
		}
		qout, qerr, qcode := racekit(t, append([]string{tc.cmd, "-q"}, tc.args...)...)
		if strings.Contains(qerr, "racekit "+tc.cmd+": [") || qcode != code {
			t.Errorf("racekit %s -q: exit %d (want %d), stderr:\n%s", tc.cmd, qcode, code, qerr)
		}
		if tc.cmd == "vet" && qout != out {
			t.Errorf("racekit vet -q: stdout %q, want %q", qout, out)
		}
	}
}
