//go:build z3 && cgo

package solver

import (
	"math/rand/v2"
	"testing"
)

func init() {
	backends = append(backends, struct {
		name string
		make func() Backend
	}{"z3", func() Backend { return NewZ3() }})
}

// TestZ3AgreesWithBruteForce runs the brute-force comparison against Z3
// too, so that the cross-check below rests on a checked backend.
func TestZ3AgreesWithBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 500 {
		n := 2 + r.IntN(6)
		nb := r.IntN(3)
		f := randomFormula(r, n, nb, 1+r.IntN(4*n), 1+r.IntN(3))
		z := NewZ3()
		b := build(z, f)
		got := z.Solve(b.lits(f.assume)...)
		if want := bruteForce(f.n, f.nb, f.clauses, f.assume); (got == Sat) != want {
			t.Fatalf("formula %d %v assuming %v: z3 %v, brute force %v", i, f.clauses, f.assume, got, want)
		}
		if got == Sat {
			checkModel(t, b, f, f.clauses, f.assume)
		}
		z.Close()
	}
}

// TestSolverAgreesWithZ3 compares the two backends on formulas too large
// for brute force: random CNFs over 15..60 order variables near the
// satisfiability threshold, and MCM-shaped formulas with race queries;
// every model of either must satisfy the formula.
func TestSolverAgreesWithZ3(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	var sat, unsat int
	for i := range 300 {
		n := 15 + r.IntN(46)
		f := randomFormula(r, n, 3, n/2+r.IntN(2*n), 3)
		g, z := New(), NewZ3()
		bg, bz := build(g, f), build(z, f)
		rg, rz := g.Solve(bg.lits(f.assume)...), z.Solve(bz.lits(f.assume)...)
		if rg != rz || rg == Unknown {
			t.Fatalf("formula %d (%d vars, %d clauses): go %v, z3 %v", i, n, len(f.clauses), rg, rz)
		}
		if rg == Sat {
			sat++
			checkModel(t, bg, f, f.clauses, f.assume)
			checkModel(t, bz, f, f.clauses, f.assume)
		} else {
			unsat++
		}
		z.Close()
	}
	for i := range 30 {
		m := makeMCM(r, 2+r.IntN(3), 10+r.IntN(20), 1+r.IntN(3), r.IntN(30), 10)
		g, z := New(), NewZ3()
		bg, bz := build(g, formula{n: m.n, clauses: m.clauses}), build(z, formula{n: m.n, clauses: m.clauses})
		for _, q := range m.queries {
			sg := Adjacent(g, bg.vars[q[0]], bg.vars[q[1]], m.n)
			sz := Adjacent(z, bz.vars[q[0]], bz.vars[q[1]], m.n)
			rg, rz := g.Solve(sg), z.Solve(sz)
			if rg != rz || rg == Unknown {
				t.Fatalf("mcm formula %d query %v: go %v, z3 %v", i, q, rg, rz)
			}
			if rg == Sat {
				sat++
				for _, b := range []*built{bg, bz} {
					pos := b.s.Positions()
					if d := pos[q[0]] - pos[q[1]]; d != 1 && d != -1 {
						t.Fatalf("mcm formula %d query %v: not adjacent in %v", i, q, pos)
					}
					checkModel(t, b, formula{n: m.n}, m.clauses, nil)
				}
			} else {
				unsat++
			}
		}
		z.Close()
	}
	t.Logf("%d sat, %d unsat", sat, unsat)
	if sat == 0 || unsat == 0 {
		t.Errorf("one-sided sample: %d sat, %d unsat", sat, unsat)
	}
}
