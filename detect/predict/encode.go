package predict

import (
	"slices"

	"github.com/racekit/racekit/solver"
)

// mustOrder is the must-happen-before relation of a model: program order
// and the hard edges, closed transitively. No reordering breaks it, so a
// pair it orders is no race, and a constraint it satisfies need not be
// encoded. It is kept as a vector clock per event (shared between events
// whose clock did not change), without the event's own component.
type mustOrder struct {
	m    *model
	snap [][]int32 // per event: for each dense goroutine, how many of its events precede
}

func newMustOrder(m *model) *mustOrder {
	G := len(m.byG)
	o := &mustOrder{m: m, snap: make([][]int32, len(m.ev))}
	cur := make([][]int32, G)
	for g := range cur {
		cur[g] = make([]int32, G)
	}
	for i := range m.ev {
		g := m.g[i]
		c := cur[g]
		copied := false
		for _, p := range m.preds[i] {
			h := m.g[p]
			if h == g {
				continue
			}
			ps := o.snap[p]
			if c[h] > m.local[p] && dominates(c, ps) {
				continue
			}
			if !copied {
				c = slices.Clone(c)
				copied = true
			}
			for k := range c {
				c[k] = max(c[k], ps[k])
			}
			c[h] = max(c[h], m.local[p]+1)
		}
		cur[g] = c
		o.snap[i] = c
	}
	return o
}

func dominates(a, b []int32) bool {
	for k := range a {
		if a[k] < b[k] {
			return false
		}
	}
	return true
}

// before reports whether a must precede b (a ≠ b).
func (o *mustOrder) before(a, b int32) bool {
	m := o.m
	if m.g[a] == m.g[b] {
		return m.local[a] < m.local[b]
	}
	return o.snap[b][m.g[a]] > m.local[a]
}

// formula is Φ_mcm of a stretch (Algorithm 4) in a solver, with one order
// variable per event (variable i is event i, created in trace order so the
// solver's first guess is the observed trace) and a cut variable: the
// events ordered before the cut form the reordered prefix, and only they
// must be lock- and read-consistent (prefix closure, thesis 4.4.1); the
// racing pair is the two events right after the cut.
type formula struct {
	s       solver.Backend
	cut     solver.Var
	clauses int64
	empty   int64 // constraints with no way to hold, left out (ill-formed input)
}

// encode builds the formula of m in a solver made by newSolver.
// Constraints that the must-order already satisfies are left out.
func encode(m *model, o *mustOrder, newSolver func() solver.Backend) *formula {
	s := newSolver()
	for range len(m.ev) {
		s.NewVar()
	}
	f := &formula{s: s, cut: s.NewVar()}
	f.addHardEdges(m)
	f.addLocking(m, o)
	for j := range m.reads {
		f.addReadConsistency(m, o, &m.reads[j])
	}
	return f
}

// evVar is the order variable of event i: variable i.
func evVar(i int32) solver.Var { return solver.Var(i) }

// add adds the clause lits; one with no literal cannot hold and is only
// counted.
func (f *formula) add(lits ...solver.Lit) {
	if len(lits) == 0 {
		f.empty++
		return
	}
	f.clauses++
	f.s.AddClause(lits...)
}

// cutBefore is the literal "event i is not in the prefix".
func (f *formula) cutBefore(i int32) solver.Lit { return f.s.Less(f.cut, evVar(i)) }

// addHardEdges adds program order (Algorithm 7) and the hard edges:
// fork/join (Algorithm 8), snd → rcv, untraced birth, allocs, and for
// rdit the BarrierPair linearization (Algorithm 5).
func (f *formula) addHardEdges(m *model) {
	s, v := f.s, evVar
	for i := range int32(len(m.ev)) {
		if p := m.prev[i]; p >= 0 {
			f.add(s.Less(v(p), v(i)))
		}
		for _, p := range m.preds[i] {
			f.add(s.Less(v(p), v(i)))
		}
	}
}

// addLocking adds locking (Algorithm 9), for sections whose acquires are
// both in the prefix: one ends before the other begins. Read-mode
// sections exclude exclusive ones only. A section held at the start of
// the stretch (acq = -1) is in every prefix; one open at its end
// (rel = -1) never ends.
func (f *formula) addLocking(m *model, o *mustOrder) {
	s, v := f.s, evVar
	locks := make([]uint64, 0, len(m.sections))
	for l := range m.sections {
		locks = append(locks, l)
	}
	slices.Sort(locks)
	for _, l := range locks {
		secs := m.sections[l]
		for x := range secs {
			for y := x + 1; y < len(secs); y++ {
				s1, s2 := secs[x], secs[y]
				if s1.g == s2.g || (s1.read && s2.read) {
					continue
				}
				if (s1.rel >= 0 && s2.acq >= 0 && o.before(s1.rel, s2.acq)) ||
					(s2.rel >= 0 && s1.acq >= 0 && o.before(s2.rel, s1.acq)) {
					continue
				}
				var lits []solver.Lit
				if s1.rel >= 0 && s2.acq >= 0 {
					lits = append(lits, s.Less(v(s1.rel), v(s2.acq)))
				}
				if s2.rel >= 0 && s1.acq >= 0 {
					lits = append(lits, s.Less(v(s2.rel), v(s1.acq)))
				}
				if s1.acq >= 0 {
					lits = append(lits, f.cutBefore(s1.acq))
				}
				if s2.acq >= 0 {
					lits = append(lits, f.cutBefore(s2.acq))
				}
				f.add(lits...)
			}
		}
	}
}

// addReadConsistency adds read consistency (Algorithm 10) for read ri,
// when it is in the prefix: the read sees one of its candidate writes w
// (w before it, every other write of the word before w or after the
// read), or the initial value (every write after the read).
func (f *formula) addReadConsistency(m *model, o *mustOrder, ri *readInfo) {
	s, v := f.s, evVar
	r := ri.ev
	ws := m.writes[ri.key]
	var alts [][][]solver.Lit // per possible candidate: its clauses
	for _, w := range readCandidates(m, ri, ws) {
		if c, ok := f.candidateClauses(o, r, w, ws); ok {
			alts = append(alts, c)
		}
	}
	notIn := f.cutBefore(r)
	for _, p := range ri.after {
		if !o.before(p, r) {
			f.add(notIn, s.Less(v(p), v(r)))
		}
	}
	switch len(alts) {
	case 0:
		f.add(notIn)
	case 1:
		for _, c := range alts[0] {
			f.add(append([]solver.Lit{notIn}, c...)...)
		}
	default:
		or := []solver.Lit{notIn}
		for _, a := range alts {
			sel := s.NewBool()
			or = append(or, sel)
			for _, c := range a {
				f.add(append([]solver.Lit{sel.Not()}, c...)...)
			}
		}
		f.add(or...)
	}
}

// readCandidates returns the writes among ws (the writes of ri's word)
// that read ri may see, -1 standing for the initial value.
func readCandidates(m *model, ri *readInfo, ws []int32) []int32 {
	var cands []int32
	switch ri.mode {
	case readValue:
		if m.init[ri.key].compatible(ri.v) {
			cands = append(cands, -1)
		}
		for _, w := range ws {
			if w != ri.ev && m.wval[w].compatible(ri.v) {
				cands = append(cands, w)
			}
		}
	case readWriter:
		cands = append(cands, ri.writer)
	}
	return cands
}

// candidateClauses returns the clauses under which read r sees candidate
// w (-1: the initial value) among the writes ws of its word. A candidate
// with an empty clause (a write must-ordered between it and the read) is
// impossible: ok is false.
func (f *formula) candidateClauses(o *mustOrder, r, w int32, ws []int32) (clauses [][]solver.Lit, ok bool) {
	s, v := f.s, evVar
	if w >= 0 && o.before(r, w) {
		return nil, false
	}
	if w >= 0 && !o.before(w, r) {
		clauses = append(clauses, []solver.Lit{s.Less(v(w), v(r))})
	}
	for _, w2 := range ws {
		if w2 == w || w2 == r {
			continue
		}
		if o.before(r, w2) || (w >= 0 && o.before(w2, w)) {
			continue
		}
		var lits []solver.Lit
		if !o.before(w2, r) {
			lits = append(lits, s.Less(v(r), v(w2)))
		}
		if w >= 0 && !o.before(w, w2) {
			lits = append(lits, s.Less(v(w2), v(w)))
		}
		if len(lits) == 0 {
			return nil, false
		}
		clauses = append(clauses, lits)
	}
	return clauses, true
}

// query decides whether events a and b can both be enabled at once: some
// consistent prefix contains every predecessor of each but neither. It
// returns the result and, after Sat, the prefix in its reordered order.
func (f *formula) query(m *model, a, b int32) (solver.Result, []int32) {
	s := f.s
	v := func(i int32) solver.Var { return solver.Var(i) }
	as := []solver.Lit{s.Less(f.cut, v(a)), s.Less(f.cut, v(b))}
	for _, x := range []int32{a, b} {
		if p := m.prev[x]; p >= 0 {
			as = append(as, s.Less(v(p), f.cut))
		}
		for _, p := range m.preds[x] {
			as = append(as, s.Less(v(p), f.cut))
		}
	}
	res := s.Solve(as...)
	if res != solver.Sat {
		return res, nil
	}
	pos := s.Positions()
	c := pos[f.cut]
	var pre []int32
	for i := range int32(len(m.ev)) {
		if pos[i] < c {
			pre = append(pre, i)
		}
	}
	slices.SortFunc(pre, func(x, y int32) int { return pos[x] - pos[y] })
	return res, pre
}
