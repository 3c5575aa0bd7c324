package sched

import (
	"fmt"
	"testing"
)

// transfer is the goroutine of DeadlockFuzzer's motivating example (Joshi
// et al., PLDI'09, Figure 1): an optional long prelude of synchronization
// (f1..fn), then lock first at "a", lock second at "b", unlock both. Two
// of them with the locks swapped and the prelude in the first form the
// cycle a>b, a>b, which random scheduling rarely closes: the second
// goroutine is done before the first has finished its prelude.
func transfer(name string, prelude int, first, second uint64, guard uint64) *simG {
	g := &simG{name: name}
	if guard != 0 {
		g.steps = append(g.steps, simStep{kind: KindLock, obj: guard, site: "x.go:1"})
	}
	for i := 0; i < prelude; i++ {
		g.steps = append(g.steps, simStep{kind: KindAtomic, obj: 0x900, site: fmt.Sprintf("x.go:%d", 100+i)})
	}
	g.steps = append(g.steps,
		simStep{kind: KindLock, obj: first, site: "x.go:10"},
		simStep{kind: KindLock, obj: second, site: "x.go:11"},
		simStep{kind: KindUnlock, obj: second, site: "x.go:12"},
		simStep{kind: KindUnlock, obj: first, site: "x.go:13"},
	)
	if guard != 0 {
		g.steps = append(g.steps, simStep{kind: KindUnlock, obj: guard, site: "x.go:14"})
	}
	return g
}

func TestDeadlockFuzzerFigure1(t *testing.T) {
	cycle, err := ParseCycle("x.go:10>x.go:11, x.go:10>x.go:11")
	if err != nil {
		t.Fatal(err)
	}
	const runs = 200
	for _, n := range []int{0, 10, 100} {
		fuzzed, random := 0, 0
		for seed := uint64(0); seed < runs; seed++ {
			gs := []*simG{transfer("g0.1", n, objX, objY, 0), transfer("g0.2", 0, objY, objX, 0)}
			if simulate(NewDeadlockFuzzer(seed, cycle), gs).stuck {
				fuzzed++
			}
			gs = []*simG{transfer("g0.1", n, objX, objY, 0), transfer("g0.2", 0, objY, objX, 0)}
			if simulate(NewRandom(seed), gs).stuck {
				random++
			}
		}
		t.Logf("prelude %d: deadlock in %d of %d runs (random: %d)", n, fuzzed, runs, random)
		if fuzzed != runs {
			t.Errorf("prelude %d: DeadlockFuzzer deadlocked %d of %d runs, want all", n, fuzzed, runs)
		}
		if n >= 10 && random > runs/10 {
			t.Errorf("prelude %d: random scheduling deadlocked %d of %d runs; the example expects rarely", n, random, runs)
		}
	}
}

// A cycle a common lock guards cannot close: the paused goroutine is
// released (every enabled goroutine paused) and every run ends.
func TestDeadlockFuzzerGuarded(t *testing.T) {
	cycle, _ := ParseCycle("x.go:10>x.go:11,x.go:10>x.go:11")
	for seed := uint64(0); seed < 200; seed++ {
		df := NewDeadlockFuzzer(seed, cycle)
		gs := []*simG{transfer("g0.1", 5, objX, objY, objL), transfer("g0.2", 0, objY, objX, objL)}
		if res := simulate(df, gs); res.stuck {
			t.Fatalf("seed %d: a guarded cycle deadlocked: %v", seed, res.order)
		}
	}
}

// A goroutine that requests the cycle's lock without holding the link's
// held lock is not paused: the cycle needs both.
func TestDeadlockFuzzerNeedsHeld(t *testing.T) {
	cycle, _ := ParseCycle("x.go:10>x.go:11,x.go:10>x.go:11")
	df := NewDeadlockFuzzer(1, cycle)
	w := []Point{{G: "g0.1", Kind: KindLock, Obj: objX, Site: "x.go:11", Enabled: true}}
	if i := df.Next(w); i != 0 || len(df.Postponed()) != 0 {
		t.Fatalf("paused %v without the held lock", df.Postponed())
	}
	w = []Point{{G: "g0.1", Kind: KindLock, Obj: objY, Site: "x.go:10", Enabled: true}}
	df.Next(w)
	w = []Point{
		{G: "g0.1", Kind: KindLock, Obj: objX, Site: "x.go:11", Enabled: true},
		{G: "g0.2", Kind: KindAtomic, Obj: 0x900, Site: "x.go:50", Enabled: true},
	}
	if i := df.Next(w); i != 1 || len(df.Postponed()) != 1 {
		t.Fatalf("chose %d, paused %v; want g0.2 to run and g0.1 paused", i, df.Postponed())
	}
}

func TestParseCycle(t *testing.T) {
	c, err := ParseCycle("a/b.go:10>a/b.go:12:3,c.go:5>c.go:7")
	if err != nil || c.String() != "a/b.go:10>a/b.go:12:3,c.go:5>c.go:7" {
		t.Fatalf("ParseCycle: %v, %v", c, err)
	}
	for _, bad := range []string{"", "a.go:1>a.go:2", "a.go:1,b.go:2", "a.go:1>b,c.go:1>c.go:2", "a.go>b.go:1,c.go:1>c.go:2"} {
		if _, err := ParseCycle(bad); err == nil {
			t.Errorf("ParseCycle(%q): no error", bad)
		}
	}
}

// A lock held across a channel operation (detect/deadlock's LockChannel):
// the waiter pauses at its send while it holds the lock taken at the held
// statement; the other link, with no held statement ("*"), pauses any
// goroutine at its Lock of the request statement, holding nothing.
func TestDeadlockFuzzerLockChannel(t *testing.T) {
	cycle, err := ParseCycle("x.go:10>x.go:11,*>x.go:20")
	if err != nil || cycle.String() != "x.go:10>x.go:11,*>x.go:20" {
		t.Fatalf("ParseCycle: %v, %v", cycle, err)
	}
	fz := NewDeadlockFuzzer(1, cycle)
	lock := Point{G: "a", Kind: KindLock, Obj: objX, Site: "x.go:10", Enabled: true}
	if i := fz.Next([]Point{lock}); i != 0 {
		t.Fatalf("Next = %d, want the lock", i)
	}
	for _, c := range []struct {
		p    Point
		want bool
	}{
		{Point{G: "a", Kind: KindSend, Obj: objY, Site: "x.go:11", Enabled: true}, true},  // holds the lock taken at x.go:10
		{Point{G: "b", Kind: KindSend, Obj: objY, Site: "x.go:11", Enabled: true}, false}, // holds nothing
		{Point{G: "b", Kind: KindLock, Obj: objX, Site: "x.go:20", Enabled: true}, true},  // the "*" link
		{Point{G: "b", Kind: KindRecv, Obj: objY, Site: "x.go:20", Enabled: true}, false}, // a "*" link requests a lock
	} {
		if got := fz.WouldPause(c.p); got != c.want {
			t.Errorf("WouldPause(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if _, err := ParseCycle("*>*,a.go:1>a.go:2"); err == nil {
		t.Error(`ParseCycle("*>*,..."): no error`)
	}
}
