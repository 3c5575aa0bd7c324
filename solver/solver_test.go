package solver

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// alit is a backend-independent literal of a test formula: an order atom
// O_a < O_b (bool < 0) or plain Boolean number bool, possibly negated.
type alit struct {
	a, b Var
	bool int
	neg  bool
}

func (l alit) String() string {
	s := ""
	if l.neg {
		s = "¬"
	}
	if l.bool >= 0 {
		return fmt.Sprintf("%sp%d", s, l.bool)
	}
	return fmt.Sprintf("%s(%d<%d)", s, l.a, l.b)
}

// formula is a test formula over n order variables and nb Booleans, with
// assumptions for the first Solve call.
type formula struct {
	n, nb   int
	clauses [][]alit
	assume  []alit
}

// randomFormula draws a formula; the shape knobs make roughly half the
// small ones satisfiable.
func randomFormula(r *rand.Rand, n, nb, nclauses, width int) formula {
	f := formula{n: n, nb: nb}
	lit := func() alit {
		if nb > 0 && r.IntN(5) == 0 {
			return alit{bool: r.IntN(nb), neg: r.IntN(2) == 0}
		}
		a := Var(r.IntN(n))
		b := Var(r.IntN(n - 1))
		if b >= a {
			b++
		}
		return alit{a: a, b: b, bool: -1, neg: r.IntN(4) == 0}
	}
	for range nclauses {
		c := make([]alit, 1+r.IntN(width))
		for i := range c {
			c[i] = lit()
		}
		f.clauses = append(f.clauses, c)
	}
	for range r.IntN(3) {
		f.assume = append(f.assume, lit())
	}
	return f
}

// built is a formula inside one backend.
type built struct {
	s     Backend
	vars  []Var
	bools []Lit
}

func build(s Backend, f formula) *built {
	b := &built{s: s}
	for range f.n {
		b.vars = append(b.vars, s.NewVar())
	}
	for range f.nb {
		b.bools = append(b.bools, s.NewBool())
	}
	for _, c := range f.clauses {
		s.AddClause(b.lits(c)...)
	}
	return b
}

func (b *built) lit(l alit) Lit {
	var x Lit
	if l.bool >= 0 {
		x = b.bools[l.bool]
	} else {
		x = b.s.Less(b.vars[l.a], b.vars[l.b])
	}
	if l.neg {
		x = x.Not()
	}
	return x
}

func (b *built) lits(ls []alit) []Lit {
	out := make([]Lit, len(ls))
	for i, l := range ls {
		out[i] = b.lit(l)
	}
	return out
}

// eval is l's value under positions pos and Booleans val.
func eval(l alit, pos []int, val []bool) bool {
	var v bool
	if l.bool >= 0 {
		v = val[l.bool]
	} else {
		v = pos[l.a] < pos[l.b]
	}
	return v != l.neg
}

func satisfies(clauses [][]alit, assume []alit, pos []int, val []bool) bool {
	for _, c := range clauses {
		ok := false
		for _, l := range c {
			if eval(l, pos, val) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, l := range assume {
		if !eval(l, pos, val) {
			return false
		}
	}
	return true
}

// bruteForce decides the formula by trying every permutation of the order
// variables and every assignment of the Booleans.
func bruteForce(n, nb int, clauses [][]alit, assume []alit) bool {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	pos := make([]int, n)
	val := make([]bool, nb)
	var rec func(k int) bool
	rec = func(k int) bool {
		if k == n {
			for i, v := range perm {
				pos[v] = i
			}
			for m := 0; m < 1<<nb; m++ {
				for i := range val {
					val[i] = m>>i&1 != 0
				}
				if satisfies(clauses, assume, pos, val) {
					return true
				}
			}
			return false
		}
		for i := k; i < n; i++ {
			perm[k], perm[i] = perm[i], perm[k]
			if rec(k + 1) {
				perm[k], perm[i] = perm[i], perm[k]
				return true
			}
			perm[k], perm[i] = perm[i], perm[k]
		}
		return false
	}
	return rec(0)
}

// checkModel checks that the backend's model is a permutation satisfying
// every clause and assumption.
func checkModel(t *testing.T, b *built, f formula, clauses [][]alit, assume []alit) {
	t.Helper()
	pos := b.s.Positions()
	if len(pos) != f.n {
		t.Fatalf("model has %d positions, want %d", len(pos), f.n)
	}
	seen := make([]bool, f.n)
	for _, p := range pos {
		if p < 0 || p >= f.n || seen[p] {
			t.Fatalf("positions %v are not a permutation", pos)
		}
		seen[p] = true
	}
	val := make([]bool, f.nb)
	for i, l := range b.bools {
		val[i] = b.s.Value(l)
	}
	if !satisfies(clauses, assume, pos, val) {
		t.Fatalf("model %v %v violates the formula %v assuming %v", pos, val, clauses, assume)
	}
	for _, c := range clauses {
		for _, l := range c {
			if got, want := b.s.Value(b.lit(l)), eval(l, pos, val); got != want {
				t.Fatalf("Value(%v) = %v but the positions %v give %v", l, got, pos, want)
			}
		}
	}
}

// TestSolverAgreesWithBruteForce decides thousands of random formulas over
// up to 7 order variables and 2 Booleans, with assumptions, and compares
// with exhaustive enumeration; every Sat model must satisfy the formula.
func TestSolverAgreesWithBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	count := 6000
	if testing.Short() {
		count = 1500
	}
	var sat, unsat int
	for i := range count {
		n := 2 + r.IntN(6)
		nb := r.IntN(3)
		f := randomFormula(r, n, nb, 1+r.IntN(4*n), 1+r.IntN(3))
		b := build(New(), f)
		got := b.s.Solve(b.lits(f.assume)...)
		want := bruteForce(f.n, f.nb, f.clauses, f.assume)
		if (got == Sat) != want || got == Unknown {
			t.Fatalf("formula %d %v assuming %v: solver says %v, brute force %v", i, f.clauses, f.assume, got, want)
		}
		if got == Sat {
			sat++
			checkModel(t, b, f, f.clauses, f.assume)
		} else {
			unsat++
		}
	}
	t.Logf("%d sat, %d unsat", sat, unsat)
	if sat < count/5 || unsat < count/5 {
		t.Errorf("unbalanced sample: %d sat, %d unsat", sat, unsat)
	}
}

// TestSolverIncremental reuses one solver for a sequence of queries
// (assumptions, then clauses added between calls), as the race queries
// of a predictive detector do, checking each answer against brute force.
func TestSolverIncremental(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	count := 600
	if testing.Short() {
		count = 150
	}
	for i := range count {
		n := 3 + r.IntN(5)
		f := randomFormula(r, n, 1, n, 3)
		b := build(New(), f)
		clauses := f.clauses
		for q := range 8 {
			g := randomFormula(r, n, 1, 1+r.IntN(2), 3)
			if q%3 == 2 { // grow the formula itself
				for _, c := range g.clauses {
					b.s.AddClause(b.lits(c)...)
				}
				clauses = append(clauses, g.clauses...)
			}
			got := b.s.Solve(b.lits(g.assume)...)
			want := bruteForce(n, 1, clauses, g.assume)
			if (got == Sat) != want {
				t.Fatalf("formula %d query %d: %v assuming %v: solver %v, brute force %v", i, q, clauses, g.assume, got, want)
			}
			if got == Sat {
				checkModel(t, b, f, clauses, g.assume)
			}
		}
	}
}

// TestAdjacentIsConsecutive checks the race-query reduction: with the
// selector assumed, Sat iff brute force finds a model with a and b next
// to each other, and the model has them consecutive.
func TestAdjacentIsConsecutive(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 17))
	count := 1500
	if testing.Short() {
		count = 400
	}
	for i := range count {
		n := 3 + r.IntN(4)
		f := randomFormula(r, n, 0, 1+r.IntN(2*n), 2)
		b := build(New(), f)
		a := Var(r.IntN(n))
		c := Var((int(a) + 1 + r.IntN(n-1)) % n)
		sel := Adjacent(b.s, b.vars[a], b.vars[c], n)
		got := b.s.Solve(sel)
		// Brute force: the formula plus "nothing between a and c".
		var adj [][]alit
		for x := Var(0); int(x) < n; x++ {
			if x != a && x != c {
				adj = append(adj,
					[]alit{{a: x, b: a, bool: -1}, {a: c, b: x, bool: -1}},
					[]alit{{a: x, b: c, bool: -1}, {a: a, b: x, bool: -1}})
			}
		}
		want := bruteForce(n, 0, append(append([][]alit{}, f.clauses...), adj...), nil)
		if (got == Sat) != want {
			t.Fatalf("formula %d %v, adjacent(%d,%d): solver %v, brute force %v", i, f.clauses, a, c, got, want)
		}
		if got == Sat {
			pos := b.s.Positions()
			if d := pos[a] - pos[c]; d != 1 && d != -1 {
				t.Fatalf("formula %d: a=%d at %d and b=%d at %d are not consecutive", i, a, pos[a], c, pos[c])
			}
			checkModel(t, b, f, f.clauses, nil)
		}
		// Without the selector the adjacency clauses are void.
		if got, want := b.s.Solve(), bruteForce(n, 0, f.clauses, nil); (got == Sat) != want {
			t.Fatalf("formula %d without the selector: solver %v, brute force %v", i, got, want)
		}
	}
}

// TestUnsatCycle: a < b, b < c, c < a has no model; dropping any one atom
// leaves one.
func TestUnsatCycle(t *testing.T) {
	s := New()
	a, b, c := s.NewVar(), s.NewVar(), s.NewVar()
	s.AddClause(s.Less(a, b))
	s.AddClause(s.Less(b, c))
	if got := s.Solve(s.Less(c, a)); got != Unsat {
		t.Fatalf("a<b, b<c, c<a: %v, want unsat", got)
	}
	if got := s.Solve(); got != Sat {
		t.Fatalf("a<b, b<c: %v, want sat", got)
	}
	if o := Order(s.Positions()); o[0] != a || o[1] != b || o[2] != c {
		t.Fatalf("order %v, want [a b c]", o)
	}
	if s.Less(a, b) != s.Less(b, a).Not() || s.Less(a, a) != False {
		t.Fatal("Less(b, a) must be the negation of Less(a, b), Less(a, a) false")
	}
}

// TestLockingConstraintRace encodes Algorithm 9 for two critical sections
// of one lock, each with an access inside, and program order (Algorithm
// 7): the accesses can never be adjacent, while accesses outside them can.
func TestLockingConstraintRace(t *testing.T) {
	s := New()
	// T1: acq1 w1 rel1 x1 ; T2: acq2 w2 rel2 x2
	acq1, w1, rel1, x1 := s.NewVar(), s.NewVar(), s.NewVar(), s.NewVar()
	acq2, w2, rel2, x2 := s.NewVar(), s.NewVar(), s.NewVar(), s.NewVar()
	for _, po := range [][2]Var{{acq1, w1}, {w1, rel1}, {rel1, x1}, {acq2, w2}, {w2, rel2}, {rel2, x2}} {
		s.AddClause(s.Less(po[0], po[1]))
	}
	s.AddClause(s.Less(rel1, acq2), s.Less(rel2, acq1)) // Algorithm 9
	n := s.NumVars()
	if got := s.Solve(Adjacent(s, w1, w2, n)); got != Unsat {
		t.Errorf("accesses inside one lock: %v, want unsat", got)
	}
	if got := s.Solve(Adjacent(s, x1, x2, n)); got != Sat {
		t.Errorf("accesses after the critical sections: %v, want sat", got)
	}
	if got := s.Solve(Adjacent(s, x1, w2, n)); got != Sat {
		t.Errorf("x1 against the other critical section: %v, want sat", got)
	}
}

// pigeonhole adds "p+1 pigeons in p holes" with plain Booleans: unsat, and
// exponentially hard for resolution, so a small budget runs out first.
func pigeonhole(s Backend, p int) {
	x := make([][]Lit, p+1)
	for i := range x {
		x[i] = make([]Lit, p)
		for j := range x[i] {
			x[i][j] = s.NewBool()
		}
		s.AddClause(x[i]...)
	}
	for j := 0; j < p; j++ {
		for i := 0; i <= p; i++ {
			for k := i + 1; k <= p; k++ {
				s.AddClause(x[i][j].Not(), x[k][j].Not())
			}
		}
	}
}

func TestBudgetGivesUnknown(t *testing.T) {
	s := New()
	pigeonhole(s, 7)
	s.SetBudget(Budget{Conflicts: 20})
	if got := s.Solve(); got != Unknown {
		t.Fatalf("pigeonhole 8/7 with 20 conflicts: %v, want unknown", got)
	}
	s.SetBudget(Budget{Deadline: time.Now().Add(-time.Second)})
	if got := s.Solve(); got != Unknown {
		t.Fatalf("pigeonhole 8/7 past its deadline: %v, want unknown", got)
	}
	s.SetBudget(Budget{})
	if got := s.Solve(); got != Unsat {
		t.Fatalf("pigeonhole 8/7 without a budget: %v, want unsat", got)
	}
}

func TestEmptyAndTrivial(t *testing.T) {
	s := New()
	if got := s.Solve(); got != Sat {
		t.Fatalf("empty formula: %v", got)
	}
	a := s.NewVar()
	b := s.NewVar()
	if got := s.Solve(True); got != Sat {
		t.Fatalf("assuming True: %v", got)
	}
	if got := s.Solve(False); got != Unsat {
		t.Fatalf("assuming False: %v", got)
	}
	s.AddClause(s.Less(a, b), s.Less(b, a)) // a tautology in a total order: not one syntactically
	if got := s.Solve(); got != Sat {
		t.Fatalf("a<b ∨ b<a: %v", got)
	}
	s.AddClause()
	if got := s.Solve(); got != Unsat {
		t.Fatalf("after the empty clause: %v", got)
	}
}

// TestReadConsistencyAlgorithm10 encodes Algorithm 10's constraint for one
// read with Tseitin selectors: r(x) = 1 may read from w1 (x = 1) or w3
// (x = 1) but not w2 (x = 2): some write of value 1 is before r and no
// other write lies between it and r.
func TestReadConsistencyAlgorithm10(t *testing.T) {
	s := New()
	w1, w2, w3, r := s.NewVar(), s.NewVar(), s.NewVar(), s.NewVar()
	writes := []Var{w1, w2, w3}
	var sels []Lit
	for _, w := range []Var{w1, w3} { // W_v: the writes of the value read
		sel := s.NewBool()
		sels = append(sels, sel)
		s.AddClause(sel.Not(), s.Less(w, r))
		for _, o := range writes {
			if o != w {
				s.AddClause(sel.Not(), s.Less(o, w), s.Less(r, o))
			}
		}
	}
	s.AddClause(sels...)
	for _, c := range []struct {
		name   string
		assume []Lit
		want   Result
	}{
		{"w2 last before r", []Lit{s.Less(w1, w2), s.Less(w3, w2), s.Less(w2, r)}, Unsat},
		{"w2 first", []Lit{s.Less(w2, w1), s.Less(w2, w3)}, Sat},
		{"w2 after r", []Lit{s.Less(r, w2)}, Sat},
		{"no write before r", []Lit{s.Less(r, w1), s.Less(r, w3)}, Unsat},
	} {
		if got := s.Solve(c.assume...); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if c.want == Sat {
			pos := s.Positions()
			ok := false
			for _, w := range []Var{w1, w3} {
				between := false
				for _, o := range writes {
					if o != w && pos[w] < pos[o] && pos[o] < pos[r] {
						between = true
					}
				}
				ok = ok || (pos[w] < pos[r] && !between)
			}
			if !ok {
				t.Errorf("%s: model %v has r read no write of value 1", c.name, Order(pos))
			}
		}
	}
}
