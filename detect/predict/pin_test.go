package predict

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// Reads fed by hidden code (pinHiddenReads): a read of a known value that
// a BarrierPair reaching its word may have written between the read's
// observed write and the read.

// hiddenFeedTrace is the trace of a program in which goroutine B calls
// untraced code m (D = {x, y}) that waits until T2 has set y and then
// writes x = 2, which T4 reads; T2 writes z before setting y and T4
// writes z after reading x, so the two writes of z are ordered in every
// run (T2's z, T2's y, m's x, T4's read, T4's z). complete keeps m's
// events (mcm ignores the call markers); callback adds an event of B
// inside the call (a callback), after T1's write of x.
func hiddenFeedTrace(complete, callback bool) *trace.Trace {
	b := forked("T1", "T2", "B", "T4")
	b.Call("B", "m", "x", "y")
	b.WriteV("T1", "x", 1, "wx")
	if callback {
		b.ReadV("B", "q", 0, "cb")
	}
	b.Write("T2", "z", "z2")
	b.WriteV("T2", "y", 1, "wy")
	if complete {
		b.ReadV("B", "y", 1, "hy")
		b.WriteV("B", "x", 2, "hx")
	}
	b.ReadV("T4", "x", 2, "rx")
	b.Write("T4", "z", "z4")
	b.Ret("B", "m")
	return b.Trace()
}

// TestRDITHiddenWriteInsideGap: T4's read of x = 2 lies inside m, so m's
// hidden write may have come right before it, after waiting for anything
// observed before it. Reordering the read before T2's write of y (as the
// pin alone allowed when a callback of B came between T1's write and the
// read) would let z4 race with z2: a false alarm, since in this program
// z2 → y → x = 2 → rx → z4 in every run.
func TestRDITHiddenWriteInsideGap(t *testing.T) {
	for _, cb := range []bool{false, true} {
		full, part := hiddenFeedTrace(true, cb), hiddenFeedTrace(false, cb)
		// The two traces come from two builders: compare site labels.
		want := label(full, runDetector(full, NewMCM(nil, whole())))
		if slices.Contains(want, "z2-z4") {
			t.Fatalf("callback %v: z2-z4 is a race of the complete trace: the test is wrong", cb)
		}
		rd := NewRDIT(nil, whole())
		got := runDetector(part, rd)
		for _, p := range label(part, got) {
			if !slices.Contains(want, p) {
				t.Errorf("callback %v: rdit reports %v, no race of the program\n%s", cb, p, dump(part))
			}
		}
		checkWitnesses(t, 0, part, rd)
		// The brute force over the rdit model agrees.
		ref, _ := bruteRaces(buildModel(part.Events, newPrefix(), true))
		if exact := sitePairs(part.Events, ref); !slices.Equal(got, exact) {
			t.Errorf("callback %v: rdit %v, brute force %v", cb, label(part, got), label(part, exact))
		}
	}
}

// TestRDITReadFedInsideSilentBarrierPair: a BarrierPair that began before
// a read's observed write and is still open at the read, with no event of
// its goroutine in between, may have fed the read (gen-tree in
// bench/predict lost its planted race to such a read: with nothing to
// read from, the read could never run, nor anything after it). The read
// is pinned to its observed write and runs after everything observed
// before it; T4's write of z after it then races with T2's.
func TestRDITReadFedInsideSilentBarrierPair(t *testing.T) {
	mk := func(complete bool) *trace.Trace {
		b := forked("T1", "T2", "B", "T4")
		b.Call("B", "m", "x")
		b.WriteV("T1", "x", 1, "wx")
		if complete {
			b.WriteV("B", "x", 2, "hx")
		}
		b.ReadV("T4", "x", 2, "rx")
		b.Write("T4", "z", "z4")
		b.Write("T2", "z", "z2")
		b.Ret("B", "m")
		return b.Trace()
	}
	full, part := mk(true), mk(false)
	if got := label(full, runDetector(full, NewMCM(nil, whole()))); !slices.Contains(got, "z2-z4") {
		t.Fatalf("mcm on the complete trace: %v, want z2-z4 among them", got)
	}
	// mcm: the read of 2 can never run (no write of 2), so z4 never comes.
	expect(t, part, []string{"rx-wx"}, []string{"rx-wx", "z2-z4"})
}

// feedProgram runs, under a random schedule, a small program whose
// untraced call m (goroutine B, D = {x, y, ch}) waits for T2 (y = 1, or a
// send on ch) and then writes x, while T1 writes x, T4 reads x (sometimes
// waiting for m's value) and writes z, and T2 writes z before releasing
// m. It returns the complete trace (m's events visible between the call
// markers, which mcm ignores) and the incomplete one (m's events hidden
// but for an optional callback).
func feedProgram(seed uint64) (full, part *trace.Trace) {
	r := rand.New(rand.NewPCG(seed, 0xFEED))
	viaChan := r.IntN(2) == 0
	callback := r.IntN(2) == 0
	t4Waits := r.IntN(2) == 0
	hiddenVal := uint64(2)
	if r.IntN(4) == 0 {
		hiddenVal = 1 // the same value as T1's write
	}
	type step struct {
		hidden bool
		run    func(b *trace.Builder) int
		ready  func() bool
	}
	x, y, sent := uint64(0), uint64(0), false
	always := func() bool { return true }
	prog := map[string][]step{}
	prog["T1"] = []step{{run: func(b *trace.Builder) int { x = 1; return b.WriteV("T1", "x", 1, "wx") }, ready: always}}
	if r.IntN(2) == 0 {
		prog["T1"] = append(prog["T1"], step{run: func(b *trace.Builder) int { return b.Write("T1", "w", "w1") }, ready: always})
	}
	prog["T2"] = []step{{run: func(b *trace.Builder) int { return b.Write("T2", "z", "z2") }, ready: always}}
	if viaChan {
		prog["T2"] = append(prog["T2"], step{run: func(b *trace.Builder) int { sent = true; return b.Snd("T2", "ch") }, ready: always})
	} else {
		prog["T2"] = append(prog["T2"], step{run: func(b *trace.Builder) int { y = 1; return b.WriteV("T2", "y", 1, "wy") }, ready: always})
	}
	bsteps := []step{{run: func(b *trace.Builder) int { return b.Call("B", "m", "x", "y", "ch") }, ready: always}}
	if viaChan {
		bsteps = append(bsteps, step{hidden: true, run: func(b *trace.Builder) int { return b.Rcv("B", "ch") }, ready: func() bool { return sent }})
	} else {
		bsteps = append(bsteps, step{hidden: true, run: func(b *trace.Builder) int { return b.ReadV("B", "y", 1, "hy") }, ready: func() bool { return y == 1 }})
	}
	bsteps = append(bsteps, step{hidden: true, run: func(b *trace.Builder) int { x = hiddenVal; return b.WriteV("B", "x", hiddenVal, "hx") }, ready: always})
	if callback {
		at := 1 + r.IntN(len(bsteps))
		bsteps = slices.Insert(bsteps, at, step{run: func(b *trace.Builder) int { return b.ReadV("B", "q", 0, "cb") }, ready: always})
	}
	bsteps = append(bsteps, step{run: func(b *trace.Builder) int { return b.Ret("B", "m") }, ready: always})
	prog["B"] = bsteps
	prog["T4"] = []step{
		{run: func(b *trace.Builder) int { return b.ReadV("T4", "x", x, "rx") }, ready: func() bool { return !t4Waits || x == hiddenVal }},
		{run: func(b *trace.Builder) int { return b.Write("T4", "z", "z4") }, ready: always},
	}
	names := []string{"T1", "T2", "B", "T4"}
	fb := forked(names...)
	pos := map[string]int{}
	var hidden []int
	for {
		var ready []string
		for _, g := range names {
			if p := pos[g]; p < len(prog[g]) && prog[g][p].ready() {
				ready = append(ready, g)
			}
		}
		if len(ready) == 0 {
			break
		}
		g := ready[r.IntN(len(ready))]
		s := prog[g][pos[g]]
		pos[g]++
		if i := s.run(fb); s.hidden {
			hidden = append(hidden, i)
		}
	}
	full = fb.Trace()
	part = &trace.Trace{M: full.M}
	for i, e := range full.Events {
		if !slices.Contains(hidden, i) {
			part.Events = append(part.Events, e)
		}
	}
	return full, part
}

// TestRDITHiddenFeedsAreSound runs feedProgram under many schedules: rdit
// on the incomplete trace reports exactly what the brute force over its
// model finds, and only races of the complete trace (whose mcm answer the
// brute force also checks).
func TestRDITHiddenFeedsAreSound(t *testing.T) {
	var traces, found, truth int
	for seed := range uint64(400) {
		full, part := feedProgram(seed)
		traces++
		ref, _ := bruteRaces(buildModel(full.Events, newPrefix(), false))
		want := sitePairs(full.Events, ref)
		if got := runDetector(full, NewMCM(nil, whole())); !slices.Equal(got, want) {
			t.Fatalf("seed %d: mcm %v, brute force %v", seed, label(full, got), label(full, want))
		}
		rd := NewRDIT(nil, whole())
		got := runDetector(part, rd)
		ref, _ = bruteRaces(buildModel(part.Events, newPrefix(), true))
		if exact := sitePairs(part.Events, ref); !slices.Equal(got, exact) {
			t.Fatalf("seed %d: rdit %v, brute force %v\n%s", seed, label(part, got), label(part, exact), dump(part))
		}
		for _, p := range got {
			if !slices.Contains(want, p) {
				t.Fatalf("seed %d: rdit reports %v, not a race of the complete trace\ncomplete:\n%s\nincomplete:\n%s",
					seed, label(part, []finding.Pair{p}), dump(full), dump(part))
			}
		}
		checkWitnesses(t, seed, part, rd)
		found += len(got)
		truth += len(want)
	}
	t.Logf("%d schedules: %d races in the complete traces, rdit finds %d on the incomplete ones", traces, truth, found)
	if found == 0 {
		t.Fatal("the sample exercises nothing")
	}
}
