package clock

// The rules of docs/semantics.md's table, checked on a Tracker's clocks
// directly: each case is a small trace whose writes are markers (named by
// their site), and says which markers happen before which under AllEdges
// (hb, fasttrack) and under NoLockEdges (hybrid). A marker a happens before
// a marker b when a's epoch is at most b's goroutine's clock at b.

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/racekit/racekit/detect/vc"
	"github.com/racekit/racekit/trace"
)

// step is what the Tracker showed around one event: the goroutine, and its
// clock and epoch before and after the event.
type step struct {
	t                   *Thread
	before, after       vc.VectorClock
	epochBef, epochAftr vc.Epoch
}

// feed runs tr through a new Tracker as a detector does.
func feed(edges Edges, tr *trace.Trace) (*Tracker, []step) {
	k := New(edges)
	steps := make([]step, len(tr.Events))
	for i := range tr.Events {
		e := &tr.Events[i]
		t := k.Running(e)
		if t == nil {
			t = k.Start(e.G)
		}
		s := step{t: t, before: t.Clock().Clone(), epochBef: t.Epoch()}
		if !e.Op.IsAccess() {
			k.Sync(t, e)
		}
		s.after, s.epochAftr = t.Clock().Clone(), t.Epoch()
		steps[i] = s
	}
	return &k, steps
}

// markers maps the site label of each access of tr to its step.
func markers(t *testing.T, tr *trace.Trace, steps []step) map[string]step {
	t.Helper()
	m := map[string]step{}
	for i, e := range tr.Events {
		if !e.Op.IsAccess() {
			continue
		}
		l := tr.M.Site(e.Site).String()
		if _, dup := m[l]; dup {
			t.Fatalf("marker %s used twice", l)
		}
		m[l] = steps[i]
	}
	return m
}

// before reports whether marker a happens before marker b: a's epoch is
// covered by b's goroutine's clock at b.
func before(a, b step) bool { return a.epochBef.Leq(b.before) }

// order is one expectation: does marker a happen before marker b, with all
// edges and without lock edges?
type order struct {
	a, b        string
	all, noLock bool
}

type rule struct {
	name   string
	build  func(b *trace.Builder)
	orders []order
}

// forked starts a builder whose main goroutine M forks each of gs.
func forked(gs ...string) *trace.Builder {
	b := trace.NewBuilder()
	b.Begin("M")
	for _, g := range gs {
		b.Fork("M", g, "go "+g)
	}
	return b
}

var rules = []rule{
	// acq(L) exclusive: C_t ⊔= W_L ⊔ R_L.
	{"acq after rel orders (W_L)", func(b *trace.Builder) {
		b.Write("T1", "x", "a")
		b.Acq("T1", "L")
		b.Rel("T1", "L")
		b.Acq("T2", "L")
		b.Write("T2", "x", "b")
	}, []order{{"a", "b", true, false}}},
	{"acq after read-mode rel orders (R_L)", func(b *trace.Builder) {
		b.RAcq("T1", "L")
		b.Write("T1", "x", "a")
		b.RRel("T1", "L")
		b.Acq("T2", "L")
		b.Write("T2", "x", "b")
	}, []order{{"a", "b", true, false}}},
	// acq(L) read mode: C_t ⊔= W_L only.
	{"racq after rel orders (W_L)", func(b *trace.Builder) {
		b.Acq("T1", "L")
		b.Write("T1", "x", "a")
		b.Rel("T1", "L")
		b.RAcq("T2", "L")
		b.Write("T2", "x", "b")
	}, []order{{"a", "b", true, false}}},
	{"racq after rrel does not order", func(b *trace.Builder) {
		b.RAcq("T1", "L")
		b.Write("T1", "x", "a")
		b.RRel("T1", "L")
		b.RAcq("T2", "L")
		b.Write("T2", "x", "b")
	}, []order{{"a", "b", false, false}}},
	// rel(L) exclusive: W_L := C_t; R_L := ⊥; C_t[t]++.
	{"rel ticks: an access after it is not published", func(b *trace.Builder) {
		b.Acq("T1", "L")
		b.Rel("T1", "L")
		b.Write("T1", "x", "a")
		b.Acq("T2", "L")
		b.Write("T2", "x", "b")
	}, []order{{"a", "b", false, false}}},
	{"rel replaces W_L rather than joining it", func(b *trace.Builder) {
		b.Acq("T1", "L")
		b.Write("T1", "x", "a")
		b.Rel("T1", "L")
		b.Rel("T2", "L") // not held (ill-formed): still W_L := C_T2
		b.Acq("T3", "L")
		b.Write("T3", "x", "b")
	}, []order{{"a", "b", false, false}}},
	{"rel resets R_L", func(b *trace.Builder) {
		b.RAcq("T1", "L")
		b.Write("T1", "x", "a")
		b.RRel("T1", "L")
		b.Rel("T2", "L") // not held (ill-formed): W_L := C_T2, R_L := ⊥
		b.Acq("T3", "L")
		b.Write("T3", "x", "b")
	}, []order{{"a", "b", false, false}}},
	// rel(L) read mode: R_L ⊔= C_t; C_t[t]++.
	{"R_L joins every read-mode release", func(b *trace.Builder) {
		b.RAcq("T1", "L")
		b.Write("T1", "x", "a")
		b.RAcq("T2", "L")
		b.Write("T2", "x", "b")
		b.RRel("T1", "L")
		b.RRel("T2", "L")
		b.Acq("T3", "L")
		b.Write("T3", "x", "c")
	}, []order{{"a", "c", true, false}, {"b", "c", true, false}, {"a", "b", false, false}}},
	// snd(o): S_o ⊔= C_t; C_t[t]++. rcv(o): C_t ⊔= S_o.
	{"rcv after snd orders", func(b *trace.Builder) {
		b.Write("T1", "x", "a")
		b.Snd("T1", "o")
		b.Write("T1", "x", "after")
		b.Rcv("T2", "o")
		b.Write("T2", "x", "b")
	}, []order{{"a", "b", true, true}, {"after", "b", false, false}}},
	{"rcv before snd does not order", func(b *trace.Builder) {
		b.Rcv("T2", "o")
		b.Write("T2", "x", "b")
		b.Write("T1", "x", "a")
		b.Snd("T1", "o")
	}, []order{{"b", "a", false, false}}},
	{"S_o joins every snd", func(b *trace.Builder) {
		b.Write("T1", "x", "a")
		b.Snd("T1", "o")
		b.Write("T3", "x", "c")
		b.Snd("T3", "o")
		b.Rcv("T2", "o")
		b.Write("T2", "x", "b")
	}, []order{{"a", "b", true, true}, {"c", "b", true, true}}},
	{"sync objects are distinct", func(b *trace.Builder) {
		b.Write("T1", "x", "a")
		b.Snd("T1", "o")
		b.Rcv("T2", "p")
		b.Write("T2", "x", "b")
	}, []order{{"a", "b", false, false}}},
	// astore(a): S_a ⊔= C_t; C_t[t]++. aload(a): C_t ⊔= S_a.
	{"aload after astore orders", func(b *trace.Builder) {
		b.Write("T1", "x", "a")
		b.AStore("T1", "w")
		b.ALoad("T2", "w")
		b.Write("T2", "x", "b")
	}, []order{{"a", "b", true, true}}},
	{"aload does not release, astore does not acquire", func(b *trace.Builder) {
		b.Write("T1", "x", "a")
		b.ALoad("T1", "w")
		b.AStore("T1", "v")
		b.Write("T2", "x", "b")
		b.AStore("T2", "w")
		b.AStore("T2", "v")
		b.Write("T2", "x", "d")
		b.ALoad("T3", "w")
		b.Write("T3", "x", "c")
	}, []order{{"a", "c", false, false}, {"a", "d", false, false}, {"b", "c", true, true}}},
	// armw(a): C_t ⊔= S_a; S_a ⊔= C_t; C_t[t]++.
	{"armw acquires and releases", func(b *trace.Builder) {
		b.Write("T1", "x", "a")
		b.ARMW("T1", "w")
		b.Write("T2", "x", "b")
		b.ARMW("T2", "w")
		b.Write("T2", "x", "after")
		b.ALoad("T3", "w")
		b.Write("T3", "x", "c")
	}, []order{{"a", "after", true, true}, {"a", "c", true, true}, {"b", "c", true, true}, {"after", "c", false, false}}},
	{"atomic words and sync objects are distinct", func(b *trace.Builder) {
		b.Write("T1", "x", "a")
		b.Snd("T1", "o")
		b.ALoad("T2", "o")
		b.Write("T2", "x", "b")
	}, []order{{"a", "b", false, false}}},
	// fork(u) by t: C_u ⊔= C_t; C_u[u] = max(C_u[u], 1); C_t[t]++.
	{"fork orders the parent's past before the child", func(b *trace.Builder) {
		b.Write("M", "x", "a")
		b.Fork("M", "T1", "go")
		b.Write("M", "x", "after")
		b.Write("T1", "x", "b")
	}, []order{{"a", "b", true, true}, {"after", "b", false, false}, {"b", "after", false, false}}},
	// join(u) by t: C_t ⊔= C_u; C_u[u]++.
	{"join orders the child's past before the parent", func(b *trace.Builder) {
		b.Fork("M", "T1", "go")
		b.Write("T1", "x", "a")
		b.Write("M", "x", "before")
		b.Join("M", "T1")
		b.Write("M", "x", "b")
		b.Write("T1", "x", "late") // ill-formed: after the join
		b.Write("M", "x", "c")
	}, []order{{"a", "b", true, true}, {"a", "before", false, false}, {"late", "c", false, false}}},
	// First event of u never forked: for every t seen so far, C_u ⊔= C_t; C_t[t]++.
	{"untraced goroutine starts after everything observed", func(b *trace.Builder) {
		b.Write("M", "x", "a")
		b.Fork("M", "T1", "go")
		b.Write("T1", "x", "t1")
		b.Begin("U")
		b.Write("M", "x", "after")
		b.Write("T1", "x", "t1after")
		b.Write("U", "x", "u")
	}, []order{{"a", "u", true, true}, {"t1", "u", true, true}, {"after", "u", false, false}, {"t1after", "u", false, false}}},
	// A semaphore of capacity 2 (sem <- 0; x++; <-sem in two goroutines):
	// receive 1 is before send 3 only, so the two writes race. The runtime
	// allocates inside a send or a receive (rt writes the allocation
	// before the completion, rt/mallochook.go): an alloc between a begin
	// and its completion must not end the operation and merge its edges
	// (it did: the race was lost in e2e chanmsg's TestRaceSemaphoreOfTwo).
	{"an allocation inside a channel operation keeps its message's edges", func(b *trace.Builder) {
		sem := b.Obj("sem")
		b.Obj("sem+1") // the receives' object
		msg := func(g string, op trace.Op, obj uint64, m trace.ChanMsg) {
			b.Add(trace.Event{G: b.G(g), Op: op, Obj: obj, Value: uint64(m), Flags: trace.FlagMessage})
		}
		hold := func(g string, k uint64, site string) {
			msg(g, trace.OpSyncRelease, sem, trace.MsgSendOf(2))
			b.Alloc(g, "sudog"+g, 64)
			msg(g, trace.OpSyncAcquire, sem+1, trace.MsgRange(trace.MsgSent, k, k))
			b.Write(g, "x", site)
			msg(g, trace.OpSyncRelease, sem+1, trace.MsgOf(trace.MsgRecv))
			b.Alloc(g, "sudog"+g, 64)
			msg(g, trace.OpSyncAcquire, sem, trace.MsgRange(trace.MsgRecvd, k, k))
		}
		hold("T2", 1, "a")
		hold("T1", 2, "b")
	}, []order{{"a", "b", false, false}}},
	{"untraced goroutine is not after a forked one that has not run", func(b *trace.Builder) {
		b.Fork("M", "T1", "go")
		b.Begin("U")
		b.Write("U", "x", "u")
		b.Write("T1", "x", "t1")
		b.Write("U", "x", "u2")
	}, []order{{"t1", "u2", false, false}, {"u", "t1", false, false}}},
}

func TestHappensBeforeRules(t *testing.T) {
	for _, r := range rules {
		for _, mode := range []struct {
			edges Edges
			name  string
		}{{AllEdges, "all edges"}, {NoLockEdges, "no lock edges"}} {
			t.Run(r.name+"/"+mode.name, func(t *testing.T) {
				b := forked("T1", "T2", "T3")
				r.build(b)
				tr := b.Trace()
				_, steps := feed(mode.edges, tr)
				m := markers(t, tr, steps)
				for _, o := range r.orders {
					want := o.all
					if mode.edges == NoLockEdges {
						want = o.noLock
					}
					if got := before(m[o.a], m[o.b]); got != want {
						t.Errorf("%s before %s = %v, want %v", o.a, o.b, got, want)
					}
				}
			})
		}
	}
}

// Every op that publishes C_t starts a new epoch of t, so that no other
// clock holds t's current epoch (FastTrack's same-epoch rules need it);
// the others leave t's epoch alone. Without lock edges, lock ops publish
// nothing and do not tick.
func TestTicks(t *testing.T) {
	b := forked("T1")
	type tc struct {
		i            int
		op           string
		tickAll, tnl bool // ticks with all edges, with no lock edges
	}
	var cs []tc
	add := func(op string, tickAll, tnl bool, i int) { cs = append(cs, tc{i, op, tickAll, tnl}) }
	add("acq", false, false, b.Acq("T1", "L"))
	add("rel", true, false, b.Rel("T1", "L"))
	add("racq", false, false, b.RAcq("T1", "L"))
	add("rrel", true, false, b.RRel("T1", "L"))
	add("snd", true, true, b.Snd("T1", "o"))
	add("rcv", false, false, b.Rcv("T1", "o"))
	add("astore", true, true, b.AStore("T1", "w"))
	add("aload", false, false, b.ALoad("T1", "w"))
	add("armw", true, true, b.ARMW("T1", "w"))
	add("fork", true, true, b.Fork("T1", "T2", "go"))
	add("read", false, false, b.Read("T1", "x", "r"))
	add("write", false, false, b.Write("T1", "x", "w"))
	add("end of T2", false, false, b.End("T2"))
	add("join", false, false, b.Join("T1", "T2"))
	tr := b.Trace()
	for _, edges := range []Edges{AllEdges, NoLockEdges} {
		_, steps := feed(edges, tr)
		for _, c := range cs {
			s := steps[c.i]
			want := c.tickAll
			if edges == NoLockEdges {
				want = c.tnl
			}
			if got := s.epochAftr.Clock() == s.epochBef.Clock()+1; got != want {
				t.Errorf("edges %d: %s: epoch %v -> %v, tick %v, want %v", edges, c.op, s.epochBef, s.epochAftr, got, want)
			}
			if !want && s.epochAftr != s.epochBef {
				t.Errorf("edges %d: %s: epoch %v -> %v, want unchanged", edges, c.op, s.epochBef, s.epochAftr)
			}
		}
	}
}

// end, call/ret, enter/exit and rbegin/rend change no clock, in any mode.
func TestOpsWithoutEdgesLeaveClocksAlone(t *testing.T) {
	b := forked("T1")
	b.Write("T1", "x", "a")
	var idx []int
	idx = append(idx, b.Call("T1", "m", "x"), b.Ret("T1", "m"), b.Enter("T1", "f"), b.Exit("T1", "f"))
	idx = append(idx, b.Add(trace.Event{G: b.G("T1"), Op: trace.OpRegionBegin, Obj: 1}))
	idx = append(idx, b.Add(trace.Event{G: b.G("T1"), Op: trace.OpRegionEnd, Obj: 1}))
	idx = append(idx, b.End("T1"))
	for _, edges := range []Edges{AllEdges, NoLockEdges, NoEdges} {
		k, steps := feed(edges, b.Trace())
		for _, i := range idx {
			s := steps[i]
			if !slices.Equal(s.before, s.after) || s.epochBef != s.epochAftr {
				t.Errorf("edges %d: %s changed the clock: %v -> %v", edges, b.Trace().Events[i].Op, s.before, s.after)
			}
		}
		if n := k.Counters().IllFormed; n != 0 {
			t.Errorf("edges %d: illformed = %d, want 0", edges, n)
		}
	}
}

// A forked goroutine's own entry starts at 1 (C_u[u] = max(C_u[u], 1)), as
// does an untraced one's; IDs are dense, in order of first appearance, and
// clocks are indexed by them, not by the GID.
func TestDenseIDsAndFirstEpochs(t *testing.T) {
	b := trace.NewBuilder()
	const big = trace.GID(1 << 31)
	x := b.Obj("x")
	b.Add(trace.Event{G: big, Op: trace.OpWrite, Obj: x, Site: b.Site("big")})            // ID 0, untraced
	b.Add(trace.Event{G: big, Op: trace.OpFork, Obj: 5})                                  // ID 1
	b.Add(trace.Event{G: 5, Op: trace.OpWrite, Obj: x, Site: b.Site("five")})             // forked
	b.Add(trace.Event{G: 0, Op: trace.OpWrite, Obj: x, Site: b.Site("zero")})             // ID 2, untraced
	b.Add(trace.Event{G: big + 1, Op: trace.OpWrite, Obj: x, Site: b.Site("big1")})       // ID 3, untraced
	b.Add(trace.Event{G: big, Op: trace.OpWrite, Obj: x, Site: b.Site("big again")})      // not ordered before the later births
	b.Add(trace.Event{G: big + 1, Op: trace.OpWrite, Obj: x, Site: b.Site("big1 again")}) // same goroutine, same epoch
	tr := b.Trace()
	k, steps := feed(AllEdges, tr)
	m := markers(t, tr, steps)
	for _, c := range []struct {
		marker string
		gid    trace.GID
		id     uint32
		epoch  vc.Epoch
	}{
		{"big", big, 0, vc.MakeEpoch(1, 0)},
		{"five", 5, 1, vc.MakeEpoch(1, 1)},
		{"zero", 0, 2, vc.MakeEpoch(1, 2)},
		{"big1", big + 1, 3, vc.MakeEpoch(1, 3)},
		{"big1 again", big + 1, 3, vc.MakeEpoch(1, 3)},
	} {
		s := m[c.marker]
		if s.t.GID() != c.gid || s.t.ID() != c.id || s.epochBef != c.epoch {
			t.Errorf("%s: G%d ID %d epoch %v, want G%d ID %d epoch %v", c.marker, s.t.GID(), s.t.ID(), s.epochBef, c.gid, c.id, c.epoch)
		}
		if len(s.before) > 4 {
			t.Errorf("%s: clock %v has %d entries, want at most 4 (one per goroutine)", c.marker, s.before, len(s.before))
		}
		if k.Thread(c.id) != s.t || k.Lookup(c.gid) != s.t {
			t.Errorf("%s: Thread(%d) or Lookup(%d) is not its goroutine", c.marker, c.id, c.gid)
		}
	}
	for _, o := range []order{{"big", "five", true, true}, {"five", "zero", true, true}, {"zero", "big1", true, true}, {"big again", "big1 again", false, false}} {
		if got := before(m[o.a], m[o.b]); got != o.all {
			t.Errorf("%s before %s = %v, want %v", o.a, o.b, got, o.all)
		}
	}
	if k.Lookup(7) != nil {
		t.Errorf("Lookup of a goroutine never seen is not nil")
	}
	c := k.Counters()
	if c.Goroutines != 4 || c.Untraced != 3 || c.Events != int64(len(tr.Events)) || c.IllFormed != 0 {
		t.Errorf("counters %+v, want 4 goroutines, 3 untraced, %d events, 0 ill-formed", c, len(tr.Events))
	}
}

// Without edges a Tracker keeps no clock at all, but still follows
// goroutines, the locks they hold and the ill-formed events.
func TestNoEdgesKeepsNoClocks(t *testing.T) {
	b := forked("T1")
	b.Write("M", "x", "a")
	b.Snd("M", "o")
	b.AStore("M", "w")
	b.Rcv("T1", "o")
	b.ARMW("T1", "w")
	b.Acq("T1", "L")
	b.Write("T1", "x", "b")
	b.Join("M", "T1")
	b.Begin("U")
	tr := b.Trace()
	k, steps := feed(NoEdges, tr)
	for i, s := range steps {
		if len(s.after) != 0 || s.epochAftr != 0 {
			t.Errorf("event %d (%s): clock %v epoch %v, want none", i, tr.Events[i].Op, s.after, s.epochAftr)
		}
	}
	if held, write := k.Lookup(b.G("T1")).Holds(b.Obj("L")); !held || !write {
		t.Errorf("T1 holds L: %v, write %v; want held in write mode", held, write)
	}
	c := k.Counters()
	want := Counters{Events: int64(len(tr.Events)), Untraced: 2, Goroutines: 3, IDs: 3, Locks: 1}
	if c != want {
		t.Errorf("counters %+v, want %+v", c, want)
	}
}

// TestLockHolds checks the locks a goroutine holds through nested and
// mismatched acquires and releases: each acquire is one hold, a release
// drops the latest hold in its mode, or else one in the other mode.
func TestLockHolds(t *testing.T) {
	b := forked("T1")
	L := b.Obj("L")
	type hold struct {
		i           int
		held, write bool
	}
	var want []hold
	at := func(i int, held, write bool) { want = append(want, hold{i, held, write}) }
	at(b.RAcq("T1", "L"), true, false)
	at(b.Acq("T1", "L"), true, true) // nested: ill-formed, now held in both modes
	at(b.Rel("T1", "L"), true, false)
	at(b.Acq("T1", "L"), true, true) // nested again
	at(b.RRel("T1", "L"), true, true)
	at(b.RRel("T1", "L"), false, false) // no read hold left: drops the write one
	at(b.Rel("T1", "L"), false, false)  // not held
	tr := b.Trace()
	for _, edges := range []Edges{AllEdges, NoLockEdges, NoEdges} {
		k := New(edges)
		for i := range tr.Events {
			e := &tr.Events[i]
			g := k.Running(e)
			if g == nil {
				g = k.Start(e.G)
			}
			k.Sync(g, e)
			for _, w := range want {
				if w.i != i {
					continue
				}
				if held, write := g.Holds(L); held != w.held || write != w.write {
					t.Errorf("edges %d: after event %d T1 holds L %v (write %v), want %v (write %v); holds %v",
						edges, i, held, write, w.held, w.write, g.Held())
				}
			}
		}
		if n := k.Counters().IllFormed; n != 4 {
			t.Errorf("edges %d: illformed = %d, want 4 (two nested acquires, a mismatched and an unheld release)", edges, n)
		}
	}
}

// Each ill-formed event of the package comment is counted once, in every
// mode, and never panics.
func TestIllFormedCounted(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *trace.Builder)
		want  int64
	}{
		{"well-formed", func(b *trace.Builder) {
			b.Acq("T1", "L")
			b.Rel("T1", "L")
			b.RAcq("T1", "L")
			b.RAcq("T2", "L")
			b.RRel("T1", "L")
			b.RRel("T2", "L")
			b.End("T1")
			b.Join("M", "T1")
		}, 0},
		{"nested acquire", func(b *trace.Builder) {
			b.Acq("T1", "L")
			b.Acq("T1", "L")
		}, 1},
		{"nested read-mode acquire", func(b *trace.Builder) {
			b.RAcq("T1", "L")
			b.RAcq("T1", "L")
		}, 1},
		{"acquire of a lock held by another", func(b *trace.Builder) {
			b.Acq("T1", "L")
			b.Acq("T2", "L")
		}, 1},
		{"read-mode acquire of a write-held lock", func(b *trace.Builder) {
			b.Acq("T1", "L")
			b.RAcq("T2", "L")
		}, 1},
		{"acquire of a read-held lock", func(b *trace.Builder) {
			b.RAcq("T1", "L")
			b.Acq("T2", "L")
		}, 1},
		{"release not held", func(b *trace.Builder) {
			b.Rel("T1", "L")
			b.RRel("T1", "L")
		}, 2},
		{"release in the other mode", func(b *trace.Builder) {
			b.Acq("T1", "L")
			b.RRel("T1", "L")
			b.Acq("T2", "L") // the mismatched release dropped T1's hold
		}, 1},
		{"release of another goroutine's lock", func(b *trace.Builder) {
			b.Acq("T1", "L")
			b.Rel("T2", "L")
		}, 1},
		{"self-fork", func(b *trace.Builder) { b.Fork("T1", "T1", "go") }, 1},
		{"second fork", func(b *trace.Builder) { b.Fork("M", "T1", "go") }, 1},
		{"fork of a running untraced goroutine", func(b *trace.Builder) {
			b.Begin("U")
			b.Fork("M", "U", "go")
		}, 1},
		{"fork of a 33-bit child", func(b *trace.Builder) {
			b.Add(trace.Event{G: b.G("M"), Op: trace.OpFork, Obj: 1 << 32})
		}, 1},
		{"self-join", func(b *trace.Builder) { b.Join("T1", "T1") }, 1},
		{"join of a goroutine never seen", func(b *trace.Builder) {
			b.Add(trace.Event{G: b.G("M"), Op: trace.OpJoin, Obj: 99})
		}, 1},
		{"join of a 33-bit child", func(b *trace.Builder) {
			b.Add(trace.Event{G: b.G("M"), Op: trace.OpJoin, Obj: 1 << 32})
		}, 1},
		{"events after a join", func(b *trace.Builder) {
			b.Write("T1", "x", "a")
			b.Join("M", "T1")
			b.Write("T1", "x", "b")
			b.End("T1")
		}, 2},
		{"events after a join of a huge GID", func(b *trace.Builder) {
			b.Add(trace.Event{G: 1 << 31, Op: trace.OpBegin})
			b.Add(trace.Event{G: b.G("M"), Op: trace.OpJoin, Obj: 1 << 31})
			b.Add(trace.Event{G: 1 << 31, Op: trace.OpEnd})
		}, 1},
		{"invalid and unknown ops", func(b *trace.Builder) {
			b.Add(trace.Event{G: b.G("T1"), Op: trace.OpInvalid})
			b.Add(trace.Event{G: b.G("T1"), Op: trace.Op(200)})
		}, 2},
	}
	for _, c := range cases {
		for _, edges := range []Edges{AllEdges, NoLockEdges, NoEdges} {
			t.Run(fmt.Sprintf("%s/edges %d", c.name, edges), func(t *testing.T) {
				b := forked("T1", "T2")
				c.build(b)
				k, _ := feed(edges, b.Trace())
				if got := k.Counters().IllFormed; got != c.want {
					t.Errorf("illformed = %d, want %d", got, c.want)
				}
			})
		}
	}
}

// An ill-formed event still applies its clock effect where it has one: a
// release of a lock not held publishes C_t, a second fork applies the fork
// edge, a join of an unknown goroutine joins ⊥.
func TestIllFormedEventsKeepTheirEdges(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "y", "s0")
	b.Write("T1", "x", "a")
	b.Rel("T1", "L") // not held
	b.Acq("T2", "L")
	b.Write("T2", "x", "b")
	b.Write("M", "x", "c")
	b.Fork("M", "T1", "again") // T1 already runs
	b.Write("T1", "x", "d")
	b.Add(trace.Event{G: b.G("T2"), Op: trace.OpJoin, Obj: 99})
	b.Write("T2", "x", "e")
	tr := b.Trace()
	for _, edges := range []Edges{AllEdges, NoLockEdges} {
		k, steps := feed(edges, tr)
		m := markers(t, tr, steps)
		for _, o := range []order{{"a", "b", true, false}, {"c", "d", true, true}, {"b", "e", true, true}} {
			want := o.all
			if edges == NoLockEdges {
				want = o.noLock
			}
			if got := before(m[o.a], m[o.b]); got != want {
				t.Errorf("edges %d: %s before %s = %v, want %v", edges, o.a, o.b, got, want)
			}
		}
		if n := k.Counters().IllFormed; n != 3 {
			t.Errorf("edges %d: illformed = %d, want 3", edges, n)
		}
	}
}

func TestCounters(t *testing.T) {
	b := forked("T1")
	b.Acq("T1", "L1")
	b.Rel("T1", "L1")
	b.RAcq("T1", "L2")
	b.RRel("T1", "L2")
	b.Snd("T1", "o1")
	b.Rcv("M", "o2") // a receive makes the object's (⊥) clock too
	b.AStore("T1", "w1")
	b.ALoad("M", "w2")
	b.ARMW("M", "w3")
	b.Begin("U")
	tr := b.Trace()
	k, _ := feed(AllEdges, tr)
	want := Counters{Events: int64(len(tr.Events)), Untraced: 2, Goroutines: 3, IDs: 3, Locks: 2, SyncObjects: 2, AtomicWords: 3}
	if c := k.Counters(); c != want {
		t.Errorf("counters %+v, want %+v", c, want)
	}
}

// recycling feeds tr to a Tracker with recycled IDs.
func recycling(tr *trace.Trace) (*Tracker, []step) {
	k := New(AllEdges)
	k.Recycle()
	steps := make([]step, len(tr.Events))
	for i := range tr.Events {
		e := &tr.Events[i]
		t := k.Running(e)
		if t == nil {
			t = k.Start(e.G)
		}
		s := step{t: t, before: t.Clock().Clone(), epochBef: t.Epoch()}
		if !e.Op.IsAccess() {
			k.Sync(t, e)
		}
		s.after, s.epochAftr = t.Clock().Clone(), t.Epoch()
		steps[i] = s
	}
	return &k, steps
}

// TestRecycledIDs: B takes the ID of A, which ended, once B's parent knows
// A's last access; B's values on the ID start above all of A's; GIDAt
// tells A's epochs from B's; a goroutine born in untraced code while B is
// forked and not started is after A's accesses and not after B's start.
func TestRecycledIDs(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "A", "goA")
	b.Write("A", "x", "a")
	b.Snd("A", "o")
	b.End("A")
	b.Rcv("M", "o")
	b.Fork("M", "B", "goB")
	b.Write("U", "x", "u") // born in untraced code
	b.Write("B", "x", "b")
	tr := b.Trace()
	k, steps := recycling(tr)
	m := markers(t, tr, steps)
	a, bb, u := m["a"], m["b"], m["u"]
	if a.t.ID() != bb.t.ID() || a.t == bb.t {
		t.Fatalf("A on ID %d, B on %d: want B on A's", a.t.ID(), bb.t.ID())
	}
	if bb.t.Base() <= a.epochAftr.Clock() || bb.epochBef.Clock() < bb.t.Base() {
		t.Errorf("B's base %d, first epoch %v; A's last %v: want B above A", bb.t.Base(), bb.epochBef, a.epochAftr)
	}
	id := a.t.ID()
	if g := k.GIDAt(id, a.epochBef.Clock()); g != b.G("A") {
		t.Errorf("GIDAt(A's epoch) = %d, want A (%d)", g, b.G("A"))
	}
	if g := k.GIDAt(id, bb.epochBef.Clock()); g != b.G("B") {
		t.Errorf("GIDAt(B's epoch) = %d, want B (%d)", g, b.G("B"))
	}
	if !before(a, u) || before(bb, u) {
		t.Errorf("U after A's write: %v (want true), after B's: %v (want false)", before(a, u), before(bb, u))
	}
	if c := k.Counters(); c.IDs != 3 || c.Recycled != 1 || c.Goroutines != 4 || c.IllFormed != 0 {
		t.Errorf("counters %+v: want 4 goroutines on 3 IDs, 1 recycled", c)
	}
}

// TestRecycledJoinOfLetGo: a join of a goroutine whose final clock was let
// go (past maxRetired) joins every clock let go, and is counted; an event
// of a goroutine whose ID was recycled (after its End) starts it anew.
func TestRecycledJoinOfLetGo(t *testing.T) {
	defer func(n int) { maxRetired = n }(maxRetired)
	maxRetired = 0
	b := trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "A", "goA")
	b.Write("A", "x", "a")
	b.Snd("A", "o")
	b.End("A")
	b.Rcv("M", "o")
	b.Fork("M", "B", "goB") // A's ID, A let go
	b.Write("B", "y", "b")
	b.Join("M", "A")
	b.Write("M", "x", "m")
	b.Write("A", "z", "a2") // ill-formed: A again
	tr := b.Trace()
	k, steps := recycling(tr)
	m := markers(t, tr, steps)
	if !before(m["a"], m["m"]) {
		t.Errorf("M's write not after A's, through the join")
	}
	if m["a2"].t == m["a"].t || m["a2"].t.ID() == m["a"].t.ID() {
		t.Errorf("A's event after its ID went to B: on ID %d, want a new goroutine", m["a2"].t.ID())
	}
	if c := k.Counters(); c.ApproxJoins != 1 || c.IllFormed != 1 || c.Recycled != 1 {
		t.Errorf("counters %+v: want 1 approximate join, 1 ill-formed event, 1 recycled", c)
	}
}

// TestSelectDefaultLoopPendingBounded: a goroutine that loops over a select
// with a default, with only data accesses between (no other sync event),
// begins the same receive again and again; each new begin ends the select
// before it, so its begun operations stay as many as one select's cases
// (they grew by one per turn: go-co-op/gocron's 45 million).
func TestSelectDefaultLoopPendingBounded(t *testing.T) {
	k := New(AllEdges)
	k.Recycle()
	const ch = 0x1000
	seq := uint64(0)
	ev := func(op trace.Op, obj uint64, val uint64, flags trace.Flags) *trace.Event {
		seq++
		return &trace.Event{Seq: seq, G: 1, Op: op, Obj: obj, Value: val, Flags: flags}
	}
	step := func(e *trace.Event) *Thread {
		th := k.Running(e)
		if th == nil {
			th = k.Start(e.G)
		}
		if !e.Op.IsAccess() {
			k.Sync(th, e)
		}
		return th
	}
	var th *Thread
	for i := 0; i < 1000; i++ {
		// select { case <-a: case <-b: default: }: two begun receives.
		step(ev(trace.OpSyncRelease, ch+1, uint64(trace.MsgOf(trace.MsgRecv)), trace.FlagMessage))
		th = step(ev(trace.OpSyncRelease, ch+3, uint64(trace.MsgOf(trace.MsgRecv)), trace.FlagMessage))
		step(ev(trace.OpWrite, 0x2000, 0, trace.FlagValueUnknown))
	}
	if n := len(th.pendOn); n > 2 {
		t.Errorf("goroutine pending on %d channels after 1000 turns, want the last select's 2", n)
	}
	for _, c := range []uint64{ch, ch + 2} {
		if n := len(k.chanOf(c).pend); n > 1 {
			t.Errorf("channel %#x: %d begun operations, want 1", c, n)
		}
	}
}

// TestSkippedJoinsSameClocks: the joins objVC skips (a clock joined at the
// same version, a release into the clock a goroutine last released into,
// a lock's copy that is a join) change nothing: on random traces, wellformed
// or not, with and without recycled IDs, every goroutine's clock and epoch
// after every event equal those of a Tracker that makes every join.
func TestSkippedJoinsSameClocks(t *testing.T) {
	ops := []trace.Op{trace.OpAcquire, trace.OpRelease, trace.OpSyncRelease, trace.OpSyncAcquire,
		trace.OpAtomicLoad, trace.OpAtomicStore, trace.OpAtomicRMW, trace.OpFork, trace.OpJoin,
		trace.OpEnd, trace.OpWrite}
	for seed := int64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewSource(seed))
		recycle := seed%2 == 0
		fast, exact := New(AllEdges), New(AllEdges)
		exact.exact = true
		if recycle {
			fast.Recycle()
			exact.Recycle()
		}
		gs := 3 + r.Intn(6)
		for i := 0; i < 400; i++ {
			e := trace.Event{G: trace.GID(1 + r.Intn(gs)), Op: ops[r.Intn(len(ops))], Obj: uint64(1 + r.Intn(4))}
			switch e.Op {
			case trace.OpAcquire, trace.OpRelease:
				if r.Intn(3) == 0 {
					e.Flags |= trace.FlagReadLock
				}
			case trace.OpFork, trace.OpJoin:
				e.Obj = uint64(1 + r.Intn(gs+4)) // new goroutines too
			}
			var ts [2]*Thread
			for j, k := range []*Tracker{&fast, &exact} {
				th := k.Running(&e)
				if th == nil {
					th = k.Start(e.G)
				}
				if !e.Op.IsAccess() {
					k.Sync(th, &e)
				}
				ts[j] = th
			}
			if !slices.Equal(trimZeros(ts[0].Clock()), trimZeros(ts[1].Clock())) || ts[0].Epoch() != ts[1].Epoch() {
				t.Fatalf("seed %d, event %d (%v G%d obj %d): clock %v epoch %v, joining every time %v %v",
					seed, i, e.Op, e.G, e.Obj, ts[0].Clock(), ts[0].Epoch(), ts[1].Clock(), ts[1].Epoch())
			}
		}
	}
}

func trimZeros(c vc.VectorClock) vc.VectorClock {
	for len(c) > 0 && c[len(c)-1] == 0 {
		c = c[:len(c)-1]
	}
	return c
}

// A channel whose memory is allocated again gives its per-message clocks
// back to maxMsgBytes: channels that each hold their receives' clocks,
// one after another at one reused address, fold nothing however many.
func TestChanMsgBudgetReusedAddress(t *testing.T) {
	b := forked("P", "C")
	msg := func(g string, op trace.Op, obj uint64, m trace.ChanMsg) {
		b.Add(trace.Event{G: b.G(g), Op: op, Obj: obj, Value: uint64(m), Flags: trace.FlagMessage})
	}
	const chans, msgs, capacity = 8, 40, 100
	ch := b.Obj("ch")
	b.Obj("ch+1")
	for c := 0; c < chans; c++ {
		b.Alloc("P", "ch", 16) // the channel made at the address of the one before
		for k := uint64(1); k <= msgs; k++ {
			msg("P", trace.OpSyncRelease, ch, trace.MsgSendOf(capacity))
			msg("P", trace.OpSyncAcquire, ch+1, trace.MsgRange(trace.MsgSent, k, k))
		}
		for k := uint64(1); k <= msgs; k++ {
			msg("C", trace.OpSyncRelease, ch+1, trace.MsgOf(trace.MsgRecv))
			msg("C", trace.OpSyncAcquire, ch, trace.MsgRange(trace.MsgRecvd, k, k))
		}
	}
	defer func(old int64) { maxMsgBytes = old }(maxMsgBytes)
	maxMsgBytes = 50 * vc.SharedBytes(3) // 50 clocks of the trace's 3 goroutines: one channel's 40 fit
	k, _ := feed(AllEdges, b.Trace())
	if n := k.Counters().ChanFolds; n != 0 {
		t.Errorf("%d folds, want none: each channel's clocks went back when its address was allocated again", n)
	}
	if k.msgClocks > 2*msgs {
		t.Errorf("%d per-message clocks counted, want at most the last channel's sends and receives (%d)", k.msgClocks, 2*msgs)
	}
}

// TestChanMsgBudget: past maxMsgBytes for all channels' per-message
// clocks, a channel that adds one merges its own into its wide clocks.
// On a trace where producers send through many buffered channels whose
// receivers never let the (k+C)-th send come (each R[k] waits for it
// forever), the clocks held stay near the bound, every order of the
// unbounded Tracker is kept (more order, never less), and the folds are
// counted.
func TestChanMsgBudget(t *testing.T) {
	build := func() *trace.Trace {
		b := forked("P", "C")
		msg := func(g string, op trace.Op, obj uint64, m trace.ChanMsg) {
			b.Add(trace.Event{G: b.G(g), Op: op, Obj: obj, Value: uint64(m), Flags: trace.FlagMessage})
		}
		const chans, msgs, capacity = 8, 40, 100
		for c := 0; c < chans; c++ {
			ch := b.Obj(fmt.Sprintf("ch%d", c))
			b.Obj(fmt.Sprintf("ch%d+1", c))
			for k := uint64(1); k <= msgs; k++ {
				b.Write("P", fmt.Sprintf("x%d_%d", c, k), fmt.Sprintf("w%d_%d", c, k))
				msg("P", trace.OpSyncRelease, ch, trace.MsgSendOf(capacity))
				msg("P", trace.OpSyncAcquire, ch+1, trace.MsgRange(trace.MsgSent, k, k))
			}
			for k := uint64(1); k <= msgs; k++ {
				msg("C", trace.OpSyncRelease, ch+1, trace.MsgOf(trace.MsgRecv))
				msg("C", trace.OpSyncAcquire, ch, trace.MsgRange(trace.MsgRecvd, k, k))
				b.Write("C", fmt.Sprintf("x%d_%d", c, k), fmt.Sprintf("r%d_%d", c, k))
			}
		}
		return b.Trace()
	}
	tr := build()
	free, fsteps := feed(AllEdges, tr)
	if n := free.Counters().ChanFolds; n != 0 {
		t.Fatalf("unbounded: %d folds", n)
	}
	if free.msgClocks < 8*40 {
		t.Fatalf("unbounded: %d per-message clocks held, want every receive's (320)", free.msgClocks)
	}
	defer func(old int64) { maxMsgBytes = old }(maxMsgBytes)
	maxMsgBytes = 50 * vc.SharedBytes(3) // 50 clocks of the trace's 3 goroutines
	bounded, bsteps := feed(AllEdges, tr)
	if n := bounded.Counters().ChanFolds; n == 0 {
		t.Errorf("bounded: no fold counted")
	}
	if bounded.msgClocks > 50+40 {
		t.Errorf("bounded: %d per-message clocks held, want at most the bound and one channel's", bounded.msgClocks)
	}
	fm, bm := markers(t, tr, fsteps), markers(t, tr, bsteps)
	ordered := 0
	for a := range fm {
		for b := range fm {
			if before(fm[a], fm[b]) {
				ordered++
				if !before(bm[a], bm[b]) {
					t.Errorf("%s before %s unbounded, not bounded", a, b)
				}
			}
		}
	}
	// The edges that matter: each write before its message's receive.
	for c := 0; c < 8; c++ {
		for k := 1; k <= 40; k++ {
			w, r := fmt.Sprintf("w%d_%d", c, k), fmt.Sprintf("r%d_%d", c, k)
			if !before(fm[w], fm[r]) || !before(bm[w], bm[r]) {
				t.Fatalf("%s not before %s", w, r)
			}
		}
	}
	if ordered == 0 {
		t.Fatal("no order at all")
	}
}

// Under GoAtomics an atomic word's private lock is held for the data
// access inside the operation (AtomicAccess) and kept in no lock table
// (Counters.Locks); a nested one, or a release of one not held, is
// ill-formed. Without GoAtomics it is a lock like any other.
func TestAtomicLockUnderGoAtomics(t *testing.T) {
	b := forked("T1")
	W := b.Obj("w")
	b.Acq("T1", "L")
	data := b.GoAtomic("T1", trace.OpAtomicStore, "w", "s1")
	b.Rel("T1", "L")
	b.GoAtomic("M", trace.OpAtomicLoad, "w", "s2")
	nest := b.Add(trace.Event{G: b.G("M"), Op: trace.OpAcquire, Obj: W | trace.AtomicLockBit})
	b.Add(trace.Event{G: b.G("M"), Op: trace.OpAcquire, Obj: W | trace.AtomicLockBit}) // nested
	b.Add(trace.Event{G: b.G("M"), Op: trace.OpRelease, Obj: W | trace.AtomicLockBit})
	b.Add(trace.Event{G: b.G("M"), Op: trace.OpRelease, Obj: W | trace.AtomicLockBit})
	b.Add(trace.Event{G: b.G("M"), Op: trace.OpRelease, Obj: W | trace.AtomicLockBit}) // not held
	tr := b.Trace()
	for _, goAtom := range []bool{true, false} {
		k := New(AllEdges)
		if goAtom {
			k.GoAtomics()
		}
		for i := range tr.Events {
			e := &tr.Events[i]
			g := k.Running(e)
			if g == nil {
				g = k.Start(e.G)
			}
			if i == data && !g.AtomicAccess(W) {
				t.Errorf("goAtom %v: the store's data access is not inside the word's lock", goAtom)
			}
			if i == nest {
				if held, _ := g.Holds(W | trace.AtomicLockBit); held {
					t.Errorf("goAtom %v: M holds the word's lock before its acquire", goAtom)
				}
			}
			if !e.Op.IsAccess() {
				k.Sync(g, e)
			}
		}
		c := k.Counters()
		wantLocks := int64(1)
		if !goAtom {
			wantLocks = 2
		}
		if c.Locks != wantLocks || c.IllFormed != 2 {
			t.Errorf("goAtom %v: locks %d, illformed %d; want %d and 2 (a nested acquire, an unheld release)", goAtom, c.Locks, c.IllFormed, wantLocks)
		}
	}
}

// TestAttachedQueueBounded: the queue of IDs in the order their owners
// took them (for lending past maxIDs) keeps no more than the current
// owners' and a bounded slack, however many goroutines took an ID: it
// would otherwise keep every goroutine, clock and all.
func TestAttachedQueueBounded(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	for i := range 5000 {
		g := fmt.Sprintf("g%d", i)
		b.Fork("M", g, "go")
		b.Write(g, "x", "w")
		b.Snd(g, "o")
		b.End(g)
		b.Rcv("M", "o")
	}
	k, _ := recycling(b.Trace())
	if n, ids := len(k.attached)-k.attachedHd, len(k.threads); n > 2*ids+64 || ids > 4 {
		t.Errorf("%d queued IDs for %d IDs (5001 goroutines)", n, ids)
	}
	if c := k.Counters(); c.Recycled < 4990 || c.Preempted != 0 {
		t.Errorf("counters %+v: want the IDs recycled in order, none lent", c)
	}
}
