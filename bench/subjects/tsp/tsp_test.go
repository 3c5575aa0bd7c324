package tsp

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

func tourLength(s *Solver, path []int) int {
	l := 0
	for i := range path {
		l += s.dist[path[i]][path[(i+1)%len(path)]]
	}
	return l
}

// One worker finds the brute-force optimum, and its path has that length.
func TestSequentialOptimal(t *testing.T) {
	cfg := Config{Cities: 7, Threads: 1, Seed: 5}
	r := Run(cfg)
	if want := BruteForce(cfg); r.Length != want {
		t.Fatalf("length %d, brute force %d", r.Length, want)
	}
	if l := tourLength(NewSolver(cfg), r.Path); l != r.Length || len(r.Path) != 7 {
		t.Fatalf("path %v has length %d, reported %d", r.Path, l, r.Length)
	}
}

// Several workers: the benign race on the bound cannot change the answer.
func TestConcurrentOptimal(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if want := BruteForce(cfg); r.Length != want {
		t.Fatalf("length %d, brute force %d", r.Length, want)
	}
}
