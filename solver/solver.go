// Package solver decides ordering constraints: propositional formulas (in
// CNF) whose atoms compare integer-valued order variables, O_a < O_b. They
// are the formulas of the maximal causal model (RDIT, Rajagopalan 2016,
// section 4.4.4, Algorithms 4-10): program order, fork/join, locking
// (O_b < O_c ∨ O_d < O_a), read consistency and BarrierPair linearizations
// are all conjunctions and disjunctions of such atoms.
//
// # Semantics
//
// A model is a total order of the order variables (a trace): every
// variable gets a distinct position, and O_a < O_b holds when a's position
// is below b's. So the negation of O_a < O_b is O_b < O_a: Less(b, a) is
// the same literal as Less(a, b).Not(). Plain Boolean variables (NewBool)
// serve the encodings' auxiliary variables (Tseitin variables for a
// disjunction of conjunctions, as in Algorithm 10's read consistency).
//
// # The race query
//
// Algorithm 3 asks whether Φ_mcm ∧ O_a = O_b is satisfiable: whether some
// feasible reordering reaches a point where a and b are both enabled, so
// that either may run next. In a total order that is "a and b can be made
// consecutive": Adjacent(s, a, b, n) returns a selector literal sel and
// adds, for every other variable c, the clauses ¬sel ∨ c < a ∨ b < c and
// ¬sel ∨ c < b ∨ a < c (c is not between them); Solve(sel) is the query,
// and the base formula with its learned clauses serves every pair.
//
// The two readings agree whenever Φ_mcm has no atom relating a and b
// directly: from integer positions with O_a = O_b, moving a just below b
// keeps every atom that mentions only one of them; conversely, consecutive
// a and b can share b's position. An encoder must therefore leave out
// constraints between the racing events themselves, as RVPredict's and
// RDIT's formulations do (the racing events' own read values need not be
// consistent). If the formula does relate them, say a < b, the adjacency
// query still answers Sat (a just before b) where O_a = O_b is
// unsatisfiable. Asking twice, with Less(a, b) and with Less(b, a) as
// extra assumptions, gives a necessary condition for the equality (both
// Sat); the exact test builds the formula with one variable for both.
//
// # Algorithm
//
// Solver is a CDCL SAT solver (two watched literals, first-UIP learning
// with local minimization, VSIDS, phase saving for plain Booleans, Luby
// restarts, learned-clause reduction) with a
// theory of strict orders: the assigned atoms are edges of a graph over
// the order variables (O_a < O_b true is an edge a→b, false an edge b→a),
// and a set of atoms is consistent iff the graph is acyclic. Each new edge
// u→v is checked at once by a search from v back to u, bounded by a
// topological order kept in the style of Pearce and Kelly (only nodes
// ordered between v and u can close a cycle); a cycle found is returned
// to the SAT core as a conflict clause, the negation of the cycle's atoms.
// A decision on an atom takes the polarity the current topological order
// gives, so decisions never close a cycle themselves (on
// BenchmarkRaceQueries this took the solver from 41 to 1,492 queries/s
// against phase saving). There is no theory propagation: an atom that a
// path implies is not assigned early; asserting it the other way closes a
// cycle and is refuted then. A satisfying assignment's graph is acyclic,
// and its topological sort is the model (Positions, Order).
//
// Solve takes assumptions (kept learned clauses make repeated queries over
// one base formula cheap) and a Budget of conflicts or wall-clock time;
// when the budget runs out the answer is Unknown.
//
// With the build tag z3 (and cgo), NewZ3 returns a backend over the Z3 SMT
// solver with the same Backend interface, for cross-checking and
// comparison; without the tag the package needs neither cgo nor Z3.
package solver

import (
	"fmt"
	"slices"
	"time"
)

// Var is an order variable O_v (an event of a trace, say). Variables are
// numbered 0, 1, 2, ... in order of creation.
type Var int32

// Lit is a literal: a Boolean variable or its negation. Its variable is
// an order atom (Less) or a plain Boolean (NewBool).
type Lit int32

// True and False are the constant literals.
const (
	True  Lit = 0
	False Lit = 1
)

// Not returns the negation of l.
func (l Lit) Not() Lit { return l ^ 1 }

func (l Lit) v() int32  { return int32(l >> 1) }
func (l Lit) neg() bool { return l&1 != 0 }
func mkLit(v int32, neg bool) Lit {
	if neg {
		return Lit(2*v + 1)
	}
	return Lit(2 * v)
}

// Result is the answer of Solve.
type Result int8

const (
	// Unknown: the budget ran out before an answer.
	Unknown Result = iota
	// Sat: the formula (with the assumptions) has a model.
	Sat
	// Unsat: it has none.
	Unsat
)

// String returns "sat", "unsat" or "unknown".
func (r Result) String() string {
	switch r {
	case Sat:
		return "sat"
	case Unsat:
		return "unsat"
	}
	return "unknown"
}

// Budget bounds the work of one Solve call. Zero fields mean no bound.
type Budget struct {
	Conflicts int64     // give up after this many conflicts
	Deadline  time.Time // give up after this time (checked every few conflicts)
}

// Backend is what every solver of this package implements, so that tests
// and benchmarks can build one formula into several of them.
type Backend interface {
	// NewVar returns a fresh order variable.
	NewVar() Var
	// NewBool returns a fresh plain Boolean variable as a positive literal.
	NewBool() Lit
	// Less returns the atom O_a < O_b; Less(b, a) is its negation and
	// Less(a, a) is False.
	Less(a, b Var) Lit
	// AddClause adds the disjunction of lits (empty: the formula is false).
	AddClause(lits ...Lit)
	// SetBudget bounds each later Solve call.
	SetBudget(b Budget)
	// Solve decides the formula conjoined with the assumptions.
	Solve(assumptions ...Lit) Result
	// Positions returns, after Solve returned Sat, the position of every
	// order variable (index = Var) in the model: a permutation of 0..n-1.
	Positions() []int
	// Value returns a literal's value in the model after Sat.
	Value(l Lit) bool
}

// Order returns the order variables sorted by their positions: the trace
// a model describes.
func Order(pos []int) []Var {
	vs := make([]Var, len(pos))
	for i := range vs {
		vs[i] = Var(i)
	}
	sortVars(vs, pos)
	return vs
}

func sortVars(vs []Var, pos []int) {
	slices.SortFunc(vs, func(a, b Var) int {
		if less2(a, b, pos) {
			return -1
		}
		if less2(b, a, pos) {
			return 1
		}
		return 0
	})
}

func less2(a, b Var, pos []int) bool {
	if pos[a] != pos[b] {
		return pos[a] < pos[b]
	}
	return a < b
}

// Adjacent adds to s, under a fresh selector literal that it returns,
// clauses stating that none of the order variables 0..nvars-1 other than a
// and b lies between a and b: with the selector assumed, a model has a and
// b consecutive (in either order). This is the race query (see the package
// comment). It costs two clauses per other variable.
func Adjacent(s Backend, a, b Var, nvars int) Lit {
	sel := s.NewBool()
	for c := Var(0); int(c) < nvars; c++ {
		if c == a || c == b {
			continue
		}
		s.AddClause(sel.Not(), s.Less(c, a), s.Less(b, c))
		s.AddClause(sel.Not(), s.Less(c, b), s.Less(a, c))
	}
	return sel
}

// varKind says what a Boolean variable stands for.
type varKind uint8

const (
	plainVar varKind = iota
	atomVar          // positive: from < to (from < to as indices)
)

// Stats counts a Solver's work.
type Stats struct {
	Solves, Decisions, Propagations, Conflicts, TheoryConflicts, Restarts, Learned int64
}

// String renders the counters on one line.
func (s Stats) String() string {
	return fmt.Sprintf("solves=%d decisions=%d propagations=%d conflicts=%d theory=%d restarts=%d learned=%d",
		s.Solves, s.Decisions, s.Propagations, s.Conflicts, s.TheoryConflicts, s.Restarts, s.Learned)
}
