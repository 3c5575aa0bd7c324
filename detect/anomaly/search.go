package anomaly

import (
	"sort"

	"github.com/racekit/racekit/trace"
)

// Pattern-directed search (§5.2). Candidates come from the indices of the
// model (by address, goroutine and region, §5.1); each full candidate goes
// through the mutation condition (Algorithms 1 and 2), then schedule
// generation, then the static feasibility check of the clip.

// key identifies a distinct anomaly: the pattern (or -1 for the race
// family) and the sites of its events (sorted for races).
type key struct {
	pat int16
	s   [8]trace.SiteID
}

// debugInvalid, when set by a test, sees schedules the checker rejects.
var debugInvalid func(p *Pattern, P, steps []int32, err error)

type searcher struct {
	m        *Model
	opt      Options
	val      *validator
	out      []Anomaly
	stats    map[string]int64
	reported map[key]bool
	attempts map[key]int
	failed   map[key]*Anomaly // first infeasible instance, for KeepInfeasible

	// lazily built indices
	byAddrG map[uint64]map[int32][]int32 // accesses per address and goroutine
	regByAG map[uint64]map[int32][]int32 // regions per address and goroutine, in order
	regAcc  map[regAddr][]int32          // accesses per region and address

	// generic search state
	p           *Pattern
	pid         int16
	bound       []int32
	thr         map[string]int32
	vars        map[string]uint64
	regs        map[string]int32
	work        int64
	prefixes    map[key]int
	outOfBudget bool
}

func newSearcher(m *Model, opt Options) *searcher {
	if opt.Attempts <= 0 {
		opt.Attempts = 4
	}
	if opt.Budget <= 0 {
		opt.Budget = 20_000_000
	}
	return &searcher{m: m, opt: opt, val: newValidator(m), stats: map[string]int64{},
		reported: map[key]bool{}, attempts: map[key]int{}, failed: map[key]*Anomaly{}}
}

// try generates and checks a clip for events P (pattern order) of p, and
// reports the anomaly under k if it is feasible. It returns whether it did.
func (s *searcher) try(k key, p *Pattern, P []int32) bool {
	m := s.m
	s.stats["schedules"]++
	steps, ok := m.generate(P, p.Consecutive)
	if ok {
		if err := s.val.check(steps, P, p.Consecutive); err != nil {
			// The generator and the checker disagree: a bug, never
			// a report. Counted so that tests see it.
			s.stats["invalid_schedules"]++
			if debugInvalid != nil {
				debugInvalid(p, P, steps, err)
			}
			ok = false
		}
	}
	if !ok {
		s.stats["infeasible"]++
		if s.opt.KeepInfeasible && s.failed[k] == nil {
			a := s.anomaly(p, P, nil)
			a.Clip = &Clip{Feasible: false}
			s.failed[k] = &a
		}
		return false
	}
	a := s.anomaly(p, P, m.clip(steps, P, true))
	s.out = append(s.out, a)
	s.reported[k] = true
	delete(s.failed, k)
	return true
}

func (s *searcher) anomaly(p *Pattern, P []int32, c *Clip) Anomaly {
	m := s.m
	a := Anomaly{Pattern: p.Name, Kind: p.Kind, Doc: p.Doc, Evidence: "potential", Clip: c, events: append([]int32(nil), P...)}
	a.Observed = true
	for n, e := range P {
		ev := &m.Events[e]
		a.Sites = append(a.Sites, m.Meta.Site(ev.Site).String())
		a.Vars = append(a.Vars, m.Meta.ObjLabel(ev.Obj))
		a.Seqs = append(a.Seqs, ev.Seq)
		a.siteIDs = append(a.siteIDs, ev.Site)
		if n > 0 && (P[n-1] > e || (p.Consecutive && !s.adjacentInTrace(P[n-1], e))) {
			a.Observed = false
		}
	}
	return a
}

func (s *searcher) adjacentInTrace(a, b int32) bool { return b == a+1 }

// finish appends the kept infeasible anomalies.
func (s *searcher) finish() {
	if !s.opt.KeepInfeasible {
		return
	}
	var ks []key
	for k := range s.failed {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].pat != ks[j].pat {
			return ks[i].pat < ks[j].pat
		}
		for n := range ks[i].s {
			if ks[i].s[n] != ks[j].s[n] {
				return ks[i].s[n] < ks[j].s[n]
			}
		}
		return false
	})
	for _, k := range ks {
		s.out = append(s.out, *s.failed[k])
	}
	s.failed = map[key]*Anomaly{}
}

// ---- data races -------------------------------------------------------

// rentry is the latest access to an address with a given (goroutine,
// site, kind, lockset), as the hybrid detector keeps them: if it is
// ordered before a later access, so is every earlier access with the same
// key, and otherwise it conflicts exactly like them.
type rentry struct {
	g    int32
	site trace.SiteID
	ls   uint32
	ev   int32
}

// races searches the data-race patterns together: every pair of
// conflicting accesses by two goroutines that is independent under
// Algorithm 1 (no common lock, no partial order) is a candidate. The clip
// first tries the order the trace did not show (the predicted one: Figure
// 1's <1,5,2,6,7,3>), then the observed order, each with the pattern whose
// access types it has.
func (s *searcher) races(ps []*Pattern) {
	m := s.m
	byTypes := map[[2]bool]*Pattern{}
	for _, p := range ps {
		if p.T[0] != p.T[1] && p.SV[0] == p.SV[1] && p.AR[0] != p.AR[1] && (p.AT[0] || p.AT[1]) {
			if _, dup := byTypes[[2]bool{p.AT[0], p.AT[1]}]; !dup {
				byTypes[[2]bool{p.AT[0], p.AT[1]}] = p
			}
		}
	}
	var w, r []rentry
	for _, x := range m.addrs {
		w, r = w[:0], r[:0]
		for _, b := range m.byAddr[x] {
			gb := m.g[b]
			wb := m.isWrite(b)
			check := func(es []rentry) {
				for i := range es {
					a := es[i].ev
					if es[i].g == gb || m.por(a, b) || m.sets.protects(es[i].ls, m.ls[b]) {
						continue
					}
					s.raceCandidate(byTypes, a, b)
				}
			}
			check(w)
			own := &r
			if wb {
				check(r)
				own = &w
			}
			site, ls := m.Events[b].Site, m.ls[b]
			found := false
			for i := range *own {
				if e := &(*own)[i]; e.g == gb && e.site == site && e.ls == ls {
					e.ev = b
					found = true
					break
				}
			}
			if !found {
				*own = append(*own, rentry{gb, site, ls, b})
			}
		}
	}
	s.finish()
}

func (s *searcher) raceCandidate(byTypes map[[2]bool]*Pattern, a, b int32) {
	m := s.m
	s.stats["race_candidates"]++
	sa, sb := m.Events[a].Site, m.Events[b].Site
	if sa > sb {
		sa, sb = sb, sa
	}
	k := key{pat: -1}
	k.s[0], k.s[1] = sa, sb
	if s.reported[k] || s.attempts[k] >= s.opt.Attempts {
		return
	}
	s.attempts[k]++
	if p := byTypes[[2]bool{m.isWrite(b), m.isWrite(a)}]; p != nil && s.try(k, p, []int32{b, a}) {
		return
	}
	if p := byTypes[[2]bool{m.isWrite(a), m.isWrite(b)}]; p != nil {
		s.try(k, p, []int32{a, b})
	}
}

// ---- general patterns -------------------------------------------------

func (s *searcher) indices() {
	if s.byAddrG != nil {
		return
	}
	m := s.m
	s.regAcc = map[regAddr][]int32{}
	for r := 1; r < len(m.regions); r++ {
		for _, e := range m.regions[r].acc {
			k := regAddr{int32(r), m.Events[e].Obj}
			s.regAcc[k] = append(s.regAcc[k], e)
		}
	}
	s.byAddrG = map[uint64]map[int32][]int32{}
	s.regByAG = map[uint64]map[int32][]int32{}
	for _, x := range m.addrs {
		bg := map[int32][]int32{}
		rg := map[int32][]int32{}
		for _, e := range m.byAddr[x] {
			g := m.g[e]
			bg[g] = append(bg[g], e)
			if r := m.region[e]; r != 0 {
				l := rg[g]
				if len(l) == 0 || l[len(l)-1] != r {
					rg[g] = append(l, r)
				}
			}
		}
		s.byAddrG[x] = bg
		s.regByAG[x] = rg
	}
}

// generic searches pattern p by backtracking over its steps in order,
// binding thread, variable and region symbols from the indices.
func (s *searcher) generic(id int, p *Pattern) {
	s.indices()
	s.p, s.pid = p, int16(id)
	s.bound = make([]int32, p.Len())
	s.thr, s.vars, s.regs = map[string]int32{}, map[string]uint64{}, map[string]int32{}
	s.work, s.outOfBudget = 0, false
	s.prefixes = map[key]int{}
	s.bind(0)
	if s.outOfBudget {
		s.stats["budget_exhausted"]++
	}
	s.finish()
}

func (s *searcher) bind(n int) {
	if s.outOfBudget {
		return
	}
	p, m := s.p, s.m
	if n == p.Len() {
		s.candidate()
		return
	}
	// Prefix pruning: once a prefix of sites (the distinct-anomaly key of
	// the steps bound so far) has led to a bounded number of full
	// candidates, further dynamic instances of it are not expanded: they
	// mostly rediscover the same anomalies. This bounds the search on long traces, at the price of
	// missing an anomaly whose only feasible instances come late.
	if n > 0 && s.opt.PrefixCap > 0 {
		pk := key{pat: s.pid}
		for j := 0; j < n; j++ {
			pk.s[j] = m.Events[s.bound[j]].Site
		}
		pk.s[7] = trace.SiteID(n) | 1<<31
		if s.prefixes[pk] >= s.opt.PrefixCap {
			s.stats["pruned_prefixes"]++
			return
		}
	}
	s.work++
	if s.work > s.opt.Budget {
		s.outOfBudget = true
		return
	}
	g, gBound := s.thr[p.T[n]]
	x, xBound := s.vars[p.SV[n]]
	r, rBound := s.regs[p.AR[n]]
	prev := int32(-1)
	for j := n - 1; j >= 0; j-- {
		if p.T[j] == p.T[n] {
			prev = s.bound[j]
			break
		}
	}
	repeats := false
	for j := n + 1; j < p.Len(); j++ {
		if p.AR[j] == p.AR[n] {
			repeats = true
		}
	}
	want := p.AT[n]
	firstPerSite := func(evs []int32, after int32, try func(e int32)) {
		var sites []trace.SiteID
	outer:
		for _, e := range evs {
			if e <= after || m.isWrite(e) != want || (xBound && m.Events[e].Obj != x) {
				continue
			}
			for _, st := range sites {
				if st == m.Events[e].Site {
					continue outer
				}
			}
			sites = append(sites, m.Events[e].Site)
			try(e)
		}
	}
	try := func(e int32) { s.tryBind(n, e, repeats) }
	switch {
	case rBound && xBound:
		firstPerSite(s.inRegion(r, x), prev, try)
	case rBound:
		firstPerSite(m.regions[r].acc, prev, try)
	case gBound:
		var xs []uint64
		if xBound {
			xs = []uint64{x}
		} else {
			xs = m.addrs
		}
		for _, y := range xs {
			if repeats {
				for _, rr := range s.regByAG[y][g] {
					if m.regions[rr].last > prev {
						firstPerSite(s.inRegion(rr, y), prev, try)
					}
				}
			} else {
				firstPerSite(s.byAddrG[y][g], prev, try)
			}
		}
	case repeats && !xBound && s.laterVar(n) != nil:
		// A later step of the same region has a bound variable: only
		// the regions that access it can hold both.
		y := *s.laterVar(n)
		for u := int32(0); u < int32(len(m.gs)); u++ {
			if s.threadTaken(u) {
				continue
			}
			for _, rr := range s.regByAG[y][u] {
				firstPerSite(m.regions[rr].acc, -1, try)
			}
		}
	default:
		var xs []uint64
		if xBound {
			xs = []uint64{x}
		} else {
			xs = m.addrs
		}
		for _, y := range xs {
			bg := s.byAddrG[y]
			for u := int32(0); u < int32(len(m.gs)); u++ {
				evs := bg[u]
				if len(evs) == 0 || s.threadTaken(u) {
					continue
				}
				if repeats {
					for _, rr := range s.regByAG[y][u] {
						firstPerSite(s.inRegion(rr, y), -1, try)
					}
					continue
				}
				// Skip u's accesses that are ordered before an
				// earlier bound step: they cannot come after it.
				lo := 0
				for j := 0; j < n; j++ {
					b := s.bound[j]
					c := m.gs[m.g[b]].snaps[m.snap[b]].Get(trace.GID(m.gs[u].tid))
					l := sort.Search(len(evs), func(i int) bool { return m.lt[evs[i]] > c })
					lo = max(lo, l)
				}
				firstPerSite(evs[lo:], -1, try)
			}
		}
	}
}

type regAddr struct {
	r int32
	x uint64
}

// inRegion returns region r's accesses to x.
func (s *searcher) inRegion(r int32, x uint64) []int32 { return s.regAcc[regAddr{r, x}] }

// laterVar returns the bound variable of a later step in step n's region,
// or nil.
func (s *searcher) laterVar(n int) *uint64 {
	p := s.p
	for j := n + 1; j < p.Len(); j++ {
		if p.AR[j] == p.AR[n] {
			if x, ok := s.vars[p.SV[j]]; ok {
				return &x
			}
		}
	}
	return nil
}

func (s *searcher) threadTaken(u int32) bool {
	for _, g := range s.thr {
		if g == u {
			return true
		}
	}
	return false
}

// tryBind binds step n to event e if e respects the symbols bound so far,
// and recurses.
func (s *searcher) tryBind(n int, e int32, repeats bool) {
	p, m := s.p, s.m
	ev := &m.Events[e]
	g, r := m.g[e], m.region[e]
	if repeats && r == 0 {
		return
	}
	tSym, vSym, rSym := p.T[n], p.SV[n], p.AR[n]
	newT, newV, newR := false, false, false
	if bg, ok := s.thr[tSym]; ok {
		if bg != g {
			return
		}
	} else {
		if s.threadTaken(g) {
			return
		}
		newT = true
	}
	if bx, ok := s.vars[vSym]; ok {
		if bx != ev.Obj {
			return
		}
	} else {
		for _, y := range s.vars {
			if y == ev.Obj {
				return
			}
		}
		newV = true
	}
	if br, ok := s.regs[rSym]; ok {
		if br != r {
			return
		}
	} else {
		if r != 0 {
			for _, y := range s.regs {
				if y == r {
					return
				}
			}
		}
		newR = true
	}
	if newT {
		s.thr[tSym] = g
	}
	if newV {
		s.vars[vSym] = ev.Obj
	}
	if newR {
		s.regs[rSym] = r
	}
	s.bound[n] = e
	s.bind(n + 1)
	if newT {
		delete(s.thr, tSym)
	}
	if newV {
		delete(s.vars, vSym)
	}
	if newR {
		delete(s.regs, rSym)
	}
}

// candidate evaluates a full binding.
func (s *searcher) candidate() {
	p, m := s.p, s.m
	k := key{pat: s.pid}
	for n, e := range s.bound {
		k.s[n] = m.Events[e].Site
	}
	if s.reported[k] || s.attempts[k] >= s.opt.Attempts {
		return
	}
	s.stats["candidates"]++
	for n := 1; s.opt.PrefixCap > 0 && n < p.Len(); n++ {
		pk := key{pat: s.pid}
		copy(pk.s[:n], k.s[:n])
		pk.s[7] = trace.SiteID(n) | 1<<31
		s.prefixes[pk]++
	}
	if !s.mutable(s.bound) {
		return
	}
	s.attempts[k]++
	s.try(k, p, append([]int32(nil), s.bound...))
}

// mutable is the mutation condition for a candidate whose events P must
// run in pattern order:
//
//   - no later step may be ordered before an earlier one by the partial
//     order (a consecutive pair must also share no lock: Algorithm 1);
//   - Algorithm 2, generalized: a step placed between two steps of
//     another goroutine needs a position v_x in that goroutine's window
//     where it holds no lock protecting the step.
func (s *searcher) mutable(P []int32) bool {
	m := s.m
	k := len(P)
	for a := 0; a < k; a++ {
		for b := a + 1; b < k; b++ {
			if m.g[P[a]] != m.g[P[b]] && m.por(P[b], P[a]) {
				return false
			}
		}
		if s.p.Consecutive && a+1 < k && m.protects(P[a], P[a+1]) {
			return false
		}
	}
	for n := 0; n < k; n++ {
		gn := m.g[P[n]]
		for a := n - 1; a >= 0; a-- {
			ga := m.g[P[a]]
			if ga == gn {
				continue
			}
			b := -1
			for j := n + 1; j < k; j++ {
				if m.g[P[j]] == ga {
					b = j
					break
				}
			}
			if b < 0 {
				break
			}
			ev := m.gs[ga].ev
			ok := false
			for q := m.pos[P[a]] + 1; q <= m.pos[P[b]]; q++ {
				if !m.sets.protects(m.ls[ev[q]], m.ls[P[n]]) {
					ok = true
					break
				}
			}
			if !ok {
				return false
			}
			break
		}
	}
	return true
}
