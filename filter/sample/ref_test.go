package sample

import (
	"testing"

	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
)

// referenceKept is a plain re-statement of the bursty samplers over a
// whole trace: count each (goroutine, function) or function's calls,
// look the count up in the schedule's explicit expansion, and keep an
// access when its goroutine's innermost open call (or, outside every call,
// its start routine's one call) was sampled.
func referenceKept(tr *trace.Trace, p Policy) []bool {
	expansion := referenceSampled(p.Schedule, len(tr.Events)+1)
	type key struct {
		g  trace.GID
		fn uint64
	}
	calls := map[key]int{}
	decide := func(g trace.GID, fn uint64) bool {
		k := key{g, fn}
		if p.Scope == Global {
			k.g = 0
		}
		n := calls[k]
		calls[k]++
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
					break
				}
			}
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
		for _, p := range Policies() {
			if p.Scope == PerCall {
				continue
			}
			want := referenceKept(tr, p)
			f := NewPolicyFilter(p, 1)
			for j := range tr.Events {
				if got := f.Keep(&tr.Events[j]); got != want[j] {
					t.Fatalf("trace %d, %s: event %d (%v by g%d) kept=%v, reference %v", i, p.Name, j, tr.Events[j].Op, tr.Events[j].G, got, want[j])
				}
			}
		}
	}
}
