package tree

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
)

// genConfig draws a small generator configuration (package gen): every
// shape, 1..8 goroutines, 0..4 locks with read locks, nesting, sync
// objects, atomics, handoffs, racy variables and repeats, few variables so
// that accesses repeat.
func genConfig(seed uint64) gen.Config {
	r := rand.New(rand.NewPCG(seed, 0x7ee))
	c := gen.DefaultConfig()
	c.Seed = seed
	c.Shape = gen.Shapes()[r.IntN(len(gen.Shapes()))]
	c.Goroutines = 1 + r.IntN(8)
	c.Events = gen.MinEvents(c.Goroutines) + int64(r.IntN(1200))
	c.Locks = r.IntN(5)
	c.Vars = 2 + r.IntN(12)
	c.Locals = 1 + r.IntN(3)
	c.Nesting = 1 + r.IntN(3)
	c.RacyFraction = []float64{0, 0.2, 0.5}[r.IntN(3)]
	c.HandoffFraction = []float64{0, 0.2}[r.IntN(2)]
	c.RLockFraction = []float64{0, 0.3, 0.7}[r.IntN(3)]
	c.LockFraction = []float64{0, 0.1, 0.3}[r.IntN(3)]
	c.AtomicVars = r.IntN(3)
	c.AtomicFraction = []float64{0, 0.05}[r.IntN(2)]
	c.SyncObjs = r.IntN(3)
	c.SyncFraction = []float64{0, 0.05, 0.1}[r.IntN(3)]
	c.RepeatFraction = []float64{0.02, 0.3, 0.8}[r.IntN(3)]
	c.Switch = r.Float64()
	c.Values = r.IntN(2) == 0
	return c
}

// loopTrace is a random trace with loops: each goroutine repeats a random
// body (accesses of a few variables from a small pool of sites, nested
// critical sections taken in lock order in either mode, snd/rcv, atomics,
// and rarely an Alloc) several times, interleaved at random. Main forks
// some goroutines at random moments; others are born untraced (no fork);
// main joins the forked ones that have ended. A few events are ill-formed
// on purpose (a release of a lock not held).
func loopTrace(seed uint64) *trace.Trace {
	r := rand.New(rand.NewPCG(seed, 0x1009))
	b := trace.NewBuilder()
	nvars, nsites, nlocks := 1+r.IntN(4), 2+r.IntN(5), r.IntN(4)
	// Half the traces give every access of a body its own site, so that a
	// site pair races in few ways and a wrongly dropped access shows.
	unique := r.IntN(2) == 0
	nextSite := 0
	type op struct {
		kind  int // 0 read, 1 write, 2 acq, 3 rel, 4 snd, 5 rcv, 6 aload, 7 astore, 8 armw, 9 alloc, 10 bad release
		obj   string
		site  string
		rlock bool
	}
	body := func() []op {
		var ops []op
		var held []int
		next := 0 // locks are taken in increasing order: no deadlock
		for n := 3 + r.IntN(10); n > 0; n-- {
			switch k := r.IntN(20); {
			case k < 11:
				site := fmt.Sprint("s", r.IntN(nsites))
				if unique {
					site = fmt.Sprint("u", nextSite)
					nextSite++
				}
				ops = append(ops, op{kind: r.IntN(2), obj: fmt.Sprint("v", r.IntN(nvars)), site: site})
			case k < 14 && next < nlocks:
				l := next + r.IntN(nlocks-next)
				next = l + 1
				held = append(held, l)
				ops = append(ops, op{kind: 2, obj: fmt.Sprint("L", l), rlock: r.IntN(3) == 0})
			case k < 16 && len(held) > 0:
				l := held[len(held)-1]
				held = held[:len(held)-1]
				ops = append(ops, op{kind: 3, obj: fmt.Sprint("L", l)})
			case k < 18:
				ops = append(ops, op{kind: 4 + r.IntN(5), obj: fmt.Sprint("c", r.IntN(2))})
			case k < 19 && r.IntN(4) == 0:
				ops = append(ops, op{kind: 9, obj: fmt.Sprint("v", r.IntN(nvars))})
			case k < 19 && r.IntN(8) == 0:
				ops = append(ops, op{kind: 10, obj: fmt.Sprint("L", r.IntN(max(nlocks, 1)))})
			}
		}
		for i := len(held) - 1; i >= 0; i-- {
			ops = append(ops, op{kind: 3, obj: fmt.Sprint("L", held[i])})
		}
		return ops
	}
	type gor struct {
		name   string
		ops    []op
		pc     int
		rounds int
		mode   map[string]bool // locks held: read mode?
		ended  bool
		forked bool
	}
	var gs []*gor
	spawn := func(name string, forked bool) {
		gs = append(gs, &gor{name: name, ops: body(), rounds: 1 + r.IntN(6), mode: map[string]bool{}, forked: forked})
	}
	b.Begin("main")
	spawn("main", true)
	writer, readers := map[string]string{}, map[string]int{}
	nextG := 1
	joined := map[string]bool{}
	for steps := 0; steps < 3000; steps++ {
		if r.IntN(40) == 0 && nextG < 8 {
			name := fmt.Sprint("g", nextG)
			nextG++
			if r.IntN(3) == 0 {
				b.Begin(name) // born untraced
				spawn(name, false)
			} else if !gs[0].ended {
				b.Fork("main", name, "go")
				b.Begin(name)
				spawn(name, true)
			}
		}
		var live []*gor
		for _, g := range gs {
			if !g.ended {
				live = append(live, g)
			}
		}
		if len(live) == 0 {
			break
		}
		g := live[r.IntN(len(live))]
		for burst := 1 + r.IntN(8); burst > 0 && !g.ended; burst-- {
			if g.pc == len(g.ops) {
				g.pc = 0
				g.rounds--
				if g.rounds == 0 {
					if g.name == "main" {
						for _, c := range gs[1:] {
							if c.ended && c.forked && !joined[c.name] {
								b.Join("main", c.name)
								joined[c.name] = true
							}
						}
					}
					b.End(g.name)
					g.ended = true
					break
				}
			}
			o := g.ops[g.pc]
			switch o.kind {
			case 0:
				b.Read(g.name, o.obj, o.site)
			case 1:
				b.Write(g.name, o.obj, o.site)
			case 2:
				if w, ok := writer[o.obj]; (ok && w != g.name) || (!o.rlock && readers[o.obj] > 0) {
					burst = 0 // blocked: let another goroutine run
					continue
				}
				if o.rlock {
					b.RAcq(g.name, o.obj)
					readers[o.obj]++
				} else {
					b.Acq(g.name, o.obj)
					writer[o.obj] = g.name
				}
				g.mode[o.obj] = o.rlock
			case 3:
				if g.mode[o.obj] {
					b.RRel(g.name, o.obj)
					readers[o.obj]--
				} else {
					b.Rel(g.name, o.obj)
					delete(writer, o.obj)
				}
				delete(g.mode, o.obj)
			case 4:
				b.Snd(g.name, o.obj)
			case 5:
				b.Rcv(g.name, o.obj)
			case 6:
				b.ALoad(g.name, o.obj)
			case 7:
				b.AStore(g.name, o.obj)
			case 8:
				b.ARMW(g.name, o.obj)
			case 9:
				b.Alloc(g.name, o.obj, 8)
			case 10:
				if _, held := g.mode[o.obj]; !held {
					b.Rel(g.name, o.obj) // ill-formed: not held
				}
			}
			g.pc++
		}
	}
	return b.Trace()
}

// allOptions are the option sets the differential tests check, each
// against what it promises (guarantee).
var allOptions = []Options{
	{Relation: All},
	{Relation: HappensBefore},
	{Relation: Hybrid},
	{Relation: Eraser},
	{Relation: HappensBefore, Span: true},
	{Relation: All, Span: true},
	{Relation: All, MaxEntries: 6},
	{Relation: HappensBefore, Span: true, MaxEntries: 3},
	{Relation: Hybrid, MaxEntries: 10},
}

// TestDifferential checks every option set's promise (guarantee: hb,
// hybrid and lockset report the same distinct site pairs on each address,
// fasttrack the same first racing access on each address) on thousands of
// generated traces: gen's (planted races, handoffs, read locks, sync
// objects, atomics, every shape) and loopTrace's (repetition, untraced
// goroutines, allocations, ill-formed releases). It also checks that the
// filters drop something overall, so that the comparison is not vacuous.
func TestDifferential(t *testing.T) {
	n := 1500
	if testing.Short() || raceEnabled {
		n = 150
	}
	events, drops := make([]int64, len(allOptions)), make([]int64, len(allOptions))
	for seed := uint64(1); seed <= uint64(n); seed++ {
		var trs []*trace.Trace
		cfg := genConfig(seed)
		tr := trace.NewTrace()
		if _, err := gen.Generate(cfg, tr); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		trs = append(trs, tr, loopTrace(seed))
		for k, tr := range trs {
			for i, o := range allOptions {
				d, filtered := dropped(t, o, tr)
				events[i] += int64(len(tr.Events))
				drops[i] += int64(len(d))
				if diff := guarantee(t, o, tr, filtered); diff != "" {
					where := fmt.Sprintf("loopTrace(%d)", seed)
					if k == 0 {
						where = fmt.Sprintf("gen %+v", cfg)
					}
					t.Fatalf("%s, options %+v: %s", where, o, diff)
				}
			}
		}
	}
	for i, o := range allOptions {
		t.Logf("%+v: dropped %d of %d events (%.1f%%)", o, drops[i], events[i], 100*float64(drops[i])/float64(events[i]))
		if drops[i]*20 < events[i] {
			t.Errorf("%+v dropped only %d of %d events", o, drops[i], events[i])
		}
	}
}
