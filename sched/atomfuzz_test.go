package sched

import (
	"fmt"
	"testing"
)

// buyer is a goroutine of a check-then-act on a locked counter: it checks
// under the lock that an item is left (s.go:10, a read at 11), releases
// it, and takes the item under the lock again (s.go:20, a write at 21).
// The two sections are each atomic, the whole is not: two buyers that
// both check before either takes sell the last item twice. An optional
// prelude of synchronization comes first.
func buyer(name string, prelude int) *simG {
	g := &simG{name: name}
	for i := 0; i < prelude; i++ {
		g.steps = append(g.steps, simStep{kind: KindAtomic, obj: 0x900, site: fmt.Sprintf("s.go:%d", 100+i)})
	}
	end := len(g.steps) + 6
	g.steps = append(g.steps,
		simStep{kind: KindLock, obj: objL, site: "s.go:10"},
		simStep{kind: KindRead, obj: objX, site: "s.go:11", do: func(v map[string]int) int { v["seen."+name] = 1 - v["sold"]; return -1 }},
		simStep{kind: KindUnlock, obj: objL, site: "s.go:12", do: func(v map[string]int) int {
			if v["seen."+name] <= 0 {
				return end // sold out: nothing to take
			}
			return -1
		}},
		simStep{kind: KindLock, obj: objL, site: "s.go:20"},
		simStep{kind: KindWrite, obj: objX, site: "s.go:21", do: func(v map[string]int) int { v["sold"]++; return -1 }},
		simStep{kind: KindUnlock, obj: objL, site: "s.go:22"},
	)
	return g
}

// AtomFuzzer pauses a buyer between its check and its act, lets the other
// check, and the item is sold twice in every run; the random scheduler
// rarely does so once the second buyer comes late.
func TestAtomFuzzerCheckThenAct(t *testing.T) {
	split, err := ParseSplit("s.go:10>s.go:20")
	if err != nil {
		t.Fatal(err)
	}
	const runs = 200
	for _, n := range []int{0, 10} {
		fuzzed, violations, random := 0, 0, 0
		for seed := uint64(0); seed < runs; seed++ {
			af := NewAtomFuzzer(seed, split)
			res := simulate(af, []*simG{buyer("g0.1", n), buyer("g0.2", 0)})
			if res.stuck {
				t.Fatalf("seed %d: stuck: %v", seed, res.order)
			}
			if res.vars["sold"] > 1 {
				fuzzed++
			}
			if len(af.Violations()) > 0 {
				violations++
			}
			if res := simulate(NewRandom(seed), []*simG{buyer("g0.1", n), buyer("g0.2", 0)}); res.vars["sold"] > 1 {
				random++
			}
		}
		t.Logf("prelude %d: oversold in %d of %d runs (violations made: %d; random: %d)", n, fuzzed, runs, violations, random)
		if fuzzed != runs || violations != runs {
			t.Errorf("prelude %d: AtomFuzzer oversold %d and made the violation %d of %d runs, want all", n, fuzzed, violations, runs)
		}
		if n >= 10 && random > runs/4 {
			t.Errorf("prelude %d: random scheduling oversold %d of %d runs; the example expects rarely", n, random, runs)
		}
	}
}

// A buyer whose two sections a common lock around both makes atomic is
// paused, released (every enabled goroutine paused or blocked), and never
// oversells.
func TestAtomFuzzerGuarded(t *testing.T) {
	split, _ := ParseSplit("s.go:10>s.go:20")
	guarded := func(name string) *simG {
		g := buyer(name, 0)
		g.steps = append([]simStep{{kind: KindLock, obj: objY, site: "s.go:1"}}, g.steps...)
		for i := range g.steps {
			if g.steps[i].kind == KindUnlock && g.steps[i].do != nil {
				// The early return now leads to the guard's unlock.
				g.steps[i].do = func(v map[string]int) int {
					if v["seen."+name] <= 0 {
						return 7
					}
					return -1
				}
			}
		}
		g.steps = append(g.steps, simStep{kind: KindUnlock, obj: objY, site: "s.go:30"})
		return g
	}
	for seed := uint64(0); seed < 100; seed++ {
		af := NewAtomFuzzer(seed, split)
		res := simulate(af, []*simG{guarded("g0.1"), guarded("g0.2")})
		if res.stuck || res.vars["sold"] != 1 || len(af.Violations()) != 0 {
			t.Fatalf("seed %d: stuck %v, sold %d, violations %v: %v", seed, res.stuck, res.vars["sold"], af.Violations(), res.order)
		}
	}
}

// The split's statements are parsed as written and printed back; a
// malformed one is an error naming it.
func TestParseSplit(t *testing.T) {
	s, err := ParseSplit(" shop.go:10 > shop.go:20:3 ")
	if err != nil || s.String() != "shop.go:10>shop.go:20:3" {
		t.Fatalf("ParseSplit: %v, %v", s, err)
	}
	for _, bad := range []string{"", "shop.go:10", "shop.go:10>", "a>b"} {
		if _, err := ParseSplit(bad); err == nil {
			t.Errorf("ParseSplit(%q): no error", bad)
		}
	}
}

// A goroutine paused between its sections (Get's lock, then Put's) while
// another spins on the lock for the token it holds is released after
// atomMaxWait decisions and not paused again at that point: every run
// ends, and soon.
func TestAtomFuzzerSpinner(t *testing.T) {
	split, _ := ParseSplit("p.go:19>p.go:31")
	holder := &simG{name: "g0.1", steps: []simStep{
		{kind: KindLock, obj: objL, site: "p.go:19", do: set("busy", 1)},
		{kind: KindUnlock, obj: objL, site: "p.go:20"},
		{kind: KindLock, obj: objL, site: "p.go:31", do: set("busy", 0)},
		{kind: KindUnlock, obj: objL, site: "p.go:32"},
	}}
	spinner := func() *simG {
		return &simG{name: "g0.2", steps: []simStep{
			{kind: KindAtomic, obj: 0x900, site: "p.go:1"}, // comes second
			{kind: KindLock, obj: objL, site: "p.go:19"},
			{kind: KindUnlock, obj: objL, site: "p.go:21", do: func(v map[string]int) int {
				if v["busy"] == 1 {
					return 1 // spin: lock again
				}
				return -1
			}},
		}}
	}
	for seed := uint64(0); seed < 50; seed++ {
		h := *holder
		res := simulate(NewAtomFuzzer(seed, split), []*simG{&h, spinner()})
		if res.stuck {
			t.Fatalf("seed %d: stuck", seed)
		}
		if len(res.steps) > 4*atomMaxWait {
			t.Errorf("seed %d: %d steps, want at most %d", seed, len(res.steps), 4*atomMaxWait)
		}
	}
}
