package predict

import (
	"slices"
	"testing"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// Each test is a hand-written trace and the races mcm and rdit must give
// (as site labels "a-b"); the name says the expectation.

func forked(gs ...string) *trace.Builder {
	b := trace.NewBuilder()
	b.Begin("M")
	for _, g := range gs {
		b.Fork("M", g, "")
	}
	return b
}

func expect(t *testing.T, tr *trace.Trace, mcm, rdit []string) {
	t.Helper()
	for _, c := range []struct {
		d    *Detector
		want []string
	}{{NewMCM(nil, whole()), mcm}, {NewRDIT(nil, whole()), rdit}} {
		got := label(tr, runDetector(tr, c.d))
		if got == nil {
			got = []string{}
		}
		want := c.want
		if want == nil {
			want = []string{}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", c.d.name, got, want)
		}
		for _, w := range c.d.Witnesses() {
			if err := CheckWitness(tr, &w); err != nil {
				t.Errorf("%s: %v", c.d.name, err)
			}
		}
	}
}

func TestRaceCriticalSectionsReordered(t *testing.T) {
	// HB orders the two writes of x through l; swapping the sections
	// (they touch different variables) makes them adjacent.
	b := forked("T1", "T2")
	b.WriteV("T1", "x", 1, "w1")
	b.Acq("T1", "l")
	b.WriteV("T1", "y", 1, "y1")
	b.Rel("T1", "l")
	b.Acq("T2", "l")
	b.WriteV("T2", "z", 1, "z2")
	b.Rel("T2", "l")
	b.WriteV("T2", "x", 2, "w2")
	expect(t, b.Trace(), []string{"w1-w2"}, []string{"w1-w2"})
}

func TestNoRaceReadSeesValueThroughLock(t *testing.T) {
	// T2 reads y = 1 inside its section: T1's section must come first.
	b := forked("T1", "T2")
	b.WriteV("T1", "x", 1, "w1")
	b.Acq("T1", "l")
	b.WriteV("T1", "y", 1, "y1")
	b.Rel("T1", "l")
	b.Acq("T2", "l")
	b.ReadV("T2", "y", 1, "y2")
	b.Rel("T2", "l")
	b.WriteV("T2", "x", 2, "w2")
	expect(t, b.Trace(), nil, nil)
}

func TestNoRaceFlagHandshakeByValue(t *testing.T) {
	b := forked("T1", "T2")
	b.WriteV("T1", "x", 7, "w1")
	b.WriteV("T1", "f", 1, "f1")
	b.ReadV("T2", "f", 1, "f2")
	b.ReadV("T2", "x", 7, "r2")
	// The flag itself races (f1-f2); x does not.
	expect(t, b.Trace(), []string{"f1-f2"}, []string{"f1-f2"})
}

func TestNoRaceFlagHandshakeWithoutValues(t *testing.T) {
	// A read of unknown value sees the write it saw: f2 sees f1, so w1
	// comes before r2 in every reordering that runs r2. Only the flag
	// races (hb reports x too, as an observed race of the run).
	b := forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.Write("T1", "f", "f1")
	b.Read("T2", "f", "f2")
	b.Read("T2", "x", "r2")
	expect(t, b.Trace(), []string{"f1-f2"}, []string{"f1-f2"})
}

func TestNoRaceReadMayNotSeeALaterWriteOfAnotherValue(t *testing.T) {
	// r2 saw 1; moving it before w1 would show 0 (the initial value,
	// known from r0).
	b := forked("T1", "T2")
	b.ReadV("M", "f", 0, "r0")
	b.WriteV("T1", "x", 5, "w1")
	b.WriteV("T1", "f", 1, "f1")
	b.ReadV("T2", "f", 1, "f2")
	b.WriteV("T2", "x", 6, "w2")
	// (M's read of f races with T1's write; x does not race.)
	expect(t, b.Trace(), []string{"f1-f2", "f1-r0"}, []string{"f1-f2", "f1-r0"})
}

func TestRaceReadMaySeeAnotherWriteOfTheSameValue(t *testing.T) {
	// f2 saw 1, which T3 also writes: T1's write of x need not come first.
	b := forked("T1", "T2", "T3")
	b.WriteV("T3", "f", 1, "f3")
	b.WriteV("T1", "x", 5, "w1")
	b.WriteV("T1", "f", 1, "f1")
	b.ReadV("T2", "f", 1, "f2")
	b.WriteV("T2", "x", 6, "w2")
	expect(t, b.Trace(), []string{"f1-f2", "f1-f3", "f2-f3", "w1-w2"}, []string{"f1-f2", "f1-f3", "f2-f3", "w1-w2"})
}

func TestNoRaceCommonLock(t *testing.T) {
	b := forked("T1", "T2")
	b.Acq("T1", "l")
	b.Write("T1", "x", "w1")
	b.Rel("T1", "l")
	b.Acq("T2", "l")
	b.Write("T2", "x", "w2")
	b.Rel("T2", "l")
	expect(t, b.Trace(), nil, nil)
}

func TestRaceReadModeSectionsOverlap(t *testing.T) {
	b := forked("T1", "T2")
	b.RAcq("T1", "l")
	b.Write("T1", "x", "w1")
	b.RRel("T1", "l")
	b.RAcq("T2", "l")
	b.Read("T2", "x", "r2")
	b.RRel("T2", "l")
	expect(t, b.Trace(), []string{"r2-w1"}, []string{"r2-w1"})
}

func TestNoRaceReadModeExcludesExclusive(t *testing.T) {
	b := forked("T1", "T2")
	b.Acq("T1", "l")
	b.Write("T1", "x", "w1")
	b.Rel("T1", "l")
	b.RAcq("T2", "l")
	b.Read("T2", "x", "r2")
	b.RRel("T2", "l")
	expect(t, b.Trace(), nil, nil)
}

func TestNoRaceSndRcv(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.Snd("T1", "ch")
	b.Rcv("T2", "ch")
	b.Write("T2", "x", "w2")
	expect(t, b.Trace(), nil, nil)
}

func TestNoRaceForkJoin(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Write("M", "x", "w0")
	b.Fork("M", "T1", "")
	b.Write("T1", "x", "w1")
	b.End("T1")
	b.Join("M", "T1")
	b.Write("M", "x", "w2")
	expect(t, b.Trace(), nil, nil)
}

func TestNoRaceUntracedGoroutineStartsAfterEverything(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Write("M", "x", "w0")
	b.Write("U", "x", "w1") // U never forked: born in untraced code
	expect(t, b.Trace(), nil, nil)
}

func TestNoRaceAcrossAlloc(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.Alloc("T2", "x", 8)
	b.Write("T2", "x", "w2")
	expect(t, b.Trace(), nil, nil)
}

func TestNoRaceAtomicFlagByValue(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.Add(trace.Event{G: b.G("T1"), Op: trace.OpAtomicStore, Obj: b.Obj("a"), Value: 1})
	b.Add(trace.Event{G: b.G("T2"), Op: trace.OpAtomicLoad, Obj: b.Obj("a"), Value: 1})
	b.Write("T2", "x", "w2")
	expect(t, b.Trace(), nil, nil)
}

// TestBarrierPairFigure41 is thesis Figure 4.1: the calls synchronize
// through y, which both reach; hb and mcm see a race on x, rdit does not.
// With disjoint reachable sets, rdit finds the race.
func TestBarrierPairFigure41(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.Call("T1", "m1", "y")
	b.Ret("T1", "m1")
	b.Call("T2", "m2", "y")
	b.Ret("T2", "m2")
	b.Read("T2", "x", "r2")
	expect(t, b.Trace(), []string{"r2-w1"}, nil)

	b = forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.Call("T1", "m1", "y")
	b.Ret("T1", "m1")
	b.Call("T2", "m2", "z")
	b.Ret("T2", "m2")
	b.Read("T2", "x", "r2")
	expect(t, b.Trace(), []string{"r2-w1"}, []string{"r2-w1"})
}

// TestBarrierPairCaveats are thesis Figures 4.3-4.5: overlapping
// BarrierPairs, observed events between them, ordinary events on D, and
// transitivity over several BarrierPairs.
func TestBarrierPairCaveats(t *testing.T) {
	// Caveat 1/3: T3's access to x runs while T1's call on x is open; the
	// call may wait for it (a.end after d.begin).
	b := forked("T1", "T3")
	b.Call("T1", "a", "x")
	b.Write("T3", "x", "w3")
	b.Ret("T1", "a")
	b.Read("T1", "x", "r1")
	expect(t, b.Trace(), []string{"r1-w3"}, nil)

	// Caveat 4: c reaches y, f reaches y and z, e reaches z: c → f → e
	// orders T2's write before T3's read though c and e share nothing.
	b = forked("T2", "T3", "T4")
	b.Write("T2", "x", "w2")
	b.Call("T2", "c", "y")
	b.Ret("T2", "c")
	b.Call("T4", "f", "y", "z")
	b.Ret("T4", "f")
	b.Call("T3", "e", "z")
	b.Ret("T3", "e")
	b.Read("T3", "x", "r3")
	expect(t, b.Trace(), []string{"r3-w2"}, nil)

	// A call reaching a lock orders what the traced code does under it.
	b = forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.Call("T1", "unlockit", "l")
	b.Ret("T1", "unlockit")
	b.Acq("T2", "l")
	b.Read("T2", "x", "r2")
	b.Rel("T2", "l")
	expect(t, b.Trace(), []string{"r2-w1"}, nil)
}

func TestWindowCarriesLocksAndValues(t *testing.T) {
	// With windows of 4 (overlap 2), the lock held across the window cut
	// and the value of f from before it still apply.
	b := forked("T1", "T2")
	b.WriteV("T1", "f", 0, "f0")
	b.Acq("T1", "l")
	b.Write("T1", "x", "w1")
	b.Write("T1", "z", "z1")
	b.Write("T1", "z", "z1b")
	b.Rel("T1", "l")
	b.Acq("T2", "l")
	b.Write("T2", "x", "w2")
	b.Rel("T2", "l")
	tr := b.Trace()
	d := NewMCM(nil, Options{Window: 4, Overlap: 2, Conflicts: -1})
	if got := runDetector(tr, d); len(got) != 0 {
		t.Errorf("windowed: %v", label(tr, got))
	}
}

func TestWitnessIsJSONAndChecked(t *testing.T) {
	b := forked("T1", "T2")
	b.WriteV("T1", "x", 1, "w1")
	b.Acq("T1", "l")
	b.Rel("T1", "l")
	b.Acq("T2", "l")
	b.Rel("T2", "l")
	b.WriteV("T2", "x", 2, "w2")
	tr := b.Trace()
	d := NewMCM(finding.NewCollector(), whole())
	runDetector(tr, d)
	ws := d.Witnesses()
	if len(ws) != 1 {
		t.Fatalf("%d witnesses", len(ws))
	}
	w := ws[0]
	if err := CheckWitness(tr, &w); err != nil {
		t.Fatal(err)
	}
	// Breaking it: drop a step of T2 (its acquire) so program order fails.
	bad := w
	bad.Steps = slices.Clone(w.Steps)
	for i, s := range bad.Steps {
		if s.Op == "acq" && s.G == b.G("T2") {
			bad.Steps = slices.Delete(bad.Steps, i, i+1)
			break
		}
	}
	if err := CheckWitness(tr, &bad); err == nil {
		t.Error("a witness skipping an event passed")
	}
}
