package critical

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// A thread alone never fails its check.
func TestAlone(t *testing.T) {
	s := &Section{}
	if v := s.section0(100); v != 0 {
		t.Fatalf("section0 alone: %d violations", v)
	}
	if v := s.section1(100); v != 0 || s.turn != 1 {
		t.Fatalf("section1 alone: %d violations, turn %d", v, s.turn)
	}
}

// Both threads: the last store wins, violations are possible.
func TestBoth(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Final != 0 && r.Final != 1 {
		t.Fatalf("final turn %d, want 0 or 1", r.Final)
	}
	for i, v := range r.Violations {
		if v < 0 || v > cfg.Iterations {
			t.Fatalf("thread %d: %d violations out of %d rounds", i, v, cfg.Iterations)
		}
	}
	t.Logf("violations: %v", r.Violations)
}
