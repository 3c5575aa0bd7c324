package sample

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
)

// referenceKept is a plain re-statement of the bursty samplers over a
// whole trace: count each (goroutine, function), function, or (creation
// site, function)'s calls, look the count up in the schedule's explicit
// expansion, and keep an access when its goroutine's innermost open call
// (or, outside every call, its start routine's one call) was sampled.
//
// For gs-ad (PerSite) a goroutine's creation site comes from the trace's
// goroutine table (tr.M: Parent and Site), not from the Fork events the
// Filter reads: a goroutine with a parent shares the counters of its go
// statement's site; one without (born in untraced code) counts alone.
//
// For tp-ad (PerSlot) slots are numbered per pool (the go statement, or
// the roots'), and a goroutine that needs one takes, of its pool's slots
// that no goroutine holds, the one released last, or a new number; a forked
// goroutine holds it until its End, a root until its stack empties (and
// for its start routine's one check only).
func referenceKept(tr *trace.Trace, p Policy) []bool {
	expansion := referenceSampled(p.Schedule, len(tr.Events)+1)
	type pool struct {
		site trace.SiteID
		root bool
	}
	type key struct {
		g    trace.GID
		site trace.SiteID // PerSite, forked goroutines: the go statement
		pool pool         // PerSlot
		slot int
		fn   uint64
	}
	poolOf := func(g trace.GID) pool {
		if gi := tr.M.Goroutine(g); gi.Parent != trace.NoParent {
			return pool{site: gi.Site}
		}
		return pool{root: true}
	}
	held := map[trace.GID]int{}        // PerSlot: the slot g holds
	released := map[pool]map[int]int{} // PerSlot: free slot -> when it was released
	nslots := map[pool]int{}
	clock := 0
	release := func(g trace.GID) {
		s, ok := held[g]
		if !ok {
			return
		}
		delete(held, g)
		pl := poolOf(g)
		if released[pl] == nil {
			released[pl] = map[int]int{}
		}
		clock++
		released[pl][s] = clock
	}
	calls := map[key]int{}
	decide := func(g trace.GID, fn uint64) bool {
		k := key{g: g, fn: fn}
		switch p.Scope {
		case Global:
			k.g = 0
		case PerSite:
			if gi := tr.M.Goroutine(g); gi.Parent != trace.NoParent {
				k = key{g: trace.NoParent, site: gi.Site, fn: fn}
			}
		case PerSlot:
			pl := poolOf(g)
			if _, ok := held[g]; !ok {
				s, best := -1, -1
				for slot, at := range released[pl] {
					if at > best {
						s, best = slot, at
					}
				}
				if s < 0 {
					s = nslots[pl]
					nslots[pl]++
				} else {
					delete(released[pl], s)
				}
				held[g] = s
			}
			k = key{g: trace.NoParent, pool: pl, slot: held[g], fn: fn}
		}
		n := calls[k]
		calls[k]++
		if p.Scope == PerSlot && fn == RootFunc && poolOf(g).root {
			release(g)
		}
		return expansion[n]
	}
	stacks := map[trace.GID][]frame{}
	root := map[trace.GID]bool{}
	out := make([]bool, len(tr.Events))
	for i, e := range tr.Events {
		out[i] = true
		switch e.Op {
		case trace.OpFuncEnter:
			stacks[e.G] = append(stacks[e.G], frame{e.Obj, decide(e.G, e.Obj)})
		case trace.OpFuncExit:
			st := stacks[e.G]
			for j := len(st) - 1; j >= 0; j-- {
				if st[j].fn == e.Obj {
					stacks[e.G] = st[:j]
					if j == 0 && poolOf(e.G).root {
						release(e.G)
					}
					break
				}
			}
		case trace.OpEnd:
			release(e.G)
		case trace.OpRead, trace.OpWrite:
			if st := stacks[e.G]; len(st) > 0 {
				out[i] = st[len(st)-1].sampled
			} else {
				r, ok := root[e.G]
				if !ok {
					r = decide(e.G, RootFunc)
					root[e.G] = r
				}
				out[i] = r
			}
		}
	}
	return out
}

// Differential: the Filter keeps exactly the events the reference keeps,
// for every counter-based sampler, on generated traces with nested calls.
func TestFilterMatchesReference(t *testing.T) {
	n := 150
	if testing.Short() {
		n = 30
	}
	gsFewer := 0
	for i := 0; i < n; i++ {
		c := gen.DefaultConfig()
		c.Seed = uint64(i + 1)
		c.Goroutines = 1 + i%6
		c.Events = gen.MinEvents(c.Goroutines) + int64(300+40*i)
		c.Funcs = 1 + i%5
		c.FuncDepth = 1 + i%3
		c.FuncFraction = []float64{0.05, 0.3, 0.5}[i%3]
		tr := trace.NewTrace()
		if _, err := gen.Generate(c, tr); err != nil {
			t.Fatal(err)
		}
		checkReference(t, fmt.Sprintf("trace %d", i), tr)
		// gs-ad is not tl-ad: on traces whose workers share a go
		// statement and make functions hot, it keeps fewer accesses.
		if c.Goroutines > 2 && c.FuncFraction >= 0.3 {
			if tl, gs := keptAccesses(tr, "tl-ad"), keptAccesses(tr, "gs-ad"); gs < tl {
				gsFewer++
			}
		}
	}
	if gsFewer == 0 {
		t.Fatal("gs-ad never kept fewer accesses than tl-ad: the per-site counters are not shared")
	}
}

// checkReference compares every counter-based sampler with referenceKept
// on tr.
func checkReference(t *testing.T, what string, tr *trace.Trace) {
	t.Helper()
	for _, p := range Policies() {
		if p.Scope == PerCall {
			continue
		}
		want := referenceKept(tr, p)
		f := NewPolicyFilter(p, 1)
		for j := range tr.Events {
			if got := f.Keep(&tr.Events[j]); got != want[j] {
				t.Fatalf("%s, %s: event %d (%v by g%d) kept=%v, reference %v", what, p.Name, j, tr.Events[j].Op, tr.Events[j].G, got, want[j])
			}
		}
	}
}

func keptAccesses(tr *trace.Trace, name string) int64 {
	f, _ := NewFilter(name, 1)
	for j := range tr.Events {
		f.Keep(&tr.Events[j])
	}
	return f.Stats().Logged
}

// randomCallTrace is a hand-built trace for gs-ad's keys, which generated
// traces exercise only in part (one root, two fork sites): several
// goroutines born in untraced code (no Fork), some with accesses before
// any frame, goroutines forked at a few sites by roots
// and by forked goroutines, goroutines interleaving their nested calls of
// a few functions, and ends. There is no synchronization besides forks,
// which is all the samplers' keys depend on.
func randomCallTrace(seed uint64) *trace.Trace {
	r := rand.New(rand.NewPCG(seed, 17))
	b := trace.NewBuilder()
	type gor struct {
		name  string
		depth int
		ended bool
	}
	var gs []*gor
	newRoot := func() {
		gs = append(gs, &gor{name: fmt.Sprintf("R%d", len(gs))})
	}
	for i := 0; i < 1+r.IntN(3); i++ {
		newRoot()
	}
	funcs := []string{"f", "g", "h", "k"}[:1+r.IntN(4)]
	for n := 0; n < 400+r.IntN(1500); n++ {
		g := gs[r.IntN(len(gs))]
		if g.ended {
			continue
		}
		switch x := r.IntN(100); {
		case x < 3:
			newRoot()
		case x < 10:
			c := &gor{name: fmt.Sprintf("F%d", len(gs))}
			gs = append(gs, c)
			b.Fork(g.name, c.name, fmt.Sprintf("go.go:%d", 1+r.IntN(3)))
		case x < 12 && g.depth == 0:
			b.End(g.name)
			g.ended = true
		case x < 45 && g.depth < 4:
			b.Enter(g.name, funcs[r.IntN(len(funcs))])
			g.depth++
		case x < 65 && g.depth > 0:
			b.Exit(g.name, funcs[r.IntN(len(funcs))]) // may close outer frames, or none
			g.depth--
		default:
			b.Write(g.name, fmt.Sprintf("v%d", r.IntN(8)), fmt.Sprintf("a.go:%d", r.IntN(5)))
		}
	}
	return b.Trace()
}

// The reference agrees with the Filter on hand-built traces with many
// roots and fork sites.
func TestFilterMatchesReferenceRoots(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	for i := 0; i < n; i++ {
		checkReference(t, fmt.Sprintf("random call trace %d", i), randomCallTrace(uint64(i+1)))
	}
}
