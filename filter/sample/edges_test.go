package sample_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/racekit/racekit/bench/harness"
	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// elided runs Edges over tr for the objects named in objs (all sync
// objects if objs is empty) and returns the kept trace and which event
// indexes it dropped.
func elided(tr *trace.Trace, objs ...string) (*trace.Trace, []int, sample.EdgeStats) {
	ids := map[uint64]bool{}
	for _, n := range objs {
		for _, x := range tr.M.Names {
			if x.Name == n {
				ids[x.Obj] = true
			}
		}
	}
	evs := make([]*trace.Event, len(tr.Events))
	for i := range tr.Events {
		evs[i] = &tr.Events[i]
	}
	dropped, st := sample.Edges(evs, func(o uint64) bool { return len(objs) == 0 || ids[o] })
	out := &trace.Trace{M: tr.M}
	var drop []int
	for i, d := range dropped {
		if d {
			drop = append(drop, i)
		} else {
			out.Events = append(out.Events, tr.Events[i])
		}
	}
	return out, drop, st
}

// The rule on hand-written traces: which releases and acquires are
// dropped, and which are not.
func TestEdgesCases(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(b *trace.Builder)
		drop  []int
	}{
		{"release after release", func(b *trace.Builder) {
			b.Snd("a", "io") // 0
			b.Snd("a", "io") // 1: a's clock has not grown
			b.Snd("a", "io") // 2
		}, []int{1, 2}},
		{"an access between", func(b *trace.Builder) {
			b.Snd("a", "io")        // 0
			b.Write("a", "x", "w1") // 1
			b.Snd("a", "io")        // 2: carries the write
		}, nil},
		{"a release of another object between", func(b *trace.Builder) {
			b.Snd("a", "io") // 0
			b.Snd("a", "t")  // 1
			b.Acq("a", "L")  // 2
			b.Snd("a", "t")  // 3: the acquisition grew a's clock
			b.Rel("a", "L")  // 4
			b.Snd("a", "io") // 5: kept: the acquisition at 2
			b.Snd("a", "t")  // 6: only releases since 3
			b.Snd("a", "io") // 7: only releases since 5
		}, []int{6, 7}},
		{"releases of two objects in turn", func(b *trace.Builder) {
			b.Snd("a", "c")         // 0
			b.Snd("a", "d")         // 1
			b.Snd("a", "c")         // 2: a's clock grew only at its own releases
			b.Snd("a", "d")         // 3
			b.Write("a", "x", "w1") // 4
			b.Snd("a", "c")         // 5: carries the write
			b.Snd("a", "d")         // 6: so does this one
		}, []int{2, 3}},
		{"another goroutine between", func(b *trace.Builder) {
			b.Snd("a", "io")        // 0
			b.Write("b", "x", "w1") // 1: b's event does not grow a's clock
			b.Snd("a", "io")        // 2
		}, []int{2}},
		{"acquire of what no one released", func(b *trace.Builder) {
			b.Rcv("a", "io") // 0
			b.Snd("b", "io") // 1
			b.Rcv("a", "io") // 2
			b.Rcv("a", "io") // 3: nothing released since 2
			b.Read("a", "x", "r1")
			b.Rcv("a", "io") // 5: its own events do not matter
			b.Snd("b", "io") // 6: dropped (b's previous event was 1's release)
			b.Rcv("a", "io") // 7: still nothing new
		}, []int{0, 3, 5, 6, 7}},
		{"acquire after a new release", func(b *trace.Builder) {
			b.Snd("b", "io")       // 0
			b.Rcv("a", "io")       // 1
			b.Write("b", "x", "w") // 2
			b.Snd("b", "io")       // 3
			b.Rcv("a", "io")       // 4: learns of 2
			b.Rcv("c", "io")       // 5: c never acquired
		}, nil},
		{"a lock taken again", func(b *trace.Builder) {
			b.Acq("a", "L") // 0
			b.Rel("a", "L") // 1
			b.Acq("a", "L") // 2: learns only a's own release
			b.Rel("a", "L") // 3: hands on the same clock
			b.Acq("a", "L") // 4: the dropped pair does not stand between
			b.Rel("a", "L") // 5
		}, []int{2, 3, 4, 5}},
		{"a lock taken by another goroutine between", func(b *trace.Builder) {
			b.Acq("a", "L") // 0
			b.Rel("a", "L") // 1
			b.Acq("b", "L") // 2
			b.Rel("b", "L") // 3
			b.Acq("a", "L") // 4: learns b's clock
			b.Rel("a", "L") // 5
			b.Acq("b", "L") // 6: learns a's, which grew at 4
			b.Rel("b", "L") // 7
		}, nil},
		{"a lock around an access, or after another event", func(b *trace.Builder) {
			b.Acq("a", "L")         // 0
			b.Rel("a", "L")         // 1
			b.Acq("a", "L")         // 2
			b.Write("a", "x", "w1") // 3
			b.Rel("a", "L")         // 4
			b.Snd("a", "c")         // 5
			b.Acq("a", "L")         // 6: a's previous event is not its release
			b.Rel("a", "L")         // 7
			b.Acq("a", "L")         // 8
			b.Acq("a", "M")         // 9: nested, not the release next
			b.Rel("a", "M")         // 10
			b.Rel("a", "L")         // 11
		}, nil},
		{"read locks are not touched", func(b *trace.Builder) {
			b.RAcq("a", "L")
			b.RRel("a", "L")
			b.RAcq("a", "L")
			b.RRel("a", "L")
			b.Acq("a", "L")
			b.Rel("a", "L")
			b.Acq("a", "L") // 6: right after a's own exclusive release
			b.Rel("a", "L")
		}, []int{6, 7}},
		{"a read release by another goroutine between", func(b *trace.Builder) {
			b.Acq("a", "L")  // 0
			b.Rel("a", "L")  // 1
			b.RAcq("b", "L") // 2
			b.RRel("b", "L") // 3
			b.Acq("a", "L")  // 4: learns b's clock
			b.Rel("a", "L")  // 5
		}, nil},
		{"a dropped acquire does not stand between releases", func(b *trace.Builder) {
			b.Snd("a", "io") // 0
			b.Rcv("a", "t")  // 1: dropped, t never released
			b.Snd("a", "io") // 2: dropped
		}, []int{1, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := trace.NewBuilder()
			c.build(b)
			_, drop, st := elided(b.Trace())
			if !slices.Equal(drop, c.drop) {
				t.Fatalf("dropped %v, want %v", drop, c.drop)
			}
			if st.Dropped() != len(drop) {
				t.Fatalf("stats %+v, %d dropped", st, len(drop))
			}
		})
	}
}

// edgeTrace is a random trace in the shape Edges is for: goroutines that
// access a few variables, under locks or not, hand messages over a
// channel's two objects, and release or acquire two global objects in
// runs, several in a row, as calls of I/O in a loop do; and take the lock
// with nothing inside, as a sampled run records a critical section whose
// accesses it skipped.
func edgeTrace(seed uint64) *trace.Trace {
	r := rand.New(rand.NewPCG(seed, 0xed9e))
	b := trace.NewBuilder()
	ngor, nvars := 2+r.IntN(4), 1+r.IntN(4)
	b.Begin("main")
	var gs []string
	for i := 0; i < ngor; i++ {
		g := fmt.Sprint("g", i)
		b.Fork("main", g, "go")
		b.Begin(g)
		gs = append(gs, g)
	}
	held := map[string]bool{}
	for n := 20 + r.IntN(300); n > 0; n-- {
		g := gs[r.IntN(len(gs))]
		switch k := r.IntN(12); {
		case k < 5:
			x, site := fmt.Sprint("v", r.IntN(nvars)), fmt.Sprint("s", r.IntN(6))
			if r.IntN(2) == 0 {
				b.Read(g, x, site)
			} else {
				b.Write(g, x, site)
			}
		case k < 6:
			free := !slices.ContainsFunc(gs, func(h string) bool { return held[h] })
			switch {
			case held[g]:
				b.Rel(g, "L")
				held[g] = false
			case free && r.IntN(2) == 0:
				// An empty critical section, as a sampled run records one
				// whose accesses it skipped; a few in a row.
				for m := 1 + r.IntN(3); m > 0; m-- {
					b.Acq(g, "L")
					b.Rel(g, "L")
				}
			case free:
				b.Acq(g, "L")
				held[g] = true
			}
		case k < 7:
			b.Snd(g, fmt.Sprint("c", r.IntN(2)))
		case k < 8:
			b.Rcv(g, fmt.Sprint("c", r.IntN(2)))
		default:
			obj := []string{"io", "timers"}[r.IntN(2)]
			for m := 1 + r.IntN(4); m > 0; m-- {
				if k < 10 {
					b.Snd(g, obj)
				} else {
					b.Rcv(g, obj)
				}
			}
		}
	}
	for _, g := range gs {
		if held[g] {
			b.Rel(g, "L")
		}
		b.End(g)
		b.Join("main", g)
	}
	return b.Trace()
}

func racesOf(t *testing.T, d string, tr *trace.Trace) []string {
	t.Helper()
	var out []string
	det := harness.Detectors[d](finding.SinkFunc(func(x *finding.Race) {
		out = append(out, fmt.Sprintf("%#x %v %d~%d", x.Addr, x.Pair(), x.Prev.Seq, x.Cur.Seq))
	}))
	if _, err := detect.Run(tr.Iter(), det); err != nil {
		t.Fatal(err)
	}
	return out
}

// Dropping the redundant edges loses no race and invents none: on
// thousands of random traces, and on generated ones with planted races,
// each of hb, fasttrack, hybrid and lockset reports exactly the same races
// (address, site pair, and the two events) with and without Edges, which
// here elides every sync object, as the runtime does.
// Not vacuous: it drops edges, and the traces have races.
func TestEdgesKeepRaces(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	var dropped, pairs, races int
	for seed := uint64(1); seed <= uint64(n); seed++ {
		trs := []*trace.Trace{edgeTrace(seed)}
		if seed%10 == 0 {
			trs = append(trs, genTrace(t, seed, 400))
		}
		for _, tr := range trs {
			kept, drop, st := elided(tr)
			dropped += len(drop)
			pairs += st.DroppedLockPairs
			for _, d := range []string{"hb", "fasttrack", "hybrid", "lockset"} {
				want, got := racesOf(t, d, tr), racesOf(t, d, kept)
				if !slices.Equal(want, got) {
					t.Fatalf("seed %d, %s: races %v with every event, %v without the %d dropped (%v)", seed, d, want, got, len(drop), drop)
				}
				races += len(want)
			}
		}
	}
	if dropped == 0 || pairs == 0 || races == 0 {
		t.Fatalf("dropped %d events (%d lock pairs), %d races: the comparison is vacuous", dropped, pairs, races)
	}
	t.Logf("%d traces: %d events dropped (%d lock pairs), %d races reported alike", n, dropped, pairs, races)
}

// GlobalObjects finds the runtime's global objects by their names, and
// Edges given them leaves other objects alone.
func TestGlobalObjects(t *testing.T) {
	b := trace.NewBuilder()
	b.Snd("a", sample.IOName) // the Builder names an object as it is called
	b.Snd("a", sample.IOName)
	b.Snd("a", "chan")
	b.Snd("a", "chan")
	tr := b.Trace()
	objs := sample.GlobalObjects(tr.M)
	if len(objs) != 1 || !objs[b.Obj(sample.IOName)] {
		t.Fatalf("GlobalObjects = %v", objs)
	}
	_, drop, _ := elided(tr, sample.IOName)
	if !slices.Equal(drop, []int{1}) {
		t.Fatalf("dropped %v, want [1] (the channel is not a global object)", drop)
	}
}
