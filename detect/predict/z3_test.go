//go:build z3 && cgo

package predict

import (
	"slices"
	"testing"

	"github.com/racekit/racekit/solver"
)

func z3Solver() solver.Backend { return solver.NewZ3() }

// TestZ3BackendOnSmallTraces runs mcm and rdit with Z3 as the solver of
// every window on small random traces: the site pairs equal brute force's
// (and so the pure-Go solver's, TestExactOnSmallTraces), and every witness
// Z3's models give passes CheckWitness.
func TestZ3BackendOnSmallTraces(t *testing.T) {
	count := 200
	if testing.Short() {
		count = 80
	}
	races, _, _ := exactOnSmallTraces(t, count, z3Solver)
	if races == 0 {
		t.Fatal("the sample exercises nothing")
	}
	t.Logf("%d traces, %d races, Z3 agrees with brute force", count, races)
}

// TestZ3BackendOnWindows is the same comparison on the windows of a
// generated trace (windows of 400 events, no conflict budget so that neither
// solver answers unknown): Z3 and the pure-Go solver answer every query
// alike, so the detectors report the same site pairs with the same counts.
func TestZ3BackendOnWindows(t *testing.T) {
	n := int64(1_000)
	tr, _ := genTrace(t, n)
	for _, mk := range []func(Options) *Detector{
		func(o Options) *Detector { return NewMCM(nil, o) },
		func(o Options) *Detector { return NewRDIT(nil, o) },
	} {
		goD := mk(Options{Window: 400, Conflicts: -1})
		zD := mk(Options{Window: 400, Conflicts: -1, Solver: z3Solver})
		goPairs, zPairs := runDetector(tr, goD), runDetector(tr, zD)
		if !slices.Equal(goPairs, zPairs) {
			t.Errorf("%s: Go solver %v, Z3 %v", goD.name, label(tr, goPairs), label(tr, zPairs))
		}
		gs, zs := goD.Stats(), zD.Stats()
		for _, k := range []string{"queries", "sat", "unsat", "unknown"} {
			if gs[k] != zs[k] {
				t.Errorf("%s: %s Go %d, Z3 %d", goD.name, k, gs[k], zs[k])
			}
		}
		t.Logf("%s: %d races, %d queries, %d windows", goD.name, len(goPairs), gs["queries"], gs["windows"])
		if gs["queries"] == 0 {
			t.Errorf("%s: no query asked", goD.name)
		}
	}
}

// BenchmarkSolverBackends is whole-trace mcm on one generated trace with
// the default windows and no conflict budget, with the pure-Go solver and
// with Z3 in the same run; events/s and queries/s are the numbers to
// compare.
func BenchmarkSolverBackends(b *testing.B) {
	tr, _ := genTrace(b, 1_000)
	for _, be := range []struct {
		name string
		mk   func() solver.Backend
	}{{"go", nil}, {"z3", z3Solver}} {
		b.Run(be.name, func(b *testing.B) {
			var q int64
			for b.Loop() {
				d := NewMCM(nil, Options{Conflicts: -1, Solver: be.mk})
				runDetector(tr, d)
				q += d.Stats()["queries"]
			}
			b.ReportMetric(float64(len(tr.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(q)/b.Elapsed().Seconds(), "queries/s")
		})
	}
}
