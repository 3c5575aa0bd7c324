package truth

import (
	"testing"
)

// TestLineOf: every form racekit names a statement in maps to the
// subject's line (the table scored every pair false while pairs carried
// columns and access kinds and the mapping read the last number as the line).
func TestLineOf(t *testing.T) {
	s := &Subject{Dir: "/src/sub"}
	for _, site := range []string{"/src/sub/a.go:56", "/src/sub/a.go:56:2", "/src/sub/a.go:56:2:w", "/src/sub/a.go:56:r"} {
		l, ok := s.LineOf(site)
		if !ok || l.File != "a.go" || l.Line != 56 {
			t.Errorf("LineOf(%q) = %+v, %v; want a.go:56", site, l, ok)
		}
	}
	if _, ok := s.LineOf("/elsewhere/a.go:56:2:w"); ok {
		t.Errorf("a file outside the subject was mapped")
	}
	p, ok := s.PairOf("/src/sub/a.go:56:2:w~/src/sub/b.go:64:9:r")
	if !ok || p != MakePair(Line{File: "a.go", Line: 56}, Line{File: "b.go", Line: 64}) {
		t.Errorf("PairOf: %+v %v", p, ok)
	}
}
