package sample_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/filter"
	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// keptSeqs runs f over tr and returns the Seqs of the kept events.
func keptSeqs(t *testing.T, tr *trace.Trace, f filter.Filter) []uint64 {
	t.Helper()
	r := filter.NewReader(tr.Iter(), f)
	var out []uint64
	var e trace.Event
	for {
		err := r.Next(&e)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Seq)
	}
}

// droppedIdx returns the indices of tr's events that f drops.
func droppedIdx(t *testing.T, tr *trace.Trace, f filter.Filter) []int {
	t.Helper()
	kept := map[uint64]bool{}
	for _, s := range keptSeqs(t, tr, f) {
		kept[s] = true
	}
	out := []int{}
	for i, e := range tr.Events {
		if !kept[e.Seq] {
			out = append(out, i)
		}
	}
	return out
}

func mustNew(t *testing.T, name string, seed int64) *sample.Filter {
	t.Helper()
	f, err := sample.NewFilter(name, seed)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// races returns the distinct site pairs hb reports on what f keeps of tr
// (f nil: on all of tr), as "a~b" labels.
func races(t *testing.T, tr *trace.Trace, f filter.Filter) []string {
	t.Helper()
	var r trace.Reader = tr.Iter()
	if f != nil {
		r = filter.NewReader(r, f)
	}
	c := finding.NewCollector()
	if _, err := detect.Run(r, hb.New(c)); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, p := range c.Pairs() {
		a, b := tr.M.Site(p.A).String(), tr.M.Site(p.B).String()
		if a > b {
			a, b = b, a
		}
		out = append(out, a+"~"+b)
	}
	slices.Sort(out)
	return out
}

// An access belongs to the innermost open frame of its goroutine: a
// callee's decision covers only the callee's body, and the caller's
// accesses after the callee returns follow the caller's decision again.
func TestAccessFollowsInnermostFrame(t *testing.T) {
	b := trace.NewBuilder()
	b.Enter("T1", "outer") // call 0 of outer by T1: sampled (TL-Ad)
	var innerDropped []int
	for i := 0; i < 12; i++ {
		b.Enter("T1", "inner") // calls 0-9 sampled, 10 and 11 not
		w := b.Write("T1", "x", "inner.go:1")
		if i >= 10 {
			innerDropped = append(innerDropped, w)
		}
		b.Exit("T1", "inner")
		b.Read("T1", "y", "outer.go:2") // outer's call 0: kept
	}
	b.Exit("T1", "outer")
	tr := b.Trace()
	f := mustNew(t, "tl-ad", 0)
	got := droppedIdx(t, tr, f)
	if !slices.Equal(got, innerDropped) {
		t.Fatalf("dropped events %v, want the writes of inner's calls 10 and 11: %v", got, innerDropped)
	}
	st := f.Stats()
	if st.Accesses != 24 || st.Logged != 22 || st.Calls != 13 || st.SampledCalls != 11 {
		t.Fatalf("stats %+v", st)
	}
	if st.ESR() != 22.0/24 {
		t.Fatalf("ESR %v", st.ESR())
	}
}

// TL-Ad's dispatch over one goroutine's calls of one function: exactly the
// calls of the bursts 0-9 and 100-109 keep their access.
func TestTLAdSampledInvocations(t *testing.T) {
	b := trace.NewBuilder()
	var writes []int
	for i := 0; i < 150; i++ {
		b.Enter("T1", "f")
		writes = append(writes, b.Write("T1", "x", "f.go:1"))
		b.Exit("T1", "f")
	}
	tr := b.Trace()
	dropped := droppedIdx(t, tr, mustNew(t, "tl-ad", 0))
	var want []int
	for i, w := range writes {
		if !(i < 10 || (i >= 100 && i < 110)) {
			want = append(want, w)
		}
	}
	if !slices.Equal(dropped, want) {
		t.Fatalf("dropped %v\nwant    %v", dropped, want)
	}
}

// §3.4: a function made hot by one goroutine is still cold for another.
// T1 runs work 200 times; then T2 runs it once, writing X, and T3 reads X
// in report, unordered. The thread-local samplers log T2's first call and
// find the race; the global adaptive one is deep in its back-off for work
// (global call 200 falls in no burst) and misses it; UCP logs neither cold
// call.
func TestThreadLocalFindsColdRace(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("T1", "T2", "main.go:1")
	b.Fork("T1", "T3", "main.go:2")
	for i := 0; i < 200; i++ {
		b.Enter("T1", "work")
		b.Write("T1", "local1", "work.go:5")
		b.Exit("T1", "work")
	}
	b.Enter("T2", "work")
	b.Write("T2", "X", "work.go:5")
	b.Exit("T2", "work")
	b.Enter("T3", "report")
	b.Read("T3", "X", "report.go:9")
	b.Exit("T3", "report")
	tr := b.Trace()

	full := races(t, tr, nil)
	if want := []string{"report.go:9~work.go:5"}; !slices.Equal(full, want) {
		t.Fatalf("full trace races %v, want %v", full, want)
	}
	for _, c := range []struct {
		name  string
		found bool
	}{
		{"tl-ad", true}, {"tl-fx", true}, {"g-ad", false}, {"ucp", false},
	} {
		got := races(t, tr, mustNew(t, c.name, 0))
		if found := len(got) == 1; found != c.found {
			t.Errorf("%s: races %v, want found=%v", c.name, got, c.found)
		}
	}
}

// Figure 2: dropping a synchronization operation loses a happens-before
// edge and yields a false race. Here T1's unlock happens in a helper that
// T1 has made hot, so TL-Ad does not sample that call; the unlock must be
// kept anyway. A naive sampler that dropped every event of an unsampled
// invocation reports the false race on X.
func TestFigure2SyncInUnsampledCallIsKept(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("T1", "T2", "main.go:1")
	for i := 0; i < 10; i++ { // make unlockHelper hot in T1
		b.Acq("T1", "M")
		b.Enter("T1", "unlockHelper")
		b.Rel("T1", "M")
		b.Exit("T1", "unlockHelper")
	}
	b.Enter("T1", "f")
	b.Acq("T1", "L")
	b.Write("T1", "X", "f.go:3")
	b.Enter("T1", "unlockHelper") // call 10: not sampled
	unlock := b.Rel("T1", "L")
	b.Exit("T1", "unlockHelper")
	b.Exit("T1", "f")
	b.Enter("T2", "g")
	b.Acq("T2", "L")
	b.Write("T2", "X", "g.go:7")
	b.Rel("T2", "L")
	b.Exit("T2", "g")
	tr := b.Trace()

	if got := races(t, tr, mustNew(t, "tl-ad", 0)); len(got) != 0 {
		t.Fatalf("tl-ad sampled trace races %v, want none", got)
	}
	if d := droppedIdx(t, tr, mustNew(t, "tl-ad", 0)); len(d) != 0 {
		t.Fatalf("tl-ad dropped %v (no access in an unsampled call here)", d)
	}

	// The naive sampler: same dispatch, but drops whole invocations.
	if d := droppedIdx(t, tr, naiveSampler(mustNew(t, "tl-ad", 0))); !slices.Equal(d, []int{unlock}) {
		t.Fatalf("naive sampler dropped %v, want the unlock %d", d, unlock)
	}
	if got := races(t, tr, naiveSampler(mustNew(t, "tl-ad", 0))); !slices.Equal(got, []string{"f.go:3~g.go:7"}) {
		t.Fatalf("naive sampler races %v, want the false race f.go:3~g.go:7", got)
	}
}

// naiveSampler is what LiteRace must not do: it makes s's decisions but
// drops every event of an unsampled invocation, synchronization included.
// It learns each call's decision from s's SampledCalls count.
func naiveSampler(s *sample.Filter) filter.Filter {
	unsampled := map[trace.GID][]bool{}
	return filter.Func(func(e *trace.Event) bool {
		before := s.Stats().SampledCalls
		keep := s.Keep(e)
		stack := unsampled[e.G]
		switch e.Op {
		case trace.OpFuncEnter:
			unsampled[e.G] = append(stack, s.Stats().SampledCalls == before)
			return true
		case trace.OpFuncExit:
			unsampled[e.G] = stack[:len(stack)-1]
			return true
		}
		if n := len(stack); n > 0 && stack[n-1] {
			return false
		}
		return keep
	})
}

// Accesses outside every function frame belong to the goroutine's start
// routine (RootFunc), dispatched once per goroutine at its first such
// access: TL-Ad logs a goroutine's first call of anything, so it keeps
// them; UCP never logs a first call, so it drops them. Leaving the last
// frame returns to the root decision.
func TestRootAccesses(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("T1", "T2", "main.go:1")
	r1 := b.Write("T2", "x", "body.go:1") // no frame yet
	b.Enter("T2", "f")
	in := b.Write("T2", "y", "f.go:1")
	b.Exit("T2", "f")
	r2 := b.Read("T2", "x", "body.go:2") // back outside
	tr := b.Trace()

	if d := droppedIdx(t, tr, mustNew(t, "tl-ad", 0)); len(d) != 0 {
		t.Errorf("tl-ad dropped %v, want nothing", d)
	}
	u := mustNew(t, "ucp", 0)
	if d := droppedIdx(t, tr, u); !slices.Equal(d, []int{r1, in, r2}) {
		t.Errorf("ucp dropped %v, want %v", d, []int{r1, in, r2})
	}
	if st := u.Stats(); st.RootAccesses != 2 || st.RootLogged != 0 || st.Accesses != 3 || st.Calls != 1 {
		t.Errorf("ucp stats %+v", st)
	}
}

// A FuncExit closes the innermost open frame of its function, and any
// frames above it whose exits were lost; an exit with no open frame
// changes nothing.
func TestUnbalancedExits(t *testing.T) {
	b := trace.NewBuilder()
	for i := 0; i < 10; i++ { // make g hot: its next call is not sampled
		b.Enter("T1", "g")
		b.Exit("T1", "g")
	}
	b.Enter("T1", "f") // sampled
	b.Enter("T1", "g") // not sampled, and its exit is lost
	lost := b.Write("T1", "x", "g.go:1")
	b.Exit("T1", "f")                // closes g's frame too
	b.Exit("T1", "nosuch")           // unmatched
	b.Write("T1", "x", "after.go:1") // root: first root call, sampled
	tr := b.Trace()
	f := mustNew(t, "tl-ad", 0)
	if d := droppedIdx(t, tr, f); !slices.Equal(d, []int{lost}) {
		t.Fatalf("dropped %v, want [%d]", d, lost)
	}
	if st := f.Stats(); st.UnmatchedExits != 1 || st.RootAccesses != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// Every event other than a read or a write is kept, whatever the sampler
// decides: here a sampler that samples nothing.
func TestSyncNeverDropped(t *testing.T) {
	tr := genTrace(t, 3, 4000)
	none := sample.NewPolicyFilter(sample.Policy{Name: "none", Scope: sample.PerCall, Prob: 0}, 1)
	kept := keptSeqs(t, tr, none)
	var want []uint64
	for _, e := range tr.Events {
		if !e.Op.IsAccess() {
			want = append(want, e.Seq)
		}
	}
	if !slices.Equal(kept, want) {
		t.Fatalf("kept %d events, want the %d non-access events in order", len(kept), len(want))
	}
	if st := none.Stats(); st.Logged != 0 || st.Accesses == 0 || st.Calls == 0 {
		t.Fatalf("stats %+v", st)
	}
	for _, name := range sample.Names() {
		f := mustNew(t, name, 5)
		kept := map[uint64]bool{}
		for _, s := range keptSeqs(t, tr, f) {
			kept[s] = true
		}
		for _, e := range tr.Events {
			if !e.Op.IsAccess() && !kept[e.Seq] {
				t.Fatalf("%s dropped %v event %d", name, e.Op, e.Seq)
			}
		}
	}
}

// Same seed, same decisions; another seed, other decisions.
func TestRandomSamplersAreSeeded(t *testing.T) {
	tr := genTrace(t, 11, 6000)
	for _, name := range []string{"rnd10", "rnd25"} {
		a := keptSeqs(t, tr, mustNew(t, name, 1))
		b := keptSeqs(t, tr, mustNew(t, name, 1))
		c := keptSeqs(t, tr, mustNew(t, name, 2))
		if !slices.Equal(a, b) {
			t.Errorf("%s: seed 1 twice gave different decisions", name)
		}
		if slices.Equal(a, c) {
			t.Errorf("%s: seeds 1 and 2 gave the same decisions", name)
		}
	}
}

// A goroutine's random decisions depend on the seed and its own calls, not
// on how other goroutines' calls interleave with them (so a runtime can
// draw them without a shared lock).
func TestRandomDecisionsIgnoreInterleaving(t *testing.T) {
	p, _ := sample.Lookup("rnd25")
	solo := sample.NewDispatcher(p, 9)
	var want []bool
	for i := 0; i < 200; i++ {
		want = append(want, solo.Enter(4, 77))
	}
	mixed := sample.NewDispatcher(p, 9)
	var got []bool
	for i := 0; i < 200; i++ {
		for j := 0; j < i%3; j++ {
			mixed.Enter(5, 77)
		}
		got = append(got, mixed.Enter(4, 77))
	}
	if !slices.Equal(got, want) {
		t.Fatal("goroutine 4's decisions changed with goroutine 5's calls")
	}
	k := 0
	for _, v := range want {
		if v {
			k++
		}
	}
	if k < 30 || k > 70 {
		t.Fatalf("rnd25 sampled %d of 200 calls", k)
	}
}

// Thread-local counters are per goroutine; global ones are shared.
func TestDispatcherScopes(t *testing.T) {
	tl, _ := sample.Lookup("tl-ad")
	g, _ := sample.Lookup("g-ad")
	dt, dg := sample.NewDispatcher(tl, 0), sample.NewDispatcher(g, 0)
	for i := 0; i < 10; i++ {
		dt.Enter(1, 7)
		dg.Enter(1, 7)
	}
	if !dt.Enter(2, 7) {
		t.Error("tl-ad: goroutine 2's first call of 7 not sampled")
	}
	if dg.Enter(2, 7) {
		t.Error("g-ad: the 11th call of 7 overall sampled (want the 10-call gap)")
	}
	if dt.Enter(1, 7) {
		t.Error("tl-ad: goroutine 1's 11th call of 7 sampled")
	}
	if !dt.Enter(1, 8) {
		t.Error("tl-ad: first call of another function not sampled")
	}
	dt.Forget(1)
	if !dt.Enter(1, 7) {
		t.Error("tl-ad: after Forget, goroutine 1 does not start afresh")
	}
}

func TestNewNames(t *testing.T) {
	want := []string{"tl-ad", "tl-fx", "g-ad", "g-fx", "rnd10", "rnd25", "ucp", "gs-ad", "tp-ad"}
	if !slices.Equal(sample.Names(), want) {
		t.Fatalf("Names() = %v, want %v", sample.Names(), want)
	}
	for _, n := range want {
		f, err := sample.New(n, 1)
		if err != nil || f == nil {
			t.Fatalf("New(%q): %v", n, err)
		}
		if _, ok := f.(*sample.Filter); !ok {
			t.Fatalf("New(%q) is a %T", n, f)
		}
	}
	if _, err := sample.New("tl-adx", 1); err == nil {
		t.Fatal("New accepted an unknown name")
	}
	ps := sample.Policies()
	ps[0].Schedule.Gaps[0] = 1
	if p, _ := sample.Lookup("tl-ad"); p.Schedule.Gaps[0] != 90 {
		t.Fatal("Policies returned the package's own schedule slices")
	}
}

// sequentialWorkers has T0 start five workers W1..W5 one after another at
// main.go:1, each calling work 4 times, and returns the writes of their
// calls 10 to 19 of work: those a sampler counting all 20 calls together
// drops.
func sequentialWorkers(b *trace.Builder) (dropped []int) {
	for w := 1; w <= 5; w++ {
		name := fmt.Sprintf("W%d", w)
		b.Fork("T0", name, "main.go:1")
		for i := 0; i < 4; i++ {
			b.Enter(name, "work")
			x := b.Write(name, "x"+name, "work.go:5")
			if (w-1)*4+i >= 10 {
				dropped = append(dropped, x)
			}
			b.Exit(name, "work")
		}
		b.End(name)
	}
	return dropped
}

// GS-Ad (racekit's adaptation, not the paper's) counts per (creation site,
// function). Five workers started one after another by the same go
// statement call work 4 times each: together they make 20 calls, of which
// the site's first burst samples 10 (W1's 4, W2's 4, W3's first 2) and the
// gap after it none; TL-Ad samples all 20 (each worker starts cold). A
// worker of another go statement is cold again, and so is the parent,
// born in untraced code (its own key, by entry function).
func TestGSAdSharesCreationSite(t *testing.T) {
	b := trace.NewBuilder()
	b.Enter("T0", "main")
	dropped := sequentialWorkers(b)
	b.Fork("T0", "V1", "main.go:2") // another go statement: cold
	b.Enter("V1", "work")
	b.Write("V1", "xV1", "work.go:5")
	b.Exit("V1", "work")
	b.Enter("T0", "work") // the root's own key: cold
	b.Write("T0", "xT0", "work.go:5")
	b.Exit("T0", "work")
	b.Exit("T0", "main")
	tr := b.Trace()

	f := mustNew(t, "gs-ad", 0)
	if got := droppedIdx(t, tr, f); !slices.Equal(got, dropped) {
		t.Fatalf("gs-ad dropped %v, want W3's last 2 calls and W4's and W5's: %v", got, dropped)
	}
	if st := f.Stats(); st.Accesses != 22 || st.Logged != 12 || st.Calls != 23 || st.SampledCalls != 13 {
		t.Fatalf("gs-ad stats %+v", st)
	}
	if got := droppedIdx(t, tr, mustNew(t, "tl-ad", 0)); len(got) != 0 {
		t.Fatalf("tl-ad dropped %v, want nothing (every goroutine starts cold)", got)
	}
}

// Goroutines born in untraced code (no Fork) count alone, as in TL-Ad:
// two handlers entered through serve each start cold, and so does a
// goroutine whose first traced act is an access outside every frame.
func TestGSAdRootsPerGoroutine(t *testing.T) {
	b := trace.NewBuilder()
	var dropped []int
	for _, h := range []string{"H1", "H2"} {
		for i := 0; i < 12; i++ {
			b.Enter(h, "serve")
			w := b.Write(h, "a"+h, "serve.go:1")
			if i >= 10 {
				dropped = append(dropped, w)
			}
			b.Exit(h, "serve")
		}
	}
	b.Write("R1", "d", "init.go:1")
	b.Write("R2", "e", "init.go:2")
	tr := b.Trace()
	for _, name := range []string{"gs-ad", "tl-ad"} {
		if got := droppedIdx(t, tr, mustNew(t, name, 0)); !slices.Equal(got, dropped) {
			t.Fatalf("%s dropped %v, want each handler's calls 10 and 11: %v", name, got, dropped)
		}
	}

	p, _ := sample.Lookup("gs-ad")
	d := sample.NewDispatcher(p, 0)
	for i := 0; i < 20; i++ {
		if !d.Enter(trace.GID(100+i), sample.RootFunc) {
			t.Fatalf("root %d's start routine not sampled", 100+i)
		}
	}
}

// hotWorkers has T0 start 20 workers W0..W19 one after another at
// main.go:1, each calling work once on a word of its own; each ends
// before the next starts, but for W19 when lastAlive (its End is left to
// the caller).
func hotWorkers(b *trace.Builder, lastAlive bool) {
	for w := 0; w < 20; w++ {
		name := fmt.Sprintf("W%d", w)
		b.Fork("T0", name, "main.go:1")
		b.Enter(name, "work")
		b.Write(name, "local"+name, "work.go:5")
		b.Exit(name, "work")
		if !lastAlive || w < 19 {
			b.End(name)
		}
	}
}

// The gs-ad row of TestThreadLocalFindsColdRace's scenario, and its cost:
// a race in a function the workers of the same go statement made hot is
// missed, one in the first worker of another go statement is found.
func TestGSAdColdRaceBySite(t *testing.T) {
	mk := func(site2 string) *trace.Trace {
		b := trace.NewBuilder()
		hotWorkers(b, false)
		b.Fork("T0", "late", site2)
		b.Enter("late", "work")
		b.Write("late", "X", "work.go:5")
		b.Exit("late", "work")
		b.Enter("T0", "report")
		b.Read("T0", "X", "report.go:9")
		b.Exit("T0", "report")
		return b.Trace()
	}
	for _, c := range []struct {
		site2      string
		tlad, gsad bool
	}{
		{"main.go:1", true, false}, // the 21st worker of the same go statement
		{"main.go:2", true, true},  // the first of another
	} {
		tr := mk(c.site2)
		if full := races(t, tr, nil); len(full) != 1 {
			t.Fatalf("full trace races %v", full)
		}
		if got := len(races(t, tr, mustNew(t, "tl-ad", 0))) == 1; got != c.tlad {
			t.Errorf("late forked at %s: tl-ad found=%v, want %v", c.site2, got, c.tlad)
		}
		if got := len(races(t, tr, mustNew(t, "gs-ad", 0))) == 1; got != c.gsad {
			t.Errorf("late forked at %s: gs-ad found=%v, want %v", c.site2, got, c.gsad)
		}
	}
}

// tlAdScheduled looks up racekit's sampler name, which must have scope
// (named scopeName) and TL-Ad's schedule.
func tlAdScheduled(t *testing.T, name string, scope sample.Scope, scopeName string) sample.Policy {
	t.Helper()
	p, _ := sample.Lookup(name)
	if p.Scope != scope || p.Scope.String() != scopeName {
		t.Fatalf("%s scope %v", name, p.Scope)
	}
	tl, _ := sample.Lookup("tl-ad")
	if !slices.Equal(p.Schedule.Gaps, tl.Schedule.Gaps) || p.Schedule.Burst != tl.Schedule.Burst || p.Schedule.Skip != 0 {
		t.Fatalf("%s schedule %+v, want tl-ad's %+v", name, p.Schedule, tl.Schedule)
	}
	return p
}

// gs-ad's Dispatcher: goroutines forked at one site share counters,
// another site's do not, and Forget keeps the site's counters.
func TestDispatcherPerSite(t *testing.T) {
	p := tlAdScheduled(t, "gs-ad", sample.PerSite, "per-site")
	d := sample.NewDispatcher(p, 0)
	for g := trace.GID(1); g <= 10; g++ {
		d.Fork(g, 5)
		if !d.Enter(g, 7) {
			t.Fatalf("goroutine %d: site 5's call %d of 7 not sampled", g, g-1)
		}
		d.Forget(g)
	}
	d.Fork(11, 5)
	if d.Enter(11, 7) {
		t.Error("site 5's call 10 of 7 sampled: Forget dropped the site's counters, or goroutines do not share them")
	}
	if !d.Enter(11, 8) {
		t.Error("site 5's first call of 8 not sampled")
	}
	d.Fork(12, 6)
	if !d.Enter(12, 7) {
		t.Error("site 6's first call of 7 not sampled")
	}
	d.Fork(13, 6)
	d.Enter(13, 9)
	d.Fork(13, 5) // a key once fixed stays
	for i := 0; i < 9; i++ {
		if !d.Enter(13, 7) {
			t.Fatalf("goroutine 13's call %d of 7 (site 6's %d) not sampled", i, i+1)
		}
	}
}

// TP-Ad (racekit's adaptation, not the paper's) counts per (slot,
// function), a goroutine holding a slot of its go statement's pool from its
// first check to its end. Workers that run one after another take the same
// slot, so they count together, as GS-Ad's do: W1..W5 make 20 calls of
// work, of which the slot's first burst samples 10. Two workers alive at
// once hold two slots and each starts cold, as under TL-Ad; a worker
// started after one of them ended takes that one's slot, hot.
func TestTPAdSlots(t *testing.T) {
	b := trace.NewBuilder()
	b.Enter("T0", "main")
	dropped := sequentialWorkers(b)
	// P1 and P2 alive at once (another go statement): each its own slot.
	b.Fork("T0", "P1", "main.go:2")
	b.Fork("T0", "P2", "main.go:2")
	for i := 0; i < 12; i++ {
		for _, p := range []string{"P1", "P2"} {
			b.Enter(p, "work")
			x := b.Write(p, "x"+p, "work.go:5")
			if i >= 10 {
				dropped = append(dropped, x)
			}
			b.Exit(p, "work")
		}
	}
	b.End("P1")
	// P3 starts after P1 ended, while P2 runs: P1's slot, at its call 12.
	b.Fork("T0", "P3", "main.go:2")
	b.Enter("P3", "work")
	dropped = append(dropped, b.Write("P3", "xP3", "work.go:5"))
	b.Exit("P3", "work")
	b.End("P2")
	b.End("P3")
	b.Exit("T0", "main")
	tr := b.Trace()

	f := mustNew(t, "tp-ad", 0)
	if got := droppedIdx(t, tr, f); !slices.Equal(got, dropped) {
		t.Fatalf("tp-ad dropped %v, want %v", got, dropped)
	}
	if got := droppedIdx(t, tr, mustNew(t, "tl-ad", 0)); len(got) != 4 {
		t.Fatalf("tl-ad dropped %v, want P1's and P2's calls 10 and 11 only", got)
	}
}

// A goroutine born in untraced code holds a slot of the roots' pool from
// its call into traced code until that call returns: handlers called one
// after another, on one connection goroutine or on several, run on one
// slot (their 11th and 12th calls together are unsampled); handlers
// inside traced code at once each have their own.
func TestTPAdRootCalls(t *testing.T) {
	b := trace.NewBuilder()
	var dropped []int
	for i := 0; i < 12; i++ {
		h := []string{"H1", "H2", "H3"}[i%3] // one call at a time
		b.Enter(h, "serve")
		w := b.Write(h, "a"+h, "serve.go:1")
		if i >= 10 {
			dropped = append(dropped, w)
		}
		b.Exit(h, "serve")
	}
	// H4 and H5 inside serve at once: H4 takes the hot slot, H5 a new one.
	b.Enter("H4", "serve")
	b.Enter("H5", "serve")
	for i := 0; i < 3; i++ {
		for _, h := range []string{"H4", "H5"} {
			b.Enter(h, "step") // new to both slots: sampled
			b.Write(h, "a"+h, "serve.go:2")
			b.Exit(h, "step")
		}
	}
	dropped = append(dropped, b.Write("H4", "aH4", "serve.go:3")) // the slot's 13th call of serve
	b.Write("H5", "aH5", "serve.go:3")                            // a new slot's first
	b.Exit("H4", "serve")
	b.Exit("H5", "serve")
	tr := b.Trace()
	if got := droppedIdx(t, tr, mustNew(t, "tp-ad", 0)); !slices.Equal(got, dropped) {
		t.Fatalf("tp-ad dropped %v, want %v", got, dropped)
	}

	p := tlAdScheduled(t, "tp-ad", sample.PerSlot, "per-slot")
	// A root's accesses outside every frame are one call of its own: it
	// takes a slot for the check and gives it back, so 20 roots' start
	// routines make 20 calls of one slot.
	d := sample.NewDispatcher(p, 0)
	n := 0
	for i := 0; i < 20; i++ {
		if d.Enter(trace.GID(100+i), sample.RootFunc) {
			n++
		}
	}
	if n != 10 {
		t.Fatalf("%d of 20 roots' start routines sampled, want the slot's first burst, 10", n)
	}
}

// The cold-region race of TestGSAdColdRaceBySite under tp-ad: a late
// worker of the same go statement that starts while another of its
// goroutines runs takes a new slot and is cold (found); one that starts
// after all of them ended runs on a hot slot (missed, as under gs-ad).
func TestTPAdColdRace(t *testing.T) {
	mk := func(overlap bool) *trace.Trace {
		b := trace.NewBuilder()
		hotWorkers(b, overlap)
		b.Fork("T0", "late", "main.go:1")
		b.Enter("late", "work")
		b.Write("late", "X", "work.go:5")
		b.Exit("late", "work")
		if overlap {
			b.End("W19")
		}
		b.Enter("T0", "report")
		b.Read("T0", "X", "report.go:9")
		b.Exit("T0", "report")
		return b.Trace()
	}
	for _, overlap := range []bool{true, false} {
		tr := mk(overlap)
		if full := races(t, tr, nil); len(full) != 1 {
			t.Fatalf("full trace races %v", full)
		}
		if got := len(races(t, tr, mustNew(t, "tp-ad", 0))) == 1; got != overlap {
			t.Errorf("late worker alive with another: %v; tp-ad found=%v", overlap, got)
		}
	}
}
