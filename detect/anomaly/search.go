package anomaly

import (
	"math"
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
	byAddrG map[uint64][][]int32   // accesses per address and dense goroutine
	regByAG map[uint64][][]regSpan // regions per address and dense goroutine, in order
	regAcc  map[regAddr][]int32    // accesses per region and address
	info    []evInfo               // per event

	// generic search state
	p           *Pattern
	cp          *cpattern
	pid         int16
	prune       bool
	bound       []int32
	thr         []int32 // per thread symbol: its goroutine, -1 if unbound
	vars        []uint64
	varSet      []bool
	regs        []int32
	regSet      []bool
	sitesBuf    [][]siteTry // per step: the events perSite tried
	siteEvents  int         // Options.SiteEvents, defaulted
	skipped     int64       // events perSite did not try (site_events_skipped)
	consA       [][]int32   // per step: the order constraints (see orderConstraints)
	consB       [][]int32
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
	siteEvents := opt.SiteEvents
	if siteEvents == 0 {
		siteEvents = DefaultSiteEvents
	}
	if siteEvents < 0 {
		siteEvents = math.MaxInt
	}
	return &searcher{m: m, opt: opt, siteEvents: siteEvents, val: newValidator(m), stats: map[string]int64{},
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
	a := s.anomaly(p, P, m.clip(steps, P, true, s.opt.Clips))
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
	s.byAddrG = map[uint64][][]int32{}
	s.regByAG = map[uint64][][]regSpan{}
	for _, x := range m.addrs {
		bg := make([][]int32, len(m.gs))
		rg := make([][]regSpan, len(m.gs))
		for _, e := range m.byAddr[x] {
			g := m.g[e]
			bg[g] = append(bg[g], e)
			if r := m.region[e]; r != 0 {
				l := rg[g]
				if len(l) == 0 || l[len(l)-1].r != r {
					rg[g] = append(l, regSpan{r: r, first: m.regions[r].first, last: m.regions[r].last, acc: s.regAcc[regAddr{r, x}]})
				}
			}
		}
		s.byAddrG[x] = bg
		s.regByAG[x] = rg
	}
	s.info = make([]evInfo, len(m.Events))
	for i := range m.Events {
		e := &m.Events[i]
		s.info[i] = evInfo{e.Obj, e.Site, e.Op == trace.OpWrite}
	}
}

// evInfo is what the search reads of an event, packed.
type evInfo struct {
	obj   uint64
	site  trace.SiteID
	write bool
}

// regSpan is a region in the per-address index: its bounds and its
// accesses to the address.
type regSpan struct {
	r           int32
	first, last int32
	acc         []int32
}

// cpattern is a pattern with its symbols numbered and what bind needs to
// know about each step computed once.
type cpattern struct {
	k          int
	t, v, r    []int // symbol numbers per step
	nt, nv, nr int
	prevSame   []int   // the previous step with the same thread symbol, -1
	repeats    []bool  // a later step is in the same region
	laterSameR [][]int // the later steps in the same region
}

func compile(p *Pattern) *cpattern {
	k := p.Len()
	c := &cpattern{k: k, t: make([]int, k), v: make([]int, k), r: make([]int, k),
		prevSame: make([]int, k), repeats: make([]bool, k), laterSameR: make([][]int, k)}
	num := func(syms []string, out []int) int {
		ids := map[string]int{}
		for i, sym := range syms {
			id, ok := ids[sym]
			if !ok {
				id = len(ids)
				ids[sym] = id
			}
			out[i] = id
		}
		return len(ids)
	}
	c.nt, c.nv, c.nr = num(p.T, c.t), num(p.SV, c.v), num(p.AR, c.r)
	for n := 0; n < k; n++ {
		c.prevSame[n] = -1
		for j := n - 1; j >= 0; j-- {
			if c.t[j] == c.t[n] {
				c.prevSame[n] = j
				break
			}
		}
		for j := n + 1; j < k; j++ {
			if c.r[j] == c.r[n] {
				c.repeats[n] = true
				c.laterSameR[n] = append(c.laterSameR[n], j)
			}
		}
	}
	return c
}

// generic searches pattern p by backtracking over its steps in order,
// binding thread, variable and region symbols from the indices.
//
// Unless Options.PrefixCap is set, bind also prunes, as soon as a step is
// bound, the partial bindings that no full candidate of which can pass the
// partial-order part of the mutation condition (mutable: no later step
// ordered before an earlier one, a consecutive pair without a common
// lock). Pruning only removes subtrees without a mutable candidate and
// keeps the order of the others, so the same candidates reach the
// schedule generator in the same order: the anomalies are those of the
// search without pruning, which only takes much longer (and, with a
// Budget, may stop earlier: pruned subtrees do not count against it).
func (s *searcher) generic(id int, p *Pattern) {
	s.indices()
	c := compile(p)
	s.p, s.cp, s.pid = p, c, int16(id)
	s.prune = s.opt.PrefixCap <= 0 && !s.opt.noPrune
	s.bound = make([]int32, c.k)
	s.thr = make([]int32, c.nt)
	s.vars = make([]uint64, c.nv)
	s.varSet = make([]bool, c.nv)
	s.regs = make([]int32, c.nr)
	s.regSet = make([]bool, c.nr)
	for i := range s.thr {
		s.thr[i] = -1
	}
	s.sitesBuf = make([][]siteTry, c.k)
	s.consA = make([][]int32, c.k)
	s.consB = make([][]int32, c.k)
	s.work, s.outOfBudget = 0, false
	s.prefixes = map[key]int{}
	s.bind(0)
	s.stats["search_steps"] += s.work
	if s.outOfBudget {
		s.stats["budget_exhausted"]++
	}
	s.stats["site_events_skipped"] += s.skipped
	s.skipped = 0
	s.finish()
}

// bind binds step n and the later ones by backtracking, then evaluates
// each full binding.
func (s *searcher) bind(n int) {
	if s.outOfBudget {
		return
	}
	if n == s.cp.k {
		s.candidate()
		return
	}
	if s.prefixCapped(n) {
		return
	}
	s.work++
	if s.work > s.opt.Budget {
		s.outOfBudget = true
		return
	}
	st := s.newStepScan(n)
	st.orderConstraints()
	st.scan()
}

// prefixCapped reports whether step n's prefix is pruned. Prefix pruning:
// once a prefix of sites (the distinct-anomaly key of the steps bound so
// far) has led to a bounded number of full candidates, further dynamic
// instances of it are not expanded: they mostly rediscover the same
// anomalies. This bounds the search on long traces, at the price of
// missing an anomaly whose only feasible instances come late.
func (s *searcher) prefixCapped(n int) bool {
	if n > 0 && s.opt.PrefixCap > 0 {
		pk := key{pat: s.pid}
		for j := 0; j < n; j++ {
			pk.s[j] = s.info[s.bound[j]].site
		}
		pk.s[7] = trace.SiteID(n) | 1<<31
		if s.prefixes[pk] >= s.opt.PrefixCap {
			s.stats["pruned_prefixes"]++
			return true
		}
	}
	return false
}

// stepScan is what bind knows of step n while it looks for the events
// that can bind it: the step's symbols already bound and the order
// constraints on its event.
type stepScan struct {
	s       *searcher
	n       int
	g       int32 // the step's goroutine, -1 if unbound
	x       uint64
	xBound  bool
	r       int32
	rBound  bool
	prev    int32 // the event of the previous step with the same thread symbol, -1
	repeats bool  // a later step is in the same region
	want    bool  // the access type: a write
	// consA, consB: see orderConstraints.
	consA, consB []int32
}

// newStepScan reads what step n's symbols are bound to.
func (s *searcher) newStepScan(n int) stepScan {
	c := s.cp
	st := stepScan{s: s, n: n, g: s.thr[c.t[n]],
		x: s.vars[c.v[n]], xBound: s.varSet[c.v[n]],
		r: s.regs[c.r[n]], rBound: s.regSet[c.r[n]],
		prev: -1, repeats: c.repeats[n], want: s.p.AT[n]}
	if j := c.prevSame[n]; j >= 0 {
		st.prev = s.bound[j]
	}
	return st
}

// orderConstraints computes the order constraints on step n's event (see
// generic): it must not come before an earlier step of another goroutine
// (consA), nor after the last event a later step of another, bound,
// goroutine can have (consB).
func (st *stepScan) orderConstraints() {
	s, n := st.s, st.n
	c, m := s.cp, s.m
	consA, consB := s.consA[n][:0], s.consB[n][:0]
	if s.prune {
		consA = append(consA, s.bound[:n]...)
		for j := n + 1; j < c.k; j++ {
			gj := s.thr[c.t[j]]
			if gj < 0 || c.t[j] == c.t[n] {
				continue
			}
			if s.regSet[c.r[j]] && s.regs[c.r[j]] != 0 {
				consB = append(consB, m.regions[s.regs[c.r[j]]].last)
			} else {
				ev := m.gs[gj].ev
				consB = append(consB, ev[len(ev)-1])
			}
		}
	}
	s.consA[n], s.consB[n] = consA, consB
	st.consA, st.consB = consA, consB
}

// beyond reports whether e, and so every later event of its goroutine,
// comes after the last event some later step can have.
func (st *stepScan) beyond(e int32) bool {
	m := st.s.m
	for _, l := range st.consB {
		if m.g[l] != m.g[e] && m.por(l, e) {
			return true
		}
	}
	return false
}

// before reports whether e, and so every earlier event of its
// goroutine, is ordered before an earlier step.
func (st *stepScan) before(e int32) bool {
	m := st.s.m
	for _, b := range st.consA {
		if m.g[b] != m.g[e] && m.por(e, b) {
			return true
		}
	}
	return false
}

// scan tries every event the indices give for step n, with the symbols
// bound so far.
func (st *stepScan) scan() {
	s, n := st.s, st.n
	m := s.m
	switch {
	case st.rBound:
		// With x bound, perSite keeps the region's accesses to x:
		// regions are short, this is cheaper than an index.
		st.perSite(m.regions[st.r].acc, st.prev)
	case st.g >= 0:
		if st.xBound {
			st.gBound(st.x)
		} else {
			for _, y := range m.addrs {
				st.gBound(y)
			}
		}
	case st.repeats && !st.xBound && s.laterVarOK(n):
		// A later step of the same region has a bound variable: only
		// the regions that access it can hold both.
		y := s.laterVar(n)
		rg := s.regByAG[y]
		for u := int32(0); u < int32(len(m.gs)); u++ {
			if s.threadTaken(u) {
				continue
			}
			for _, sp := range st.window(rg[u]) {
				st.perSite(m.regions[sp.r].acc, -1)
			}
		}
	default:
		one := []uint64{st.x}
		xs := m.addrs
		if st.xBound {
			xs = one
		}
		for _, y := range xs {
			bg := s.byAddrG[y]
			for u := int32(0); u < int32(len(m.gs)); u++ {
				evs := bg[u]
				if len(evs) == 0 || s.threadTaken(u) {
					continue
				}
				if st.repeats {
					for _, sp := range st.window(s.regByAG[y][u]) {
						st.perSite(sp.acc, -1)
					}
					continue
				}
				st.perSite(evs[st.afterBound(evs, u):], -1)
			}
		}
	}
}

// afterBound returns how many of evs (goroutine u's accesses, in order)
// to skip: those ordered before an earlier bound step, which cannot come
// after it.
func (st *stepScan) afterBound(evs []int32, u int32) int {
	s := st.s
	m := s.m
	lo := 0
	for j := 0; j < st.n; j++ {
		b := s.bound[j]
		cl := m.gs[m.g[b]].snaps[m.snap[b]].Get(trace.GID(m.gs[u].tid))
		l := sort.Search(len(evs), func(i int) bool { return m.lt[evs[i]] > cl })
		lo = max(lo, l)
	}
	return lo
}

// gBound enumerates step n's candidates when its goroutine is bound, on
// variable y.
func (st *stepScan) gBound(y uint64) {
	s := st.s
	if st.repeats {
		for _, sp := range st.window(s.regByAG[y][st.g]) {
			if sp.last > st.prev {
				st.perSite(sp.acc, st.prev)
			}
		}
		return
	}
	st.perSite(s.byAddrG[y][st.g], st.prev)
}

// window returns the part of the regions rs (one goroutine's, in
// program order) that can hold step n's event.
func (st *stepScan) window(rs []regSpan) []regSpan {
	if len(rs) == 0 || (len(st.consA) == 0 && len(st.consB) == 0) {
		return rs
	}
	lo := sort.Search(len(rs), func(i int) bool { return !st.before(rs[i].last) })
	rs = rs[lo:]
	if len(st.consB) > 0 {
		rs = rs[:sort.Search(len(rs), func(i int) bool { return st.beyond(rs[i].first) })]
	}
	return rs
}

// perSite tries, in evs (trace order), the events after after that
// have the access type and variable: every event of a site is a
// candidate (§5.2 binds any event of the index), since two events of
// one statement differ in what they hold and where they stand (a
// write made both under a lock and outside it: only the unlocked one
// can interleave). For cost, a site's events beyond the first
// Options.SiteEvents of this enumeration (one goroutine's accesses to
// a variable, or one region's) are tried only when they hold a lockset
// no earlier tried event of the site held; the others are counted in
// Stats as site_events_skipped.
func (st *stepScan) perSite(evs []int32, after int32) {
	s, n := st.s, st.n
	m := s.m
	tried := s.sitesBuf[n][:0]
	if after >= 0 {
		evs = evs[sort.Search(len(evs), func(i int) bool { return evs[i] > after }):]
	}
	for _, e := range evs {
		in := &s.info[e]
		if in.write != st.want || (st.xBound && in.obj != st.x) {
			continue
		}
		if len(st.consB) > 0 && st.beyond(e) {
			break
		}
		site, ls := in.site, m.ls[e]
		count, sameLS := 0, false
		for i := range tried {
			if tried[i].site == site {
				count++
				sameLS = sameLS || tried[i].ls == ls
			}
		}
		if count >= s.siteEvents && sameLS {
			s.skipped++
			continue
		}
		tried = append(tried, siteTry{site, ls})
		s.sitesBuf[n] = tried
		s.tryBind(n, e, st.repeats)
	}
	s.sitesBuf[n] = tried
}

// siteTry is an event perSite tried: its site and lockset.
type siteTry struct {
	site trace.SiteID
	ls   uint32
}

type regAddr struct {
	r int32
	x uint64
}

// laterVarOK reports whether a later step of step n's region has a bound
// variable; laterVar returns the first one's.
func (s *searcher) laterVarOK(n int) bool {
	for _, j := range s.cp.laterSameR[n] {
		if s.varSet[s.cp.v[j]] {
			return true
		}
	}
	return false
}

func (s *searcher) laterVar(n int) uint64 {
	for _, j := range s.cp.laterSameR[n] {
		if s.varSet[s.cp.v[j]] {
			return s.vars[s.cp.v[j]]
		}
	}
	return 0
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
	c, m := s.cp, s.m
	g, r := m.g[e], m.region[e]
	if repeats && r == 0 {
		return
	}
	if s.prune {
		for _, b := range s.consA[n] {
			if m.g[b] != g && m.por(e, b) {
				return
			}
		}
		for _, l := range s.consB[n] {
			if m.g[l] != g && m.por(l, e) {
				return
			}
		}
		if s.p.Consecutive && n > 0 && m.protects(s.bound[n-1], e) {
			return
		}
	}
	obj := s.info[e].obj
	tSym, vSym, rSym := c.t[n], c.v[n], c.r[n]
	newT, newV, newR := false, false, false
	if bg := s.thr[tSym]; bg >= 0 {
		if bg != g {
			return
		}
	} else {
		if s.threadTaken(g) {
			return
		}
		newT = true
	}
	if s.varSet[vSym] {
		if s.vars[vSym] != obj {
			return
		}
	} else {
		for i, y := range s.vars {
			if s.varSet[i] && y == obj {
				return
			}
		}
		newV = true
	}
	if s.regSet[rSym] {
		if s.regs[rSym] != r {
			return
		}
	} else {
		if r != 0 {
			for i, y := range s.regs {
				if s.regSet[i] && y == r {
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
		s.vars[vSym], s.varSet[vSym] = obj, true
	}
	if newR {
		s.regs[rSym], s.regSet[rSym] = r, true
	}
	s.bound[n] = e
	s.bind(n + 1)
	if newT {
		s.thr[tSym] = -1
	}
	if newV {
		s.varSet[vSym] = false
	}
	if newR {
		s.regSet[rSym] = false
	}
}

// candidate evaluates a full binding.
func (s *searcher) candidate() {
	p := s.p
	k := key{pat: s.pid}
	for n, e := range s.bound {
		k.s[n] = s.info[e].site
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
