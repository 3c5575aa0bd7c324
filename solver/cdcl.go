package solver

import (
	"slices"
	"time"
)

// clause is a disjunction. In a clause that is the reason of an
// assignment, the assigned literal is lits[0]; lits[0] and lits[1] are
// the watched literals.
type clause struct {
	lits    []Lit
	act     float64
	learnt  bool
	deleted bool
}

// Solver is the pure-Go CDCL(T) solver for ordering constraints. Create
// it with New. It is not safe for concurrent use.
type Solver struct {
	nOrder int32

	// Boolean variables; variable 0 is the constant true.
	kind  []varKind
	ends  [][2]int32       // order variables of an atom: from < to
	atoms map[uint64]int32 // (from, to) with from < to → its Boolean variable

	clauses []*clause // problem and learned clauses
	watches [][]*clause
	nLearnt int
	maxLrn  float64

	assign   []int8 // per variable: 0 unassigned, 1 true, -1 false
	level    []int32
	reason   []*clause
	trail    []Lit
	trailLim []int
	qhead    int
	polarity []bool // saved phase: true = negative
	seen     []bool

	activity []float64
	varInc   float64
	claInc   float64
	heap     varHeap

	g graph

	ok     bool // false once the formula is unsatisfiable at level 0
	budget Budget
	stats  Stats

	model    []int8 // assignment of the last Sat answer
	modelPos []int  // positions of order variables in it
}

// New returns an empty Solver.
func New() *Solver {
	s := &Solver{atoms: map[uint64]int32{}, varInc: 1, claInc: 1, ok: true}
	s.heap.act = &s.activity
	v := s.newBoolVar(plainVar, 0, 0)
	s.assign[v] = 1 // the constant true, at level 0
	s.trail = append(s.trail, mkLit(v, false))
	s.qhead = 1
	return s
}

var _ Backend = (*Solver)(nil)

// NewVar returns a fresh order variable.
func (s *Solver) NewVar() Var {
	s.nOrder++
	s.g.grow(int(s.nOrder))
	return Var(s.nOrder - 1)
}

// NumVars is the number of order variables.
func (s *Solver) NumVars() int { return int(s.nOrder) }

// NewBool returns a fresh plain Boolean variable.
func (s *Solver) NewBool() Lit { return mkLit(s.newBoolVar(plainVar, 0, 0), false) }

func (s *Solver) newBoolVar(k varKind, a, b int32) int32 {
	v := int32(len(s.kind))
	s.kind = append(s.kind, k)
	s.ends = append(s.ends, [2]int32{a, b})
	s.assign = append(s.assign, 0)
	s.level = append(s.level, 0)
	s.reason = append(s.reason, nil)
	// Atoms start true: from < to is the order of creation, which callers
	// give in trace order, so the observed trace is the first guess.
	s.polarity = append(s.polarity, k != atomVar)
	s.seen = append(s.seen, false)
	s.activity = append(s.activity, 0)
	s.watches = append(s.watches, nil, nil)
	if v > 0 {
		s.heap.insert(v)
	}
	return v
}

func (s *Solver) checkVar(a Var) {
	if a < 0 || int32(a) >= s.nOrder {
		panic("solver: unknown order variable")
	}
}

// Less returns the atom O_a < O_b.
func (s *Solver) Less(a, b Var) Lit {
	s.checkVar(a)
	s.checkVar(b)
	if a == b {
		return False
	}
	neg := false
	if a > b {
		a, b, neg = b, a, true
	}
	key := uint64(a)<<32 | uint64(b)
	v, ok := s.atoms[key]
	if !ok {
		v = s.newBoolVar(atomVar, int32(a), int32(b))
		s.atoms[key] = v
	}
	return mkLit(v, neg)
}

// SetBudget bounds each later Solve call.
func (s *Solver) SetBudget(b Budget) { s.budget = b }

// Stats returns the Solver's counters so far.
func (s *Solver) Stats() Stats { return s.stats }

func (s *Solver) value(l Lit) int8 {
	a := s.assign[l.v()]
	if l.neg() {
		return -a
	}
	return a
}

func (s *Solver) decisionLevel() int32 { return int32(len(s.trailLim)) }

func (s *Solver) enqueue(l Lit, from *clause) {
	v := l.v()
	if l.neg() {
		s.assign[v] = -1
	} else {
		s.assign[v] = 1
	}
	s.level[v] = s.decisionLevel()
	s.reason[v] = from
	s.trail = append(s.trail, l)
}

// AddClause adds the disjunction of lits. Literals must come from this
// Solver.
func (s *Solver) AddClause(lits ...Lit) {
	if !s.ok {
		return
	}
	s.cancelUntil(0)
	c := slices.Clone(lits)
	slices.Sort(c)
	out := c[:0]
	for i, l := range c {
		if int(l.v()) >= len(s.kind) || l < 0 {
			panic("solver: literal from another solver")
		}
		switch {
		case s.value(l) == 1 || (i > 0 && c[i-1] == l.Not()):
			return // satisfied at level 0, or a tautology
		case s.value(l) == -1 || (i > 0 && c[i-1] == l):
			continue // false at level 0, or a repeat
		}
		out = append(out, l)
	}
	switch len(out) {
	case 0:
		s.ok = false
	case 1:
		s.enqueue(out[0], nil)
		if s.propagate() != nil {
			s.ok = false
		}
	default:
		s.attach(&clause{lits: slices.Clip(out)})
	}
}

func (s *Solver) attach(c *clause) {
	s.clauses = append(s.clauses, c)
	s.watches[c.lits[0]] = append(s.watches[c.lits[0]], c)
	s.watches[c.lits[1]] = append(s.watches[c.lits[1]], c)
	if c.learnt {
		s.nLearnt++
	}
}

// propagate runs unit propagation and the order theory over the trail
// from qhead, and returns a conflicting clause or nil.
func (s *Solver) propagate() *clause {
	for s.qhead < len(s.trail) {
		p := s.trail[s.qhead]
		s.qhead++
		s.stats.Propagations++
		if s.kind[p.v()] == atomVar {
			if confl := s.theoryAssert(p); confl != nil {
				s.qhead = len(s.trail)
				return confl
			}
		}
		falseLit := p.Not()
		ws := s.watches[falseLit]
		i, j := 0, 0
		for i < len(ws) {
			c := ws[i]
			i++
			if c.deleted {
				continue
			}
			if c.lits[0] == falseLit {
				c.lits[0], c.lits[1] = c.lits[1], c.lits[0]
			}
			first := c.lits[0]
			if s.value(first) == 1 {
				ws[j] = c
				j++
				continue
			}
			moved := false
			for k := 2; k < len(c.lits); k++ {
				if s.value(c.lits[k]) != -1 {
					c.lits[1], c.lits[k] = c.lits[k], c.lits[1]
					s.watches[c.lits[1]] = append(s.watches[c.lits[1]], c)
					moved = true
					break
				}
			}
			if moved {
				continue
			}
			ws[j] = c
			j++
			if s.value(first) == -1 {
				j += copy(ws[j:], ws[i:])
				s.watches[falseLit] = ws[:j]
				s.qhead = len(s.trail)
				return c
			}
			s.enqueue(first, c)
		}
		s.watches[falseLit] = ws[:j]
	}
	return nil
}

// theoryAssert adds the edge of the true atom p and returns the negated
// cycle as a conflict clause if one closes.
func (s *Solver) theoryAssert(p Lit) *clause {
	e := s.ends[p.v()]
	if p.neg() {
		return s.edgeConflict(s.g.add(e[1], e[0], p, s.qhead-1))
	}
	return s.edgeConflict(s.g.add(e[0], e[1], p, s.qhead-1))
}

func (s *Solver) edgeConflict(cycle []Lit) *clause {
	if cycle == nil {
		return nil
	}
	s.stats.TheoryConflicts++
	// A cycle can be thousands of edges long: dedup with the per-variable
	// seen marks (all false outside conflict analysis), not a linear search.
	lits := make([]Lit, 0, len(cycle))
	for _, l := range cycle {
		if v := l.v(); !s.seen[v] {
			s.seen[v] = true
			lits = append(lits, l.Not())
		}
	}
	for _, l := range lits {
		s.seen[l.v()] = false
	}
	return &clause{lits: lits}
}

func (s *Solver) cancelUntil(lvl int32) {
	if s.decisionLevel() <= lvl {
		return
	}
	n := s.trailLim[lvl]
	for i := len(s.trail) - 1; i >= n; i-- {
		v := s.trail[i].v()
		s.assign[v] = 0
		s.reason[v] = nil
		s.polarity[v] = s.trail[i].neg()
		if !s.heap.contains(v) {
			s.heap.insert(v)
		}
	}
	s.trail = s.trail[:n]
	s.trailLim = s.trailLim[:lvl]
	s.qhead = n
	s.g.undo(n)
}

// analyze derives the first-UIP clause from a conflict and returns it with
// the level to go back to.
func (s *Solver) analyze(confl *clause) ([]Lit, int32) {
	out := []Lit{0}
	pathC := 0
	p := Lit(-1)
	idx := len(s.trail) - 1
	for {
		if confl.learnt {
			s.bumpClause(confl)
		}
		lits := confl.lits
		if p != -1 {
			lits = lits[1:]
		}
		for _, q := range lits {
			v := q.v()
			if !s.seen[v] && s.level[v] > 0 {
				s.bumpVar(v)
				s.seen[v] = true
				if s.level[v] >= s.decisionLevel() {
					pathC++
				} else {
					out = append(out, q)
				}
			}
		}
		for !s.seen[s.trail[idx].v()] {
			idx--
		}
		p = s.trail[idx]
		idx--
		confl = s.reason[p.v()]
		s.seen[p.v()] = false
		pathC--
		if pathC == 0 {
			break
		}
	}
	out[0] = p.Not()

	// Drop literals implied by the others (local minimization): q is
	// redundant if every other literal of its reason is in the clause or
	// fixed at level 0.
	redundant := make([]bool, len(out))
	for i, q := range out[1:] {
		if r := s.reason[q.v()]; r != nil {
			redundant[i+1] = true
			for _, x := range r.lits[1:] {
				if !s.seen[x.v()] && s.level[x.v()] > 0 {
					redundant[i+1] = false
					break
				}
			}
		}
	}
	for _, q := range out[1:] {
		s.seen[q.v()] = false
	}
	keep := out[:1]
	for i, q := range out[1:] {
		if !redundant[i+1] {
			keep = append(keep, q)
		}
	}
	out = keep

	bt := int32(0)
	if len(out) > 1 {
		m := 1
		for i := 2; i < len(out); i++ {
			if s.level[out[i].v()] > s.level[out[m].v()] {
				m = i
			}
		}
		out[1], out[m] = out[m], out[1]
		bt = s.level[out[1].v()]
	}
	return out, bt
}

func (s *Solver) bumpVar(v int32) {
	s.activity[v] += s.varInc
	if s.activity[v] > 1e100 {
		for i := range s.activity {
			s.activity[i] *= 1e-100
		}
		s.varInc *= 1e-100
	}
	if s.heap.contains(v) {
		s.heap.up(s.heap.index[v])
	}
}

func (s *Solver) bumpClause(c *clause) {
	c.act += s.claInc
	if c.act > 1e20 {
		for _, d := range s.clauses {
			if d.learnt {
				d.act *= 1e-20
			}
		}
		s.claInc *= 1e-20
	}
}

// reduceDB deletes half of the learned clauses, the least active ones
// that are not the reason of a current assignment.
func (s *Solver) reduceDB() {
	var lr []*clause
	for _, c := range s.clauses {
		if c.learnt {
			lr = append(lr, c)
		}
	}
	slices.SortFunc(lr, func(a, b *clause) int {
		switch {
		case a.act < b.act:
			return -1
		case a.act > b.act:
			return 1
		}
		return 0
	})
	for _, c := range lr[:len(lr)/2] {
		if len(c.lits) > 2 && s.reason[c.lits[0].v()] != c {
			c.deleted = true
			s.nLearnt--
		}
	}
	s.clauses = slices.DeleteFunc(s.clauses, func(c *clause) bool { return c.deleted })
	for i, ws := range s.watches {
		s.watches[i] = slices.DeleteFunc(ws, func(c *clause) bool { return c.deleted })
	}
}

// luby returns the i-th element (from 0) of the Luby sequence 1 1 2 1 1 2 4 ...
func luby(i int) float64 {
	size, seq := 1, 0
	for size < i+1 {
		seq++
		size = 2*size + 1
	}
	for size-1 != i {
		size = (size - 1) >> 1
		seq--
		i %= size
	}
	return float64(int(1) << seq)
}

// Solve decides the formula conjoined with the assumptions. After Sat the
// model is available from Positions and Value until the next Solve.
func (s *Solver) Solve(assumptions ...Lit) Result {
	s.stats.Solves++
	s.model, s.modelPos = nil, nil
	if !s.ok {
		return Unsat
	}
	s.cancelUntil(0)
	if s.propagate() != nil {
		s.ok = false
		return Unsat
	}
	if s.maxLrn == 0 {
		s.maxLrn = float64(len(s.clauses))/3 + 1000
	}
	start := s.stats.Conflicts
	var deadline time.Time
	if !s.budget.Deadline.IsZero() {
		deadline = s.budget.Deadline
	}
	res := Unknown
	for restart := 0; ; restart++ {
		res = s.search(int64(100*luby(restart)), assumptions, start, deadline)
		if res != Unknown || s.outOfBudget(start, deadline) {
			break
		}
		s.stats.Restarts++
	}
	if res == Sat {
		s.model = slices.Clone(s.assign)
		s.modelPos = s.positions()
	}
	s.cancelUntil(0)
	return res
}

func (s *Solver) outOfBudget(start int64, deadline time.Time) bool {
	if b := s.budget.Conflicts; b > 0 && s.stats.Conflicts-start >= b {
		return true
	}
	return !deadline.IsZero() && time.Now().After(deadline)
}

// search runs CDCL until a model, a refutation, or nConf conflicts.
func (s *Solver) search(nConf int64, assumptions []Lit, start int64, deadline time.Time) Result {
	conflicts := int64(0)
	for {
		if confl := s.propagate(); confl != nil {
			s.stats.Conflicts++
			conflicts++
			if s.decisionLevel() == 0 {
				s.ok = false
				return Unsat
			}
			learnt, bt := s.analyze(confl)
			s.cancelUntil(bt)
			if len(learnt) == 1 {
				s.enqueue(learnt[0], nil)
			} else {
				c := &clause{lits: learnt, learnt: true}
				s.attach(c)
				s.bumpClause(c)
				s.enqueue(learnt[0], c)
				s.stats.Learned++
			}
			s.varInc /= 0.95
			s.claInc /= 0.999
			if conflicts&63 == 0 && s.outOfBudget(start, deadline) {
				return Unknown
			}
			continue
		}
		if conflicts >= nConf {
			s.cancelUntil(0)
			return Unknown
		}
		if float64(s.nLearnt)-float64(len(s.trail)) >= s.maxLrn {
			s.reduceDB()
			s.maxLrn *= 1.1
		}
		var next Lit = -1
		for int(s.decisionLevel()) < len(assumptions) {
			p := assumptions[s.decisionLevel()]
			if int(p.v()) >= len(s.kind) || p < 0 {
				panic("solver: assumption from another solver")
			}
			if v := s.value(p); v == 1 {
				s.trailLim = append(s.trailLim, len(s.trail)) // already true: an empty level
				continue
			} else if v == -1 {
				return Unsat // the assumptions contradict the formula
			}
			next = p
			break
		}
		if next == -1 {
			v := s.pickBranch()
			if v < 0 {
				return Sat
			}
			neg := s.polarity[v]
			if s.kind[v] == atomVar {
				// Follow the graph's topological order: an edge along it
				// cannot close a cycle, so a decision on an atom never
				// causes a theory conflict by itself.
				e := s.ends[v]
				neg = s.g.ord[e[0]] > s.g.ord[e[1]]
			}
			next = mkLit(v, neg)
			s.stats.Decisions++
		}
		s.trailLim = append(s.trailLim, len(s.trail))
		s.enqueue(next, nil)
	}
}

func (s *Solver) pickBranch() int32 {
	for !s.heap.empty() {
		v := s.heap.pop()
		if s.assign[v] == 0 {
			return v
		}
	}
	return -1
}

// Value returns l's value in the last model (false if there is none).
func (s *Solver) Value(l Lit) bool {
	if s.model == nil {
		return false
	}
	a := s.model[l.v()]
	if l.neg() {
		a = -a
	}
	return a == 1
}

// Positions returns the positions of the order variables in the last
// model (nil if the last Solve did not return Sat).
func (s *Solver) Positions() []int { return s.modelPos }

// positions topologically sorts the current (complete, consistent)
// assignment's graph, smallest index first among the ready variables, so
// that a model looks as much as it can like the order of creation.
func (s *Solver) positions() []int {
	n := int(s.nOrder)
	indeg := make([]int32, n)
	for u := 0; u < n; u++ {
		for _, e := range s.g.out[u] {
			indeg[e.to]++
		}
	}
	var ready intHeap
	for u := 0; u < n; u++ {
		if indeg[u] == 0 {
			ready.push(int32(u))
		}
	}
	pos := make([]int, n)
	rank := 0
	for ready.len() > 0 {
		u := ready.pop()
		pos[u] = rank
		rank++
		for _, e := range s.g.out[u] {
			if indeg[e.to]--; indeg[e.to] == 0 {
				ready.push(e.to)
			}
		}
	}
	return pos
}

// intHeap is a min-heap of class names.
type intHeap struct{ a []int32 }

func (h *intHeap) len() int { return len(h.a) }
func (h *intHeap) push(x int32) {
	h.a = append(h.a, x)
	for i := len(h.a) - 1; i > 0; {
		p := (i - 1) / 2
		if h.a[p] <= h.a[i] {
			break
		}
		h.a[p], h.a[i] = h.a[i], h.a[p]
		i = p
	}
}
func (h *intHeap) pop() int32 {
	x := h.a[0]
	n := len(h.a) - 1
	h.a[0] = h.a[n]
	h.a = h.a[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h.a[l] < h.a[m] {
			m = l
		}
		if l+1 < n && h.a[l+1] < h.a[m] {
			m = l + 1
		}
		if m == i {
			break
		}
		h.a[i], h.a[m] = h.a[m], h.a[i]
		i = m
	}
	return x
}

// varHeap is the VSIDS order: a max-heap of variables by activity.
type varHeap struct {
	act   *[]float64
	a     []int32
	index []int32 // position of each variable in a, or -1
}

func (h *varHeap) less(i, j int) bool { return (*h.act)[h.a[i]] > (*h.act)[h.a[j]] }
func (h *varHeap) empty() bool        { return len(h.a) == 0 }
func (h *varHeap) contains(v int32) bool {
	return int(v) < len(h.index) && h.index[v] >= 0
}
func (h *varHeap) insert(v int32) {
	for int(v) >= len(h.index) {
		h.index = append(h.index, -1)
	}
	h.index[v] = int32(len(h.a))
	h.a = append(h.a, v)
	h.up(h.index[v])
}
func (h *varHeap) swap(i, j int) {
	h.a[i], h.a[j] = h.a[j], h.a[i]
	h.index[h.a[i]] = int32(i)
	h.index[h.a[j]] = int32(j)
}
func (h *varHeap) up(i32 int32) {
	i := int(i32)
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.swap(i, p)
		i = p
	}
}
func (h *varHeap) pop() int32 {
	v := h.a[0]
	n := len(h.a) - 1
	h.swap(0, n)
	h.a = h.a[:n]
	h.index[v] = -1
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h.less(l, m) {
			m = l
		}
		if l+1 < n && h.less(l+1, m) {
			m = l + 1
		}
		if m == i {
			break
		}
		h.swap(i, m)
		i = m
	}
	return v
}
