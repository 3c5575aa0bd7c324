package anomaly

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/lockset"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
)

func genTrace(t testing.TB, seed uint64, events int64, goroutines int, mod func(*gen.Config)) (*trace.Trace, *gen.Truth) {
	t.Helper()
	c := gen.DefaultConfig()
	c.Seed, c.Events, c.Goroutines = seed, events, goroutines
	c.Vars, c.Locks, c.Funcs = 6, 3, 4
	c.HandoffFraction = 0.2
	c.SyncFraction, c.AtomicFraction, c.LockFraction = 0.05, 0.05, 0.2
	c.Shape = gen.Shapes()[seed%4]
	if mod != nil {
		mod(&c)
	}
	tr := trace.NewTrace()
	truth, err := gen.Generate(c, tr)
	if err != nil {
		t.Fatal(err)
	}
	return tr, truth
}

// The data-race candidates are hybrid's races: the same independence
// condition (no common lock in write mode, no partial order through
// fork/join, messages and atomics). Every distinct site pair hybrid
// reports is a candidate (kept, feasible or not, with KeepInfeasible) and
// vice versa; the planted races of the generator are real, so each gets a
// feasible clip.
func TestRaceCandidatesEqualHybrid(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		tr, truth := genTrace(t, seed, 400, 2+int(seed%5), nil)
		col := finding.NewCollector()
		if _, err := detect.Run(tr.Iter(), lockset.NewHybrid(col)); err != nil {
			t.Fatal(err)
		}
		res := Find(tr, Kinds(Builtin(), KindRace), Options{KeepInfeasible: true, Attempts: 1 << 20})
		if res.Stats["invalid_schedules"] != 0 {
			t.Fatalf("seed %d: %d invalid schedules", seed, res.Stats["invalid_schedules"])
		}
		all, feasible := map[finding.Pair]bool{}, map[finding.Pair]bool{}
		for _, a := range res.Anomalies {
			p := finding.MakePair(a.siteIDs[0], a.siteIDs[1])
			all[p] = true
			if a.Clip.Feasible {
				feasible[p] = true
			}
		}
		want := col.Pairs()
		if len(want) != len(all) {
			t.Fatalf("seed %d: %d candidate pairs, hybrid %d", seed, len(all), len(want))
		}
		for _, p := range want {
			if !all[p] {
				t.Fatalf("seed %d: hybrid pair %v is no candidate", seed, p)
			}
		}
		for _, p := range truth.Pairs() {
			if !feasible[p] {
				t.Errorf("seed %d: planted race %v has no feasible clip", seed, p)
			}
		}
	}
}

// Every clip of every kind, on many generated traces, is a feasible
// schedule that makes the anomaly happen in pattern order. The check here
// starts from the clip as a consumer sees it (Seq, goroutine names and
// indices), not from the search's own event indices.
func TestClipsAreFeasibleSchedules(t *testing.T) {
	n := 120
	if testing.Short() {
		n = 30
	}
	total := map[Kind]int{}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		tr, _ := genTrace(t, seed, 300, 2+int(seed%3), func(c *gen.Config) {
			c.Funcs, c.FuncFraction = 3, 0.1
		})
		atomic := func(string) bool { return seed%2 == 0 }
		m := NewModel(tr, Options{AtomicFunc: atomic})
		res := m.Find(Builtin(), Options{AtomicFunc: atomic})
		if res.Stats["invalid_schedules"] != 0 {
			t.Fatalf("seed %d: %d invalid schedules", seed, res.Stats["invalid_schedules"])
		}
		bySeq := map[uint64]int32{}
		for i := range tr.Events {
			bySeq[tr.Events[i].Seq] = int32(i)
		}
		v := newValidator(m)
		for _, a := range res.Anomalies {
			total[a.Kind]++
			c := a.Clip
			var steps, P []int32
			for _, st := range c.Steps {
				e, ok := bySeq[st.Seq]
				if !ok || m.gs[m.g[e]].name != st.G || int(m.pos[e]) != st.Index || tr.Events[e].G != st.GID || tr.Events[e].Op.String() != st.Op {
					t.Fatalf("seed %d: step %+v does not describe trace event %d", seed, st, e)
				}
				steps = append(steps, e)
			}
			for n, i := range c.Anomaly {
				if c.Steps[i].Anomaly != n+1 || c.Steps[i].Seq != a.Seqs[n] {
					t.Fatalf("seed %d: anomaly step %d is %+v", seed, n, c.Steps[i])
				}
				P = append(P, steps[i])
			}
			var p *Pattern
			for _, q := range Builtin() {
				if q.Name == a.Pattern {
					p = q
				}
			}
			if err := v.check(steps, P, p.Consecutive); err != nil {
				t.Fatalf("seed %d: %s %v: %v", seed, a.Pattern, a.Sites, err)
			}
			// Access types and goroutines agree with the pattern.
			for n, e := range P {
				if tr.Events[e].IsWrite() != p.AT[n] {
					t.Fatalf("seed %d: %s step %d has the wrong access type", seed, a.Pattern, n)
				}
				for j, f := range P {
					if (p.T[n] == p.T[j]) != (m.g[e] == m.g[f]) || (p.SV[n] == p.SV[j]) != (tr.Events[e].Obj == tr.Events[f].Obj) {
						t.Fatalf("seed %d: %s steps %d, %d break the pattern's symbols", seed, a.Pattern, n, j)
					}
				}
			}
		}
	}
	t.Logf("clips checked: %v", total)
	if total[KindRace] == 0 || total[KindAtomicity] == 0 || total[KindASV] == 0 {
		t.Errorf("some kind never occurred: %v", total)
	}
}

// Theorem 1 (§6.2): with nested locks, every race that some feasible
// schedule can expose gets a feasible clip. An exhaustive search over the
// interleavings of small generated traces decides, for each candidate
// pair and each order, whether the two accesses can run back to back; the
// generator must then find a schedule for that order.
func TestScheduleCompleteOnSmallTraces(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 100
	}
	// The exhaustive search itself tells Figure 5's false race from the real one.
	for _, por := range []bool{false, true} {
		b, v5 := figure5(por)
		m := NewModel(b.Trace(), Options{})
		if got := exposable(m, newValidator(m), []int32{int32(v5[2]), int32(v5[7])}); got == por {
			t.Fatalf("Figure 5 (partial order %v): exposable %v", por, got)
		}
	}
	checked, real := 0, 0
	for seed := uint64(1); seed <= uint64(2*n); seed++ {
		var tr *trace.Trace
		if seed%2 == 0 {
			tr, _ = genTrace(t, seed, 26, 2+int(seed%3), func(c *gen.Config) {
				c.Vars, c.Locks, c.Nesting, c.Switch = 2, 2, 2, 0.6
				c.Funcs, c.FuncFraction = 0, 0
			})
		} else {
			tr = lockyTrace(seed)
		}
		m := NewModel(tr, Options{})
		v := newValidator(m)
		for _, x := range m.addrs {
			acc := m.byAddr[x]
			for i, a := range acc {
				for _, b := range acc[i+1:] {
					if m.g[a] == m.g[b] || (!m.isWrite(a) && !m.isWrite(b)) || !m.independent(a, b) {
						continue
					}
					for _, P := range [][]int32{{a, b}, {b, a}} {
						checked++
						want := exposable(m, v, P)
						steps, got := m.generate(P, true)
						if got {
							if err := v.check(steps, P, true); err != nil {
								t.Fatalf("seed %d %v: invalid schedule: %v", seed, P, err)
							}
						}
						if want {
							real++
						}
						if want && !got {
							t.Errorf("seed %d: events %v can run back to back but no schedule was generated\n%s", seed, P, dump(m))
						}
						if got && !want {
							t.Fatalf("seed %d: the exhaustive search missed schedule %v", seed, steps)
						}
					}
				}
			}
		}
	}
	t.Logf("%d ordered candidate pairs, %d exposable", checked, real)
}

// exposable searches every interleaving of m's trace for a state where the
// goroutines of P[0] and P[1] stand at them, both enabled, before either
// ran.
func exposable(m *Model, v *validator, P []int32) bool {
	next := make([]int32, len(m.gs))
	seen := map[string]bool{}
	g0, g1 := m.g[P[0]], m.g[P[1]]
	var dfs func() bool
	dfs = func() bool {
		k := fmt.Sprint(next)
		if seen[k] {
			return false
		}
		seen[k] = true
		if next[g0] == m.pos[P[0]] && next[g1] == m.pos[P[1]] && enabled(m, v, next, P[0]) && enabled(m, v, next, P[1]) {
			return true
		}
		for g := range m.gs {
			ev := m.gs[g].ev
			if int(next[g]) >= len(ev) {
				continue
			}
			e := ev[next[g]]
			if e == P[0] || e == P[1] || !enabled(m, v, next, e) {
				continue
			}
			next[g]++
			ok := dfs()
			next[g]--
			if ok {
				return true
			}
		}
		return false
	}
	return dfs()
}

// enabled decides from the trace's rules alone (not the clocks) whether e
// can run next after the events below next.
func enabled(m *Model, v *validator, next []int32, e int32) bool {
	ran := func(f int32) bool { return m.pos[f] < next[m.g[f]] }
	ev := &m.Events[e]
	if m.pos[e] == 0 {
		if f, ok := v.forkOf[m.g[e]]; ok {
			if !ran(f) {
				return false
			}
		} else {
			for f := int32(0); f < e; f++ {
				if !ran(f) {
					return false
				}
			}
		}
	}
	switch ev.Op {
	case trace.OpSyncAcquire, trace.OpAtomicLoad, trace.OpAtomicRMW:
		list := v.relByO[ev.Obj]
		if ev.Op != trace.OpSyncAcquire {
			list = v.relByA[ev.Obj]
		}
		for _, f := range list {
			if f < e && !ran(f) {
				return false
			}
		}
	case trace.OpJoin:
		for u := range m.gs {
			if m.gs[u].gid == trace.GID(ev.Obj) {
				for _, f := range m.gs[u].ev {
					if f < e && !ran(f) {
						return false
					}
				}
			}
		}
	case trace.OpAcquire:
		for u := range m.gs {
			// Locks held by u: acquires ran and not yet released.
			var held []hold
			for _, f := range m.gs[u].ev[:next[u]] {
				fe := &m.Events[f]
				if fe.Op == trace.OpAcquire {
					held = append(held, hold{fe.Obj, fe.ReadLock(), 0})
				} else if fe.Op == trace.OpRelease {
					if j := findHold(held, fe.Obj, fe.ReadLock()); j >= 0 {
						held = append(held[:j], held[j+1:]...)
					}
				}
			}
			for _, h := range held {
				if h.lock == ev.Obj && (!h.read || !ev.ReadLock()) {
					return false
				}
			}
		}
	}
	return true
}

func dump(m *Model) string {
	s := ""
	for i := range m.Events {
		e := &m.Events[i]
		s += fmt.Sprintf("%d: %s %s %s\n", i, m.gs[m.g[i]].name, e.Op, m.Meta.ObjLabel(e.Obj))
	}
	return s
}

// lockyTrace is a small random trace in which unprotected accesses mix
// with nested critical sections and messages, so that locks make some
// hybrid-independent pairs impossible to run back to back (Figure 5).
func lockyTrace(seed uint64) *trace.Trace {
	r := seed*0x9E3779B97F4A7C15 + 1
	rnd := func(n int) int {
		r ^= r << 13
		r ^= r >> 7
		r ^= r << 17
		return int(r % uint64(n))
	}
	b := trace.NewBuilder()
	gs := []string{"A", "B", "C"}[:2+rnd(2)]
	held := map[string][]string{}
	for _, g := range gs {
		b.Fork("main", g, "")
	}
	for i := 0; i < 18; i++ {
		g := gs[rnd(len(gs))]
		switch k := rnd(10); {
		case k < 4:
			v := []string{"x", "y"}[rnd(2)]
			site := fmt.Sprintf("%s%d", v, rnd(3))
			if rnd(2) == 0 {
				b.Read(g, v, site)
			} else {
				b.Write(g, v, site)
			}
		case k < 6:
			l := []string{"l1", "l2"}[rnd(2)]
			free := true
			for _, hs := range held {
				for _, h := range hs {
					if h == l {
						free = false
					}
				}
			}
			if free {
				b.Acq(g, l)
				held[g] = append(held[g], l)
			}
		case k < 8:
			if hs := held[g]; len(hs) > 0 {
				b.Rel(g, hs[len(hs)-1])
				held[g] = hs[:len(hs)-1]
			}
		case k < 9:
			b.Snd(g, []string{"o", "p"}[rnd(2)])
		default:
			b.Rcv(g, []string{"o", "p"}[rnd(2)])
		}
	}
	for _, g := range gs {
		for hs := held[g]; len(hs) > 0; hs = hs[:len(hs)-1] {
			b.Rel(g, hs[len(hs)-1])
		}
	}
	return b.Trace()
}

// randomPatterns returns n valid user patterns of 2 to 4 steps: random
// thread, variable and region symbols (a region symbol belongs to one
// thread symbol), access types, and consecutive or not, so that every
// case of the search (bound goroutine without region, regions that
// repeat or not, later bound variables) is exercised.
func randomPatterns(seed uint64, n int) []*Pattern {
	r := seed*0x9E3779B97F4A7C15 + 7
	rnd := func(k int) int {
		r ^= r << 13
		r ^= r >> 7
		r ^= r << 17
		return int(r % uint64(k))
	}
	var out []*Pattern
	for len(out) < n {
		k := 2 + rnd(3)
		p := &Pattern{Name: fmt.Sprintf("rnd%d", len(out)), Kind: KindUser, Consecutive: rnd(4) == 0}
		for i := 0; i < k; i++ {
			t := rnd(3)
			p.T = append(p.T, fmt.Sprintf("t%d", t))
			p.SV = append(p.SV, fmt.Sprintf("s%d", rnd(3)))
			p.AR = append(p.AR, fmt.Sprintf("u%d.%d", t, rnd(2)))
			p.AT = append(p.AT, rnd(2) == 0)
		}
		if p.check() == nil {
			out = append(out, p)
		}
	}
	return out
}

// sameAnomalies reports the first difference between two results:
// pattern, sites, the events' Seqs, whether observed, and the clip.
func sameAnomalies(got, want *Result) error {
	if len(got.Anomalies) != len(want.Anomalies) {
		return fmt.Errorf("%d anomalies, want %d", len(got.Anomalies), len(want.Anomalies))
	}
	for i := range want.Anomalies {
		a, b := &got.Anomalies[i], &want.Anomalies[i]
		ka := fmt.Sprintf("%s %v %v %v", a.Pattern, a.Sites, a.Seqs, a.Observed)
		kb := fmt.Sprintf("%s %v %v %v", b.Pattern, b.Sites, b.Seqs, b.Observed)
		if ka != kb {
			return fmt.Errorf("anomaly %d is %s, want %s", i, ka, kb)
		}
		if !reflect.DeepEqual(a.Clip, b.Clip) {
			return fmt.Errorf("anomaly %d (%s): clips differ", i, ka)
		}
	}
	return nil
}

// compactSteps returns the steps of c a compact clip keeps: all but the
// accesses and function entries/exits, except the anomaly's events and
// the accesses at their statements (file:line).
func compactSteps(c *Clip) []Step {
	lines := map[string]bool{}
	for _, k := range c.Anomaly {
		lines[stepLine(c.Steps[k].Site)] = true
	}
	var out []Step
	for _, st := range c.Steps {
		switch st.Op {
		case "r", "w", "enter", "exit":
			if st.Anomaly == 0 && !((st.Op == "r" || st.Op == "w") && lines[stepLine(st.Site)]) {
				continue
			}
		}
		out = append(out, st)
	}
	return out
}

// stepLine is a step's site without its column (file:line).
func stepLine(site string) string {
	if i := strings.LastIndexByte(site, ':'); i >= 0 && strings.Count(site, ":") >= 2 {
		return site[:i]
	}
	return site
}

// The search prunes partial bindings that cannot pass the mutation
// condition (generic). Without pruning and with an unlimited budget it
// must find exactly the same anomalies, with the same instances and clips,
// for the built-in patterns and for random user patterns.
func TestPruningKeepsAnomalies(t *testing.T) {
	n := 20
	if testing.Short() || raceOn {
		n = 4
	}
	total, pruned, all := 0, int64(0), int64(0)
	for seed := uint64(1); seed <= uint64(n); seed++ {
		tr, _ := genTrace(t, seed, 300+int64(seed%3)*300, 2+int(seed%4), func(c *gen.Config) {
			c.Funcs, c.FuncFraction = 3, 0.1
			c.Vars = 3 + int(seed%4)
			// More communication: more partial order, more pruning.
			c.SyncFraction, c.AtomicFraction = 0.1, 0.1
		})
		atomic := func(string) bool { return seed%3 == 0 }
		ps := append(Builtin(), randomPatterns(seed, 3)...)
		m := NewModel(tr, Options{AtomicFunc: atomic})
		keeps := []bool{false}
		if seed%4 == 0 {
			keeps = append(keeps, true)
		}
		for _, keep := range keeps {
			opt := Options{AtomicFunc: atomic, KeepInfeasible: keep, Budget: 1 << 62}
			t0 := time.Now()
			fast := m.Find(ps, opt)
			t1 := time.Now()
			opt.noPrune = true
			slow := m.Find(ps, opt)
			if testing.Verbose() {
				t.Logf("seed %d: %v pruned, %v not", seed, t1.Sub(t0), time.Since(t1))
			}
			if fast.Stats["invalid_schedules"] != 0 || slow.Stats["invalid_schedules"] != 0 {
				t.Fatalf("seed %d: invalid schedules", seed)
			}
			if err := sameAnomalies(fast, slow); err != nil {
				t.Fatalf("seed %d keep %v: with pruning vs without: %v", seed, keep, err)
			}
			total += len(fast.Anomalies)
			pruned += slow.Stats["search_steps"] - fast.Stats["search_steps"]
			all += slow.Stats["search_steps"]
		}
	}
	// Longer traces of the default configuration, built-in patterns.
	for seed := uint64(1); seed <= 2; seed++ {
		if raceOn && seed > 1 {
			break
		}
		c := gen.DefaultConfig()
		c.Seed, c.Events, c.Goroutines = seed, 10_000, 3+int(seed)
		tr := trace.NewTrace()
		if _, err := gen.Generate(c, tr); err != nil {
			t.Fatal(err)
		}
		m := NewModel(tr, Options{})
		fast := m.Find(Builtin(), Options{Budget: 1 << 62})
		slow := m.Find(Builtin(), Options{Budget: 1 << 62, noPrune: true})
		if err := sameAnomalies(fast, slow); err != nil {
			t.Fatalf("default configuration, seed %d: with pruning vs without: %v", seed, err)
		}
		total += len(fast.Anomalies)
		pruned += slow.Stats["search_steps"] - fast.Stats["search_steps"]
		all += slow.Stats["search_steps"]
	}
	t.Logf("%d anomalies compared, %d of %d search steps pruned", total, pruned, all)
	if total == 0 || pruned <= 0 {
		t.Errorf("nothing compared (%d anomalies) or pruned (%d steps)", total, pruned)
	}
}

// A compact clip is the full clip without the data accesses and function
// entries and exits that are not anomaly events: steps in schedule order,
// per goroutine in program order with their index in the whole trace,
// every other event of each goroutine's prefix kept.
func TestCompactClips(t *testing.T) {
	n := 40
	if testing.Short() || raceOn {
		n = 8
	}
	compacted := 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		tr, _ := genTrace(t, seed, 2000, 2+int(seed%4), func(c *gen.Config) {
			c.Funcs, c.FuncFraction = 3, 0.1
		})
		m := NewModel(tr, Options{})
		full := m.Find(Builtin(), Options{Clips: ClipFull})
		comp := m.Find(Builtin(), Options{Clips: ClipCompact})
		auto := m.Find(Builtin(), Options{})
		if len(full.Anomalies) != len(comp.Anomalies) || len(full.Anomalies) != len(auto.Anomalies) {
			t.Fatalf("seed %d: %d anomalies with full clips, %d compact, %d auto", seed, len(full.Anomalies), len(comp.Anomalies), len(auto.Anomalies))
		}
		bySeq := map[uint64]int32{}
		for i := range tr.Events {
			bySeq[tr.Events[i].Seq] = int32(i)
		}
		for i := range full.Anomalies {
			f, c, a := full.Anomalies[i].Clip, comp.Anomalies[i].Clip, auto.Anomalies[i].Clip
			if f.Compact || !c.Compact || a.Compact != (f.Events > FullClipSteps) || f.Events != len(f.Steps) || c.Events != f.Events {
				t.Fatalf("seed %d: compact flags %v %v %v, events %d %d, %d steps", seed, f.Compact, c.Compact, a.Compact, f.Events, c.Events, len(f.Steps))
			}
			want := compactSteps(f)
			if fmt.Sprint(want) != fmt.Sprint(c.Steps) || fmt.Sprint(f.Goroutines) != fmt.Sprint(c.Goroutines) {
				t.Fatalf("seed %d: compact clip\n%v\nis not the full clip filtered\n%v", seed, c.Steps, want)
			}
			for n, k := range c.Anomaly {
				if c.Steps[k].Anomaly != n+1 || c.Steps[k].Seq != full.Anomalies[i].Seqs[n] {
					t.Fatalf("seed %d: compact anomaly step %d is %+v", seed, n, c.Steps[k])
				}
			}
			// Per goroutine: the kept events are exactly the
			// non-compactable events of its prefix, with the anomaly
			// events, in program order.
			last := map[string]int{}
			seen := map[string][]int{}
			for _, st := range c.Steps {
				e := bySeq[st.Seq]
				if int(m.pos[e]) != st.Index || m.gs[m.g[e]].name != st.G {
					t.Fatalf("seed %d: step %+v is not trace event %d", seed, st, e)
				}
				if l, ok := last[st.G]; ok && st.Index <= l {
					t.Fatalf("seed %d: %s's steps out of program order", seed, st.G)
				}
				last[st.G] = st.Index
				seen[st.G] = append(seen[st.G], st.Index)
			}
			ends := map[string]int{}
			for _, st := range f.Steps {
				ends[st.G] = st.Index
			}
			for g := range m.gs {
				name := m.gs[g].name
				end, ok := ends[name]
				if !ok {
					continue
				}
				var want []int
				for p, e := range m.gs[g].ev[:end+1] {
					role, atLine := false, false
					es := m.Meta.Site(tr.Events[e].Site)
					for _, s := range full.Anomalies[i].Seqs {
						role = role || tr.Events[e].Seq == s
						as := m.Meta.Site(tr.Events[bySeq[s]].Site)
						atLine = atLine || (tr.Events[e].Op.IsAccess() && es.Line > 0 && es.File == as.File && es.Line == as.Line)
					}
					if !compactable(tr.Events[e].Op) || role || atLine {
						want = append(want, p)
					}
				}
				if fmt.Sprint(want) != fmt.Sprint(seen[name]) {
					t.Fatalf("seed %d: %s keeps events %v of its prefix, want %v", seed, name, seen[name], want)
				}
			}
			if len(c.Steps) < len(f.Steps) {
				compacted++
			}
		}
	}
	if compacted == 0 {
		t.Error("no clip was shorter compact")
	}
}
