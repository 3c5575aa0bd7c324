package solver

import (
	"math/rand/v2"
	"testing"
)

// backends lists the solvers the cross-checks and benchmarks build into;
// the z3 build tag adds Z3.
var backends = []struct {
	name string
	make func() Backend
}{{"go", func() Backend { return New() }}}

// mcmFormula is a formula shaped like the maximal causal model's
// (section 4.4.4): g goroutines of m events each in program order
// (Algorithm 7), critical sections of a few locks that must not overlap
// (Algorithm 9: rel1 < acq2 ∨ rel2 < acq1), and read-consistency-like
// clauses (Algorithm 10: a read after one of its candidate writes, with
// no other write in between, as Tseitin-free 3-literal clauses); queries
// are pairs of events of different goroutines, asked with Adjacent.
type mcmFormula struct {
	n       int
	clauses [][]alit
	queries [][2]Var
}

func makeMCM(r *rand.Rand, g, m, locks, reads, queries int) mcmFormula {
	f := mcmFormula{n: g * m}
	ev := func(t, i int) Var { return Var(t*m + i) }
	atom := func(a, b Var) alit { return alit{a: a, b: b, bool: -1} }
	// The observed run: a random interleaving, which every constraint
	// below holds in (the formula is satisfiable, as Φ_mcm always is).
	obs := make([]int, f.n)
	next := make([]int, g)
	for k := range f.n {
		t := r.IntN(g)
		for next[t] == m {
			t = (t + 1) % g
		}
		obs[ev(t, next[t])] = k
		next[t]++
	}
	for t := range g {
		for i := 0; i+1 < m; i++ {
			f.clauses = append(f.clauses, []alit{atom(ev(t, i), ev(t, i+1))})
		}
	}
	type cs struct{ acq, rel Var }
	byLock := make([][]cs, locks)
	for t := range g {
		for i := 0; i+3 < m; i += 3 + r.IntN(3) {
			l := r.IntN(locks)
			c := cs{ev(t, i), ev(t, i+1+r.IntN(2))}
			overlap := false
			for _, d := range byLock[l] {
				if obs[c.acq] < obs[d.rel] && obs[d.acq] < obs[c.rel] {
					overlap = true
				}
			}
			if !overlap {
				byLock[l] = append(byLock[l], c)
			}
		}
	}
	for _, sections := range byLock {
		for i := range sections {
			for j := i + 1; j < len(sections); j++ {
				a, b := sections[i], sections[j]
				if a.acq/Var(m) != b.acq/Var(m) { // different goroutines
					f.clauses = append(f.clauses, []alit{atom(a.rel, b.acq), atom(b.rel, a.acq)})
				}
			}
		}
	}
	for range reads {
		rd, w1, w2 := Var(r.IntN(f.n)), Var(r.IntN(f.n)), Var(r.IntN(f.n))
		if obs[w1] >= obs[rd] || w2 == w1 || w2 == rd || (obs[w1] < obs[w2] && obs[w2] < obs[rd]) {
			continue
		}
		// The read sees w1: after it, and the other write w2 not between.
		f.clauses = append(f.clauses, []alit{atom(w1, rd)}, []alit{atom(w2, w1), atom(rd, w2)})
	}
	for range queries {
		t1, t2 := r.IntN(g), r.IntN(g-1)
		if t2 >= t1 {
			t2++
		}
		f.queries = append(f.queries, [2]Var{ev(t1, r.IntN(m)), ev(t2, r.IntN(m))})
	}
	return f
}

// BenchmarkRaceQueries builds an MCM-shaped formula (4 goroutines × 40
// events, 3 locks) and asks 20 race queries on it, in every backend; the
// number to compare is queries/s.
func BenchmarkRaceQueries(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	f := makeMCM(r, 4, 40, 3, 40, 20)
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			sat := 0
			for b.Loop() {
				s := be.make()
				bf := build(s, formula{n: f.n, clauses: f.clauses})
				for _, q := range f.queries {
					if s.Solve(Adjacent(s, bf.vars[q[0]], bf.vars[q[1]], f.n)) == Sat {
						sat++
					}
				}
				if c, ok := s.(interface{ Close() }); ok {
					c.Close()
				}
			}
			b.ReportMetric(float64(len(f.queries))*float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			b.ReportMetric(float64(sat)/float64(b.N), "sat/op")
		})
	}
}
