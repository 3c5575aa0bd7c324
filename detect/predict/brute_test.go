package predict

// Ground truth by brute force: every reordering of a small trace is
// enumerated with the explicit semantics (sim, the one-schedule reading of
// the model that CheckWitness also uses), and the races found must be
// exactly those the solver-based detectors report.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/solver"
	"github.com/racekit/racekit/trace"
)

// bruteRaces returns every pair of conflicting accesses (event indices,
// smaller first) that some reordering leaves both enabled.
func bruteRaces(m *model) (map[[2]int32]bool, int) {
	races := map[[2]int32]bool{}
	seen := map[string]bool{}
	var visit func(s *sim)
	visit = func(s *sim) {
		k := s.key()
		if seen[k] {
			return
		}
		seen[k] = true
		G := int32(len(m.byG))
		for g1 := range G {
			a := s.next(g1)
			if a < 0 || !m.ev[a].Op.IsAccess() || s.enabled(a) != nil {
				continue
			}
			for g2 := g1 + 1; g2 < G; g2++ {
				b := s.next(g2)
				if b < 0 || !conflicting(&m.ev[a], &m.ev[b]) || s.enabled(b) != nil {
					continue
				}
				races[[2]int32{min(a, b), max(a, b)}] = true
			}
		}
		for g := range G {
			i := s.next(g)
			if i < 0 || s.canRun(i) != nil {
				continue
			}
			c := s.clone()
			c.run(i)
			visit(c)
		}
	}
	visit(newSim(m))
	return races, len(seen)
}

func (s *sim) key() string {
	var b strings.Builder
	for _, p := range s.pos {
		fmt.Fprintf(&b, "%d,", p)
	}
	keys := make([]memKey, 0, len(s.last))
	for k := range s.last {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].addr != keys[j].addr {
			return keys[i].addr < keys[j].addr
		}
		return !keys[i].atomic && keys[j].atomic
	})
	for _, k := range keys {
		fmt.Fprintf(&b, "|%d.%v=%d", k.addr, k.atomic, s.last[k])
	}
	return b.String()
}

// sitePairs maps event pairs to site pairs.
func sitePairs(evs []trace.Event, races map[[2]int32]bool) []finding.Pair {
	set := map[finding.Pair]bool{}
	for r := range races {
		set[finding.MakePair(evs[r[0]].Site, evs[r[1]].Site)] = true
	}
	return sortedPairs(set)
}

func sortedPairs(set map[finding.Pair]bool) []finding.Pair {
	var ps []finding.Pair
	for p := range set {
		ps = append(ps, p)
	}
	finding.SortPairs(ps)
	return ps
}

// genConfig shapes the random small traces.
type genConfig struct {
	values   float64 // chance that an access or atomic records its value
	bps      bool    // BarrierPairs (calls into untraced code)
	hideable bool    // generate for hiding: record which events a call hides
}

// smallTrace is a random well-formed trace of 2-4 goroutines and about
// 6-14 steps: main (M) forks workers (sometimes one goroutine U is born
// untraced), which read and write x, y, z (values from a small set, so
// that several writes share a value; sometimes unrecorded), take locks l
// and k in write or read mode (nested), send and receive on ch, use the
// atomic word a, and (cfg.bps) call untraced code: a BarrierPair around
// some of its steps, whose D lists objects; at the end each worker
// releases what it holds and ends, and M joins some. Every access has its
// own site, so site pairs are event pairs.
func smallTrace(seed uint64, cfg genConfig) (*trace.Trace, [][]int) {
	r := rand.New(rand.NewPCG(seed, 0x5EED))
	b := trace.NewBuilder()
	type call struct {
		start int
		depth int // locks held when it began
		evs   []int
	}
	type gor struct {
		name  string
		held  []string
		read  []bool
		live  bool
		untrk bool
		calls []*call
	}
	mem := map[string]uint64{}
	owner := map[string]string{}
	readers := map[string]int{}
	var hidden [][]int
	site := 0
	nextSite := func() string { site++; return fmt.Sprintf("s%d", site) }
	known := func() bool { return r.Float64() < cfg.values }
	var cur *gor
	emit := func(i int) int {
		for _, c := range cur.calls {
			c.evs = append(c.evs, i)
		}
		return i
	}
	access := func(g *gor, x string, write bool) {
		s := nextSite()
		if write {
			v := uint64(1 + r.IntN(3))
			mem[x] = v
			if known() {
				emit(b.WriteV(g.name, x, v, s))
			} else {
				emit(b.Write(g.name, x, s))
			}
			return
		}
		if known() {
			emit(b.ReadV(g.name, x, mem[x], s))
		} else {
			emit(b.Read(g.name, x, s))
		}
	}
	atomic := func(g *gor, op trace.Op) {
		e := trace.Event{G: b.G(g.name), Op: op, Obj: b.Obj("a")}
		if op != trace.OpAtomicLoad {
			mem["a"] = uint64(1 + r.IntN(2))
		}
		e.Value = mem["a"]
		if !known() {
			e.Flags, e.Value = trace.FlagValueUnknown, 0
		}
		emit(b.Add(e))
	}
	var gs []*gor
	b.Begin("M")
	gs = append(gs, &gor{name: "M", live: true})
	for i := range 1 + r.IntN(2) {
		g := &gor{name: fmt.Sprintf("T%d", i+1), live: true}
		b.Fork("M", g.name, "")
		gs = append(gs, g)
	}
	if r.IntN(4) == 0 {
		gs = append(gs, &gor{name: "U", untrk: true})
	}
	target := 6 + r.IntN(9)
	for steps, tries := 0, 0; steps < target && tries < 1000; tries++ {
		g := gs[r.IntN(len(gs))]
		cur = g
		if g.untrk && !g.live {
			if r.IntN(3) != 0 {
				continue
			}
			g.live = true
		}
		if !g.live || (g.name == "M" && r.IntN(3) != 0) {
			continue
		}
		switch k := r.IntN(24); {
		case k < 9:
			access(g, []string{"x", "y", "z"}[r.IntN(3)], r.IntN(2) == 0)
		case k < 14:
			if len(g.held) > 0 && r.IntN(2) == 0 {
				i := len(g.held) - 1
				if n := len(g.calls); n > 0 && g.calls[n-1].depth > i {
					continue // a call never releases a lock taken before it
				}
				l := g.held[i]
				if g.read[i] {
					emit(b.RRel(g.name, l))
					readers[l]--
				} else {
					emit(b.Rel(g.name, l))
					delete(owner, l)
				}
				g.held, g.read = g.held[:i], g.read[:i]
				break
			}
			l := []string{"l", "k"}[r.IntN(2)]
			if len(g.held) >= 2 || slices.Contains(g.held, l) || owner[l] != "" {
				continue
			}
			if r.IntN(3) == 0 {
				emit(b.RAcq(g.name, l))
				readers[l]++
				g.held, g.read = append(g.held, l), append(g.read, true)
			} else {
				if readers[l] > 0 {
					continue
				}
				emit(b.Acq(g.name, l))
				owner[l] = g.name
				g.held, g.read = append(g.held, l), append(g.read, false)
			}
		case k < 15:
			emit(b.Snd(g.name, "ch"))
		case k < 16:
			emit(b.Rcv(g.name, "ch"))
		case k < 17:
			atomic(g, trace.OpAtomicStore)
		case k < 18:
			atomic(g, trace.OpAtomicLoad)
		case k < 19:
			atomic(g, trace.OpAtomicRMW)
		case k < 20 && cfg.bps:
			// Ad hoc synchronization inside two calls (thesis Figure 4.1): g
			// writes v, then inside a call raises a flag (or sends); h,
			// inside a call, sees the flag (or receives), then accesses v.
			h := gs[1+r.IntN(len(gs)-1)]
			if h == g || !h.live || len(g.calls) > 0 || len(h.calls) > 0 {
				continue
			}
			v := []string{"x", "y"}[r.IntN(2)]
			access(g, v, true)
			flag := r.IntN(2) == 0
			for _, u := range []*gor{g, h} {
				cur = u
				c := &call{start: b.Call(u.name, "m", map[bool]string{true: "f", false: "ch"}[flag]), depth: len(u.held)}
				u.calls = append(u.calls, c)
				switch {
				case flag && u == g:
					mem["f"]++
					emit(b.WriteV(u.name, "f", 10+mem["f"], nextSite()))
				case flag:
					emit(b.ReadV(u.name, "f", 10+mem["f"], nextSite()))
				case u == g:
					emit(b.Snd(u.name, "ch"))
				default:
					emit(b.Rcv(u.name, "ch"))
				}
				u.calls = u.calls[:0]
				if cfg.hideable {
					hidden = append(hidden, append([]int{c.start}, c.evs...))
					b.Ret(u.name, "m")
				} else {
					b.Ret(u.name, "m")
				}
			}
			access(h, v, r.IntN(2) == 0)
		case k < 22:
			if !cfg.bps {
				access(g, "x", true)
				break
			}
			if n := len(g.calls); n > 0 && r.IntN(2) == 0 {
				c := g.calls[n-1]
				if len(g.held) != c.depth {
					continue
				}
				g.calls = g.calls[:n-1]
				if cfg.hideable {
					hidden = append(hidden, append([]int{c.start}, c.evs...))
					b.Ret(g.name, "m")
				} else {
					emit(b.Ret(g.name, "m"))
				}
				break
			}
			if len(g.calls) >= 2 || (cfg.hideable && len(g.calls) >= 1) {
				continue
			}
			var d []string
			for _, o := range []string{"x", "y", "z", "l", "k", "ch", "a"} {
				if r.IntN(3) == 0 {
					d = append(d, o)
				}
			}
			i := b.Call(g.name, "m", d...)
			emit(i)
			g.calls = append(g.calls, &call{start: i, depth: len(g.held)})
		default:
			// A critical section followed by an access of a variable that
			// another goroutine's critical section then touches: the
			// pattern where prediction beats happens-before.
			h := gs[1+r.IntN(len(gs)-1)]
			l := []string{"l", "k"}[r.IntN(2)]
			if h == g || !h.live || owner[l] != "" || readers[l] > 0 || slices.Contains(g.held, l) || slices.Contains(h.held, l) ||
				len(g.calls) > 0 || len(h.calls) > 0 {
				continue
			}
			v := []string{"x", "y"}[r.IntN(2)]
			access(g, v, true)
			for _, u := range []*gor{g, h} {
				cur = u
				b.Acq(u.name, l)
				if r.IntN(2) == 0 {
					access(u, "z", r.IntN(2) == 0)
				}
				b.Rel(u.name, l)
			}
			access(h, v, r.IntN(2) == 0)
		}
		steps++
	}
	for _, g := range gs[1:] {
		if !g.live {
			continue
		}
		cur = g
		for len(g.calls) > 0 || len(g.held) > 0 {
			if n := len(g.calls); n > 0 && g.calls[n-1].depth == len(g.held) {
				c := g.calls[n-1]
				g.calls = g.calls[:n-1]
				if cfg.hideable {
					hidden = append(hidden, append([]int{c.start}, c.evs...))
					b.Ret(g.name, "m")
				} else {
					emit(b.Ret(g.name, "m"))
				}
				continue
			}
			i := len(g.held) - 1
			if g.read[i] {
				emit(b.RRel(g.name, g.held[i]))
			} else {
				emit(b.Rel(g.name, g.held[i]))
			}
			g.held, g.read = g.held[:i], g.read[:i]
		}
		b.End(g.name)
		if !g.untrk && r.IntN(2) == 0 {
			b.Join("M", g.name)
			if r.IntN(2) == 0 {
				cur = gs[0]
				access(gs[0], "x", false)
			}
		}
	}
	return b.Trace(), hidden
}

// runDetector runs d over tr and returns its distinct site pairs.
func runDetector(tr *trace.Trace, d *Detector) []finding.Pair {
	c := finding.NewCollector()
	d.sink = c
	for i := range tr.Events {
		d.Handle(&tr.Events[i])
	}
	d.Finish()
	return c.Pairs()
}

func whole() Options { return Options{Window: 1 << 30, Conflicts: -1} }

func dump(tr *trace.Trace) string {
	var b strings.Builder
	for i, e := range tr.Events {
		fmt.Fprintf(&b, "%3d %s %s%s %s", i, tr.M.Goroutine(e.G).Label(), e.Op,
			map[bool]string{true: "(r)", false: ""}[e.ReadLock()], tr.M.ObjLabel(e.Obj))
		if e.ValueKnown() {
			fmt.Fprintf(&b, "=%d", e.Value)
		}
		if e.Op == trace.OpMethodBegin {
			var d []string
			for _, a := range e.Addrs {
				d = append(d, tr.M.ObjLabel(a))
			}
			fmt.Fprintf(&b, " D=%v", d)
		}
		fmt.Fprintf(&b, " %s\n", tr.M.Site(e.Site))
	}
	return b.String()
}

func label(tr *trace.Trace, ps []finding.Pair) []string {
	var out []string
	for _, p := range ps {
		a, b := tr.M.Site(p.A).String(), tr.M.Site(p.B).String()
		if b < a {
			a, b = b, a
		}
		out = append(out, a+"-"+b)
	}
	slices.Sort(out)
	return out
}

// checkWitnesses validates every witness of d against tr.
func checkWitnesses(t *testing.T, seed uint64, tr *trace.Trace, d *Detector) {
	t.Helper()
	for _, w := range d.Witnesses() {
		if err := CheckWitness(tr, &w); err != nil {
			t.Fatalf("seed %d: %s witness rejected: %v\n%+v\n%s", seed, d.name, err, w, dump(tr))
		}
	}
}

// TestExactOnSmallTraces is the ground truth: on thousands of random small
// traces mcm and rdit report exactly the site pairs that some reordering
// (under their model) makes race — no more (precision), no fewer
// (maximality) — and every witness passes CheckWitness.
func TestExactOnSmallTraces(t *testing.T) {
	count := 600
	if testing.Short() {
		count = 300
	}
	races, states, withBP := exactOnSmallTraces(t, count, nil)
	t.Logf("%d traces (%d with BarrierPairs), %d races, %d states enumerated", count, withBP, races, states)
	if races == 0 || withBP == 0 {
		t.Fatal("the sample exercises nothing")
	}
}

// exactOnSmallTraces checks mcm and rdit, with windows solved by
// newSolver (nil: the pure-Go solver), against brute force on count
// random small traces, and returns the races found, the states brute
// force enumerated and the traces whose rdit model has BarrierPairs.
func exactOnSmallTraces(t *testing.T, count int, newSolver func() solver.Backend) (races, states, withBP int) {
	t.Helper()
	for seed := range uint64(count) {
		cfg := genConfig{values: 0.6, bps: seed%2 == 0}
		tr, _ := smallTrace(seed, cfg)
		for _, rdit := range []bool{false, true} {
			m := buildModel(tr.Events, newPrefix(), rdit)
			ref, n := bruteRaces(m)
			states += n
			want := sitePairs(tr.Events, ref)
			opts := whole()
			opts.Solver = newSolver
			var d *Detector
			if rdit {
				d = NewRDIT(nil, opts)
			} else {
				d = NewMCM(nil, opts)
			}
			got := runDetector(tr, d)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d %s: got %v, brute force %v\n%s", seed, d.name, label(tr, got), label(tr, want), dump(tr))
			}
			if s := d.Stats(); s["unknown"] != 0 {
				t.Fatalf("seed %d: unknown answers without a budget", seed)
			}
			checkWitnesses(t, seed, tr, d)
			races += len(got)
			if rdit && len(m.bps) > 0 {
				withBP++
			}
		}
	}
	return races, states, withBP
}

// TestWindowsAreSound runs both detectors with tiny windows: everything
// reported must still be a race of the whole trace with a valid witness,
// and pairs closer than the overlap are never lost.
func TestWindowsAreSound(t *testing.T) {
	count := 300
	if testing.Short() {
		count = 200
	}
	var lost, kept int
	for seed := range uint64(count) {
		tr, _ := smallTrace(seed, genConfig{values: 0.6, bps: seed%2 == 1})
		for _, rdit := range []bool{false, true} {
			ref, _ := bruteRaces(buildModel(tr.Events, newPrefix(), rdit))
			full := sitePairs(tr.Events, ref)
			opts := Options{Window: 6, Overlap: 3, Conflicts: -1}
			d := NewMCM(nil, opts)
			if rdit {
				d = NewRDIT(nil, opts)
			}
			got := runDetector(tr, d)
			if n := d.Stats()["witness_rejected"]; n != 0 {
				t.Fatalf("seed %d %s: %d windowed witnesses rejected by the explicit semantics\n%s", seed, d.name, n, dump(tr))
			}
			for _, p := range got {
				if !slices.Contains(full, p) {
					t.Fatalf("seed %d %s: windowed race %v is no race of the whole trace\n%s", seed, d.name, label(tr, []finding.Pair{p}), dump(tr))
				}
			}
			checkWitnesses(t, seed, tr, d)
			kept += len(got)
			lost += len(full) - len(got)
		}
	}
	t.Logf("windows of 6 events, overlap 3: %d races kept, %d lost", kept, lost)
}
