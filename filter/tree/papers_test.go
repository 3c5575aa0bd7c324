package tree

// The examples of the TREE thesis (Rajagopalan 2016, chapter 3), as
// serialized traces, with exactly the events each relation's filter drops.
// thesisOpts replays Algorithm 1 with the thesis' literal contexts (every
// thread starts with the empty context; locks are only a set); the sound
// relations drop less where the thesis' reasoning does not hold for
// racekit's detectors, and each test says why.

import (
	"fmt"
	"slices"
	"testing"

	"github.com/racekit/racekit/trace"
)

var thesisOpts = Options{Relation: Hybrid, thesis: true}

// modes are the sound option sets every figure is checked under.
var modes = []Options{
	{Relation: All},
	{Relation: HappensBefore},
	{Relation: Hybrid},
	{Relation: Eraser},
}

// expectDrops checks that each option set drops exactly the events want
// names (trace indexes) and keeps what it promises.
func expectDrops(t *testing.T, tr *trace.Trace, want map[string][]int) {
	t.Helper()
	for _, o := range append(slices.Clone(modes), thesisOpts) {
		name := o.Relation.String()
		if o.thesis {
			name = "thesis"
		}
		got, filtered := dropped(t, o, tr)
		if w := want[name]; !slices.Equal(got, w) {
			t.Errorf("%s: dropped %v, want %v", name, got, w)
		}
		if !o.thesis {
			if d := guarantee(t, o, tr, filtered); d != "" {
				t.Errorf("%s: %s", name, d)
			}
		}
	}
}

// seqs converts the thesis' 1-based event numbers e_n to trace indexes
// (the traces below are built so that e_n is event n-1).
func seqs(ns ...int) []int {
	out := []int{}
	for _, n := range ns {
		out = append(out, n-1)
	}
	return out
}

// figure34b is the trace of Figure 3.4b, built as detect/hb's
// TestRaceTREEFigure3_4b builds it: T0 forks T1..T3 (e1..e3), then for i =
// 1..3 writes x under L[i] (①: e5, e9, e13) and reads it unguarded (②: e7,
// e11, e15); each Ti writes x under L[i] (③: e17, e21, e25) and then
// unguarded (④: e19, e23, e27).
func figure34b() *trace.Trace {
	b := trace.NewBuilder()
	b.Fork("T0", "T1", "e1")
	b.Fork("T0", "T2", "e2")
	b.Fork("T0", "T3", "e3")
	for _, l := range []string{"L1", "L2", "L3"} {
		b.Acq("T0", l)
		b.Write("T0", "x", "①")
		b.Rel("T0", l)
		b.Read("T0", "x", "②")
	}
	for i, l := range []string{"L1", "L2", "L3"} {
		g := []string{"T1", "T2", "T3"}[i]
		b.Acq(g, l)
		b.Write(g, "x", "③")
		b.Rel(g, l)
		b.Write(g, "x", "④")
	}
	return b.Trace()
}

// TestFigure3_4 is the case study of section 3.5 on Figure 3.4b. The
// thesis drops the reads at ② of the second and third iterations (e11,
// e15: T0's context is back to {g1,g2,g3} after each release) and T3's
// unguarded write e27 at ④ (T1 and T2 already fill the stack of the empty
// context). The thesis-literal replay drops exactly those.
//
// Sound relations:
//   - hybrid drops e11 and e15 as the thesis does (no lock edges, same
//     locks), but not e27: every goroutine's context starts with its own
//     span, so the stack of a context never holds two goroutines. The
//     case study needs T1..T3 to share the empty context, which the
//     algorithm itself would not give them either (Algorithm 1 adds the
//     fork's message g_i to T_i's context on RCV) and which is unsound in
//     general (TestInterThreadRedundancyIsUnsound).
//   - hb and all drop nothing: each release of L[i] is an edge out of T0
//     under happens-before (TestLockReleaseIsAnEdgeUnderHB shows the race
//     dropping e11 would lose), and each Ti is a span of its own.
//   - lockset (Eraser) drops nothing: no access of x directly repeats the
//     previous one.
//
// The seven distinct hb pairs (the thesis counts six and omits (③,④), see
// detect/hb) survive every sound filter.
func TestFigure3_4(t *testing.T) {
	tr := figure34b()
	expectDrops(t, tr, map[string][]int{
		"thesis": seqs(11, 15, 27),
		"hybrid": seqs(11, 15),
	})
	if got := labels(tr.M, runDetector(t, "hb", tr)); len(got) != 7 {
		t.Errorf("hb on Figure 3.4b: %v, want 7 pairs", got)
	}
	f := New(thesisOpts)
	for i := range tr.Events {
		f.Keep(&tr.Events[i])
	}
	if s := f.Stats(); s.InterThread != 1 {
		t.Errorf("thesis replay: %d inter-thread drops, want 1 (e27)", s.InterThread)
	}
}

// TestFigure3_1 is Figure 3.1: T0 writes x ten times under lock A (①), T1
// ten times under lock B (②); one distinct race (①,②). The thesis filters
// all but the first write of each thread: so do hybrid and the thesis
// replay (the context returns to {A} and {B}), and Eraser (each write
// repeats the previous access to x: same goroutine, site, kind, locks).
// Under hb each release of A or B is an edge out of the thread, so hb and
// all keep every write.
func TestFigure3_1(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("M", "T0", "go T0")
	b.Fork("M", "T1", "go T1")
	var later []int
	for _, c := range []struct{ g, l, s string }{{"T0", "A", "①"}, {"T1", "B", "②"}} {
		for i := range 10 {
			b.Acq(c.g, c.l)
			w := b.Write(c.g, "x", c.s)
			b.Rel(c.g, c.l)
			if i > 0 {
				later = append(later, w)
			}
		}
	}
	tr := b.Trace()
	expectDrops(t, tr, map[string][]int{"thesis": later, "hybrid": later, "lockset": later})
	// Eraser never refines x's candidate set with T0's locks (T0's writes
	// are the exclusive phase), so it stays {B}: no warning.
	for _, d := range []string{"hb", "fasttrack", "hybrid"} {
		if got := labels(tr.M, runDetector(t, d, tr)); !slices.Equal(got, []string{"①~②"}) {
			t.Errorf("%s: %v, want [①~②]", d, got)
		}
	}
}

// TestFigure3_2 is Figure 3.2 (intra-thread redundancy): T0 calls m_read
// (the read of x, site "r") and m_write (the write, site "w") ten times,
// holding A for the first five writes and B for the last five; T1 writes x
// (site "t1") under A. Approach 1 (check each site once) would miss the
// race of the writes under B with T1. The thesis filters every read after
// the first, the writes under A after the first, and the writes under B
// after the sixth iteration's: 17 events, in the thesis replay and in
// hybrid, keeping (r,t1) and (w,t1). Under hb the releases are edges and
// nothing is dropped; for Eraser no access repeats the previous one.
func TestFigure3_2(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("T0", "T1", "go T1")
	var drop []int
	for i := range 10 {
		r := b.Read("T0", "x", "r")
		l := "A"
		if i >= 5 {
			l = "B"
		}
		b.Acq("T0", l)
		w := b.Write("T0", "x", "w")
		b.Rel("T0", l)
		if i > 0 {
			drop = append(drop, r)
		}
		if i != 0 && i != 5 {
			drop = append(drop, w)
		}
	}
	b.Acq("T1", "A")
	b.Write("T1", "x", "t1")
	b.Rel("T1", "A")
	tr := b.Trace()
	slices.Sort(drop)
	if len(drop) != 17 {
		t.Fatalf("hand count: %d", len(drop))
	}
	expectDrops(t, tr, map[string][]int{"thesis": drop, "hybrid": drop})
	for _, d := range []string{"hb", "hybrid"} {
		if got := labels(tr.M, runDetector(t, d, tr)); !slices.Equal(got, []string{"r~t1", "t1~w"}) {
			t.Errorf("%s: %v, want [r~t1 t1~w]", d, got)
		}
	}
}

// TestFigure3_3 is Figure 3.3 (inter-thread redundancy): T0, nine times,
// reads x (①), forks T_i, and writes x under A (②); T_i writes x (③),
// under A when i < 5. The thesis calls T6..T9 redundant to T5; Algorithm
// 2 keeps two goroutines per context, so its replay drops T3 and T4 (the
// locked writes after T1 and T2) and T7, T8, T9 (after T5 and T6): the
// text and the algorithm disagree, and the algorithm is what we replay.
// No sound relation drops any of them: each T_i's context is its own, and
// T0's changes with every fork. (T0's reads are never filtered either:
// the thesis only says they repeat the same lexical pair as races.)
func TestFigure3_3(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("T0")
	for i := 1; i <= 9; i++ {
		b.Read("T0", "x", "①")
		b.Fork("T0", fmt.Sprintf("T%d", i), "fork")
		b.Acq("T0", "A")
		b.Write("T0", "x", "②")
		b.Rel("T0", "A")
	}
	ws := map[int]int{}
	for i := 1; i <= 9; i++ {
		g := fmt.Sprintf("T%d", i)
		if i < 5 {
			b.Acq(g, "A")
		}
		ws[i] = b.Write(g, "x", "③")
		if i < 5 {
			b.Rel(g, "A")
		}
	}
	tr := b.Trace()
	expectDrops(t, tr, map[string][]int{"thesis": {ws[3], ws[4], ws[7], ws[8], ws[9]}})
}

// TestFigure3_7 is Figure 3.7 (span redundancy): T0 writes Array[j] (site
// "a") and j (site "j") for j over an array of four words, five times, with
// no synchronization: one span. Every relation drops the last four rounds
// of Array writes ("four times Array.length()") and every write of j but
// the first, because each repeats an earlier access in the same context.
func TestFigure3_7(t *testing.T) {
	const n = 4
	b := trace.NewBuilder()
	b.Begin("T0")
	var drop []int
	for i := range 5 {
		for j := range n {
			w := b.Write("T0", fmt.Sprintf("Array[%d]", j), "a")
			v := b.Write("T0", "j", "j")
			if i > 0 {
				drop = append(drop, w)
			}
			if i > 0 || j > 0 {
				drop = append(drop, v)
			}
		}
	}
	tr := b.Trace()
	if len(drop) != 4*n+5*n-1 {
		t.Fatalf("hand count %d", len(drop))
	}
	expectDrops(t, tr, map[string][]int{"all": drop, "hb": drop, "hybrid": drop, "lockset": drop, "thesis": drop})
}

// TestSpanRedundancy is what Options.Span adds (section 3.6): within one
// happens-before span, once an address was written, later accesses to it
// at any site are dropped; once read, later reads. A new span (after a
// snd) starts over. Sites differ, so without Span nothing is dropped.
func TestSpanRedundancy(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("M", "T", "go T")
	r1 := b.Read("T", "x", "s1")
	r2 := b.Read("T", "x", "s2") // dropped: read after read
	b.Write("T", "x", "s3")      // kept: a write is stronger
	r4 := b.Read("T", "x", "s4") // dropped: after a write
	w5 := b.Write("T", "x", "s5")
	b.Rcv("T", "c")              // incoming: same span
	r6 := b.Read("T", "x", "s6") // dropped
	b.Snd("T", "c")              // outgoing: a new span
	b.Read("T", "x", "s7")       // kept
	b.Write("M", "x", "m")       // races with everything T did
	tr := b.Trace()
	got, filtered := dropped(t, Options{Relation: HappensBefore, Span: true}, tr)
	if want := []int{r2, r4, w5, r6}; !slices.Equal(got, want) {
		t.Errorf("span: dropped %v, want %v", got, want)
	}
	if d := guarantee(t, Options{Relation: HappensBefore, Span: true}, tr, filtered); d != "" {
		t.Error(d)
	}
	// hb loses site pairs with Span: that is why it is for fasttrack only.
	if a, b := len(runDetector(t, "hb", tr).col.Pairs()), len(runDetector(t, "hb", filtered).col.Pairs()); a <= b {
		t.Errorf("hb pairs %d unfiltered, %d with span: expected fewer", a, b)
	}
	if got, _ := dropped(t, Options{Relation: HappensBefore}, tr); len(got) != 0 {
		t.Errorf("without span: dropped %v", got)
	}
	_ = r1
}

// TestInterThreadRedundancyIsUnsound is why no sound relation lets two
// goroutines share a context. M forks T1, writes x (site a), then forks T2
// and T3; T2 and T3 read x at site b (ordered after the write), then T1
// does (racing with it). With the thesis' contexts all three readers have
// the empty context, T2 and T3 fill its stack, and T1's read, the only
// one that races, is dropped: the pair (a,b) is lost. The relation of an
// access to later events depends on edges its goroutine has not sent yet,
// so no online context can make inter-thread equivalence safe.
func TestInterThreadRedundancyIsUnsound(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "T1", "go")
	b.Write("M", "x", "a")
	b.Fork("M", "T2", "go")
	b.Fork("M", "T3", "go")
	b.Read("T2", "x", "b")
	b.Read("T3", "x", "b")
	last := b.Read("T1", "x", "b")
	tr := b.Trace()
	got, filtered := dropped(t, thesisOpts, tr)
	if !slices.Equal(got, []int{last}) {
		t.Fatalf("thesis replay dropped %v, want [%d]", got, last)
	}
	if full, filt := runDetector(t, "hb", tr).col.Len(), runDetector(t, "hb", filtered).col.Len(); full != 1 || filt != 0 {
		t.Errorf("hb: %d races unfiltered, %d with the thesis' contexts; want 1 and 0", full, filt)
	}
	expectDrops(t, tr, map[string][]int{"thesis": {last}})
}

// TestLockReleaseIsAnEdgeUnderHB is why a release starts a new context
// under happens-before. T0 reads x (②) after releasing L1 and again after
// releasing L2; T2 then writes x (③) under L2. The first read is ordered
// before T2's write (through L2), the second is not: dropping the second
// as the thesis does (its context is back to the same set) loses hb's only
// race. Hybrid, which has no lock edges, still sees (②,③) through the
// first read, so the hybrid relation may drop it.
func TestLockReleaseIsAnEdgeUnderHB(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("T0", "T2", "go")
	for _, l := range []string{"L1", "L2"} {
		b.Acq("T0", l)
		b.Write("T0", "x", "①")
		b.Rel("T0", l)
		b.Read("T0", "x", "②")
	}
	b.Acq("T2", "L2")
	b.Write("T2", "x", "③")
	b.Rel("T2", "L2")
	tr := b.Trace()
	second := 8
	expectDrops(t, tr, map[string][]int{"thesis": {second}, "hybrid": {second}})
	_, filtered := dropped(t, thesisOpts, tr)
	if full, filt := labels(tr.M, runDetector(t, "hb", tr)), labels(tr.M, runDetector(t, "hb", filtered)); !slices.Equal(full, []string{"②~③"}) || len(filt) != 0 {
		t.Errorf("hb: %v unfiltered, %v with the thesis' contexts; want [②~③] and none", full, filt)
	}
}

// TestEraserNeedsItsOwnRule: T1 writes x, T2 reads it, T1 writes it again
// at the same site, holding nothing. Eraser warns only at the second write
// (Shared → Shared-Modified); hybrid's context rule drops that write (same
// span, same locks), which is sound for hybrid and hb (the first write
// races with the read) but silences Eraser. Eraser and all keep it: the
// last access to x was T2's.
func TestEraserNeedsItsOwnRule(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("M", "T1", "go")
	b.Fork("M", "T2", "go")
	b.Write("T1", "x", "s1")
	b.Read("T2", "x", "s2")
	second := b.Write("T1", "x", "s1")
	tr := b.Trace()
	expectDrops(t, tr, map[string][]int{"hybrid": {second}, "hb": {second}, "thesis": {second}})
	_, filtered := dropped(t, Options{Relation: Hybrid}, tr)
	if full, filt := runDetector(t, "lockset", tr).col.Len(), runDetector(t, "lockset", filtered).col.Len(); full != 1 || filt != 0 {
		t.Errorf("lockset: %d warnings unfiltered, %d after the hybrid rule; want 1 and 0", full, filt)
	}
}

// TestUntracedGoroutineStartsNewSpans: a goroutine born in untraced code
// (no fork) is ordered after everything so far, so each existing goroutine
// has an edge out at its first event. T1's second read of x comes after
// U's start: U's write is ordered after the first read but not the second,
// which must be kept.
func TestUntracedGoroutineStartsNewSpans(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("T1")
	b.Read("T1", "x", "r")
	b.Begin("U") // never forked
	b.Read("T1", "x", "r")
	b.Write("U", "x", "w")
	tr := b.Trace()
	// Eraser has no happens-before: the second read repeats the first.
	expectDrops(t, tr, map[string][]int{"thesis": {3}, "lockset": {3}})
	if got := labels(tr.M, runDetector(t, "hb", tr)); !slices.Equal(got, []string{"r~w"}) {
		t.Errorf("hb: %v", got)
	}
}

// TestJoinStartsNewSpanOfChild: a join publishes the child's clock, so an
// access of the child after it (ill-formed, but tolerated) is a new
// context: it is not ordered before what the parent does next.
func TestJoinStartsNewSpanOfChild(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "C", "go")
	b.Write("C", "x", "c")
	b.End("C")
	b.Join("M", "C")
	b.Write("C", "x", "c") // after the join: races with M's write
	b.Write("M", "x", "m")
	tr := b.Trace()
	expectDrops(t, tr, map[string][]int{"thesis": {5}, "lockset": {5}})
	if got := labels(tr.M, runDetector(t, "hb", tr)); !slices.Equal(got, []string{"c~m"}) {
		t.Errorf("hb: %v", got)
	}
}

// TestAllocForgets: after an Alloc the address holds a new object and the
// detectors forget the old one's accesses, so an access equivalent to one
// before the Alloc must be kept.
func TestAllocForgets(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("M", "T", "go")
	b.Write("T", "x", "w")
	b.Alloc("T", "x", 8)
	b.Write("T", "x", "w") // kept: the first write was to the old object
	b.Write("T", "x", "w") // dropped
	b.Write("M", "x", "m")
	tr := b.Trace()
	expectDrops(t, tr, map[string][]int{"all": {4}, "hb": {4}, "hybrid": {4}, "lockset": {4}, "thesis": {4}})
}

// TestDropsRepetition is a trace where the reasoning of section 3.3 says
// exactly what must go: main writes an item (site p) and sends it on c, 400
// times; four workers each receive 100 times and, after each receive, read
// the shared configuration (site r) and write their own counter (site w).
// A receive is an incoming edge, so a worker's span never changes: under
// hb and hybrid each worker keeps its first read and write and drops the
// other 2·99, while main's writes follow a snd each time and are all kept:
// 792 of 1200 accesses. Eraser's rule looks only at the previous access of
// the address: the configuration reads alternate between workers (all
// kept), main's item writes repeat each other (399 dropped) and so do the
// counters' (396): 795. All is the conjunction: only the counters, 396.
func TestDropsRepetition(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	ws := []string{"W1", "W2", "W3", "W4"}
	for _, w := range ws {
		b.Fork("M", w, "go")
		b.Begin(w)
	}
	for i := range 400 {
		b.Write("M", "item", "p")
		b.Snd("M", "c")
		w := ws[i%4]
		b.Rcv(w, "c")
		b.Read(w, "config", "r")
		b.Write(w, "count"+w, "w")
	}
	tr := b.Trace()
	want := map[Relation]int{All: 396, HappensBefore: 792, Hybrid: 792, Eraser: 795}
	for _, o := range append(slices.Clone(modes), Options{Relation: HappensBefore, Span: true}) {
		got, filtered := dropped(t, o, tr)
		if len(got) != want[o.Relation] {
			t.Errorf("%+v: dropped %d accesses, want %d of 1200", o, len(got), want[o.Relation])
		}
		if d := guarantee(t, o, tr, filtered); d != "" {
			t.Error(d)
		}
	}
}
