package hb_test

// Examples from the seed papers (/work/shared/seeds), as serialized traces.

import (
	"testing"

	"github.com/racekit/racekit/trace"
)

// lockAt appends an acquire (or release) of l by g with a site, so that
// lock statements keep their statement numbers.
func lockAt(b *trace.Builder, g string, op trace.Op, l, site string) {
	b.Add(trace.Event{G: b.G(g), Op: op, Obj: b.Obj(l), Site: b.Site(site)})
}

// TestRaceRaceFuzzerFigure1 is RaceFuzzer (Sen, PLDI'08) Figure 1 run with
// thread1 first, statements 1..14 as sites "1".."14". With z = 0 thread1
// skips ERROR1 (6); thread2 then sees y == 1 and x == 1, so it executes 7,
// 8, 9, 10, 14. The accesses to x (1, 10) and y (3, 9) are ordered by the
// lock L (4 → 8); z's (5, 7) are not: hb reports only (5,7). (The hybrid
// detector, which ignores lock edges, also reports (1,10).)
func TestRaceRaceFuzzerFigure1(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go thread1")
	b.Fork("main", "T2", "go thread2")
	// thread1
	b.Write("T1", "x", "1")
	lockAt(b, "T1", trace.OpAcquire, "L", "2")
	b.Write("T1", "y", "3")
	lockAt(b, "T1", trace.OpRelease, "L", "4")
	r5 := b.Read("T1", "z", "5") // z == 0: ERROR1 (6) not reached
	// thread2
	w7 := b.Write("T2", "z", "7")
	lockAt(b, "T2", trace.OpAcquire, "L", "8")
	b.Read("T2", "y", "9")  // y == 1
	b.Read("T2", "x", "10") // x == 1: ERROR2 (11) not reached
	lockAt(b, "T2", trace.OpRelease, "L", "14")
	tr := b.Trace()
	h, f := expect(t, tr, "5~7")
	checkOnly(t, "hb", h, tr, r5, w7)
	checkOnly(t, "fasttrack", f, tr, r5, w7)
}

// TestRaceTREEFigure3_4b is the serialized trace e1..e27 of the TREE thesis
// (Rajagopalan 2016, Figure 3.4b): T0 forks T1..T3 (e1..e3), then for
// i = 1..3 writes x under L[i] (location ①: e5, e9, e13) and reads x
// unguarded (②: e7, e11, e15); each Ti writes x under L[i] (③: e17, e21,
// e25) and then unguarded (④: e19, e23, e27).
//
// Under happens-before with lock edges, T0's release of L[i] orders
// everything T0 did before it before Ti: e5 ≺ T1; e5, e7, e9 ≺ T2;
// e5..e13 ≺ T3; the Ti are mutually unordered. That leaves 30 racing event
// pairs: {e7, e9, e11, e13, e15} × {e17, e19} (10), {e11, e13, e15} ×
// {e21, e23} (6), {e15} × {e25, e27} (2), and the 12 write pairs between
// different Ti. Their distinct site pairs are seven: (①,③), (①,④),
// (②,③), (②,④), (③,③), (③,④), (④,④).
//
// The thesis counts "27 races" and "only six of them have unique lexical
// locations"; its relation ignores lock edges (lockset plus fork order):
// it lists e7 against e21..e27, e11 against e25 and e27, e5 against e19,
// e21..e27, e9 against e23..e27 and e13 against e27, all ordered here
// through T0's releases of L1..L3. Its enumerated list gives the lexical pairs (②,③), (②,④),
// (①,④), (①,③), (③,③) and (④,④) but omits every pair of a locked write
// ③ of one Ti with the unguarded write ④ of another (e17–e23, e17–e27,
// e21–e19, e21–e27, e25–e19, e25–e23): both are writes, by different
// threads, under no common lock and unordered under any of the relations,
// so (③,④) is a seventh distinct race, under happens-before as well.
//
// FastTrack names only the pairs its last-access epochs hold: e17 races
// with W = e13 (①) and R = e15 (②); from then on W_x holds the previous
// Ti's write, so it reports (①,③), (②,③), (②,④), (③,④) — the same
// first race on x (e17) as hb, as its theorem promises.
func TestRaceTREEFigure3_4b(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("T0", "T1", "e1") // e1..e3
	b.Fork("T0", "T2", "e2")
	b.Fork("T0", "T3", "e3")
	ev := map[int]int{} // thesis event number → trace index
	n := 4
	for _, l := range []string{"L1", "L2", "L3"} {
		ev[n] = b.Acq("T0", l)
		ev[n+1] = b.Write("T0", "x", "①")
		ev[n+2] = b.Rel("T0", l)
		ev[n+3] = b.Read("T0", "x", "②")
		n += 4
	}
	for i, l := range []string{"L1", "L2", "L3"} {
		g := []string{"T1", "T2", "T3"}[i]
		ev[n] = b.Acq(g, l)
		ev[n+1] = b.Write(g, "x", "③")
		ev[n+2] = b.Rel(g, l)
		ev[n+3] = b.Write(g, "x", "④")
		n += 4
	}
	tr := b.Trace()
	h, f := expectEach(t, tr,
		[]string{"①~③", "①~④", "②~③", "②~④", "③~③", "③~④", "④~④"},
		[]string{"①~③", "②~③", "②~④", "③~④"})

	// Every dynamic race hb reports is one of the 30 racing event pairs.
	racing := map[[2]int]bool{}
	add := func(as, bs []int) {
		for _, a := range as {
			for _, b := range bs {
				racing[[2]int{ev[a], ev[b]}] = true
			}
		}
	}
	add([]int{7, 9, 11, 13, 15}, []int{17, 19})
	add([]int{11, 13, 15}, []int{21, 23})
	add([]int{15}, []int{25, 27})
	add([]int{17, 19}, []int{21, 23, 25, 27})
	add([]int{21, 23}, []int{25, 27})
	if len(racing) != 30 {
		t.Fatalf("hand count: %d racing pairs, want 30", len(racing))
	}
	for _, r := range append(h.races, f.races...) {
		if !racing[[2]int{int(r.Prev.Seq), int(r.Cur.Seq)}] {
			t.Errorf("%s: (%d, %d) is not a racing event pair", r.Detector, r.Prev.Seq, r.Cur.Seq)
		}
	}
	// The first racing access is e17 for both.
	if h.races[0].Cur.Seq != uint64(ev[17]) || f.races[0].Cur.Seq != uint64(ev[17]) {
		t.Errorf("first race at seq %d (hb), %d (fasttrack), want e17 = %d", h.races[0].Cur.Seq, f.races[0].Cur.Seq, ev[17])
	}
}
