package main

import (
	"testing"

	"github.com/racekit/racekit/bench/truth"
)

// TestLineOf: every form racekit fuzz names a statement in maps to the
// subject's line (the table scored every pair false while pairs carried
// columns and access kinds and lineOf read the last number as the line).
func TestLineOf(t *testing.T) {
	s := &truth.Subject{Dir: "/src/sub"}
	for _, site := range []string{"/src/sub/a.go:56", "/src/sub/a.go:56:2", "/src/sub/a.go:56:2:w", "/src/sub/a.go:56:r"} {
		l, ok := lineOf(s, site)
		if !ok || l.File != "a.go" || l.Line != 56 {
			t.Errorf("lineOf(%q) = %+v, %v; want a.go:56", site, l, ok)
		}
	}
	if _, ok := lineOf(s, "/elsewhere/a.go:56:2:w"); ok {
		t.Errorf("a file outside the subject was mapped")
	}
	p, ok := pairLines(s, "/src/sub/a.go:56:2:w~/src/sub/b.go:64:9:r")
	if !ok || p != truth.MakePair(truth.Line{File: "a.go", Line: 56}, truth.Line{File: "b.go", Line: 64}) {
		t.Errorf("pairLines: %+v %v", p, ok)
	}
}
