package main

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
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

// An analysis that goes on says how many events it has read, every
// progressEvery (shortened here); with -q it says nothing.
func TestAnalysisProgress(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 10 * time.Millisecond
	for _, quiet := range []bool{false, true} {
		var buf syncBuffer
		p := &progressLines{cmd: "test", quiet: quiet, start: time.Now(), w: &buf}
		progress, stop := p.analysis("/tmp/x/pkg.test.12.rkt")
		if progress != nil {
			progress(4096)
		}
		deadline := time.Now().Add(5 * time.Second)
		for !quiet && !strings.Contains(buf.String(), "\n") && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(30 * time.Millisecond)
		stop()
		got := buf.String()
		if quiet && got != "" {
			t.Errorf("-q: %q", got)
		}
		if !quiet && !regexp.MustCompile(`^racekit test: \[[^\]]+\] analyzing pkg\.test\.12\.rkt: 4096 events so far \(`).MatchString(got) {
			t.Errorf("progress lines %q", got)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for progressLines' goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
