package hb_test

// Recycled clock IDs (detect/clock, "Recycled IDs") against one ID per
// goroutine, over random traces of many short-lived goroutines: the same
// races, and clocks narrower than the goroutines.

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/racekit/racekit/detect/clock"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/reference"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

var (
	hbNoRecycle = flavour{"hb", func(s finding.Sink) detector { return hb.NewNoRecycle(s) }}
	ftNoRecycle = flavour{"fasttrack", func(s finding.Sink) detector { return hb.NewFastTrackNoRecycle(s) }}
)

// reportKeys renders dynamic reports as comparable strings, in order.
func reportKeys(rs []finding.Race) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%#x %d/g%d/%v %d/g%d/%v", r.Addr, r.Prev.Seq, r.Prev.G, r.Prev.Site, r.Cur.Seq, r.Cur.G, r.Cur.Site)
	}
	return out
}

// TestRecycledIDsSameRaces checks on each churn trace that (a) hb with
// recycled IDs reports exactly the oracle's distinct site pairs, (b)
// fasttrack with recycled IDs makes exactly the dynamic reports it makes
// with one ID per goroutine (same accesses, goroutines and order, up to
// the order of the reports of one access), (c) every report of hb is a
// racing pair of the trace with the right goroutines, and (d) the traces
// recycle IDs at all, and their clocks are narrower than their goroutines.
func TestRecycledIDsSameRaces(t *testing.T) {
	var recycled, ids, gors, racy int64
	for seed := range uint64(seeds()) {
		tr := reference.Churn(seed, 100+int(seed%8)*100)
		oracle := reference.HBRaces(tr)
		h, h0 := run(t, hbFlavour, tr), run(t, hbNoRecycle, tr)
		f, f0 := run(t, ftFlavour, tr), run(t, ftNoRecycle, tr)

		want := reference.Pairs(tr, oracle)
		if got := h.c.Pairs(); !slices.Equal(got, want) {
			t.Fatalf("seed %d: hb pairs %v, reference %v\n%s", seed, labels(tr.M, got), labels(tr.M, want), dump(tr))
		}
		if got := h0.c.Pairs(); !slices.Equal(got, want) {
			t.Fatalf("seed %d: hb without recycling: pairs %v, reference %v", seed, labels(tr.M, got), labels(tr.M, want))
		}
		got, base := reportKeys(f.races), reportKeys(f0.races)
		slices.Sort(got)
		slices.Sort(base)
		if !slices.Equal(got, base) {
			t.Fatalf("seed %d: fasttrack reports\n%v\nwithout recycling\n%v\n%s", seed, got, base, dump(tr))
		}
		real := map[[2]uint64]bool{}
		for _, x := range oracle {
			real[[2]uint64{uint64(x.A), uint64(x.B)}] = true
		}
		for _, x := range append(h.races, f.races...) {
			if !real[[2]uint64{x.Prev.Seq, x.Cur.Seq}] || x.Prev != access(tr, int(x.Prev.Seq)) || x.Cur != access(tr, int(x.Cur.Seq)) {
				t.Fatalf("seed %d: %s reported %+v, not a race of the trace\n%s", seed, x.Detector, x, dump(tr))
			}
		}
		for _, r := range []result{h, f} {
			if r.stats["illformed"] != 0 {
				t.Fatalf("seed %d: %d ill-formed events", seed, r.stats["illformed"])
			}
		}
		recycled += f.stats["ids_recycled"]
		ids += f.stats["clock_ids"]
		gors += f.stats["goroutines"]
		if len(want) > 0 {
			racy++
		}
	}
	if recycled == 0 || ids*2 > gors || racy == 0 || racy == int64(seeds()) {
		t.Fatalf("%d IDs recycled, %d IDs for %d goroutines, %d racy traces: the generator should churn, race and not", recycled, ids, gors, racy)
	}
	t.Logf("%d goroutines on %d IDs (%d recycled); %d racy traces", gors, ids, recycled, racy)
}

// TestRecycledIDsNotWhenUnknown: a goroutine's ID goes to a later one only
// when the later one's parent knows the first one's last access; else the
// two would seem ordered, and their race would be lost.
func TestRecycledIDsNotWhenUnknown(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "A", "goA")
	b.Write("A", "x", "a")
	b.Snd("A", "o") // A publishes its write...
	b.End("A")
	b.Fork("M", "B", "goB") // ...which M does not know yet: B gets a fresh ID
	b.Write("B", "x", "b")  // races with A's write
	b.End("B")
	b.Rcv("M", "o") // now M knows A
	b.Fork("M", "C", "goC")
	b.Write("C", "x", "c") // after A's (A→o→M→C), races with B's
	tr := b.Trace()
	for _, f := range flavours {
		r := run(t, f, tr)
		if got, want := labels(tr.M, r.c.Pairs()), norm([]string{"a~b", "b~c"}); !slices.Equal(got, want) {
			t.Errorf("%s: pairs %v, want %v", f.name, got, want)
		}
		if r.stats["clock_ids"] != 3 || r.stats["ids_recycled"] != 1 {
			t.Errorf("%s: %d IDs, %d recycled; want C on A's: 3 IDs, 1 recycled", f.name, r.stats["clock_ids"], r.stats["ids_recycled"])
		}
		for _, x := range r.races {
			if want := access(tr, int(x.Prev.Seq)); x.Prev != want {
				t.Errorf("%s: previous access %+v, want %+v (the goroutine of its epoch)", f.name, x.Prev, want)
			}
		}
	}
}

// churnStream is the shape that made racekit test run out of memory on
// go-chi/chi's TestMuxContextIsThreadSafe: workers that each, per request,
// fork a short goroutine (which reads a captured word and publishes to a
// global object, as context.CancelFunc does), take a pooled object
// (acquire/release on the pool), write its fields, begin and complete a
// receive on a channel of their own, and read the global object; the
// goroutines number gors, the events about 12 per goroutine.
func churnStream(workers, gors int) []trace.Event {
	const (
		global = 0x8000_0000_0000_0007
		pool   = 0x10_0000
		fields = 0x20_0000
		chans  = 0x30_0000
		capt   = 0x40_0000
	)
	var evs []trace.Event
	add := func(g trace.GID, op trace.Op, obj uint64, site trace.SiteID) {
		evs = append(evs, trace.Event{Seq: uint64(len(evs)), G: g, Op: op, Obj: obj, Site: site, Flags: trace.FlagValueUnknown})
	}
	add(0, trace.OpBegin, 0, 0)
	for w := trace.GID(1); w <= trace.GID(workers); w++ {
		add(0, trace.OpFork, uint64(w), 1)
	}
	next := trace.GID(workers + 1)
	var pending []trace.GID // forked, not run yet
	for i := 0; int(next) <= gors; i++ {
		w := trace.GID(1 + i%workers)
		add(w, trace.OpSyncRelease, global, 2) // WithCancel
		add(w, trace.OpFork, uint64(next), 3)
		pending = append(pending, next)
		next++
		add(w, trace.OpSyncAcquire, pool, 4)
		add(w, trace.OpWrite, fields+8*uint64(i%64), 5)
		add(w, trace.OpSyncRelease, pool, 6)
		add(w, trace.OpSyncRelease, chans+16*uint64(i)+1, 7) // a fresh channel per request
		add(w, trace.OpSyncAcquire, global, 8)
		if len(pending) > workers { // the oldest child runs, late
			c := pending[0]
			pending = pending[1:]
			add(c, trace.OpRead, capt+8*uint64(c), 9)
			add(c, trace.OpSyncRelease, global, 10)
			add(c, trace.OpEnd, 0, 0)
		}
	}
	return evs
}

// heldBy returns the heap a fresh detector holds after the events, and its
// counters.
func heldBy(f flavour, evs []trace.Event) (uint64, map[string]int64) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	d := f.make(nil)
	for i := range evs {
		d.Handle(&evs[i])
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	st := d.Stats()
	runtime.KeepAlive(d)
	if m1.HeapAlloc < m0.HeapAlloc {
		return 0, st
	}
	return m1.HeapAlloc - m0.HeapAlloc, st
}

// TestChurnClocksBounded: with recycled IDs the clocks of churnStream stay
// as wide as the goroutines alive and not yet known to be done, whatever
// the goroutines in all; with one ID each they are as wide as all of them.
func TestChurnClocksBounded(t *testing.T) {
	const workers = 50
	for _, f := range flavours {
		var ids []int64
		for _, gors := range []int{2000, 8000} {
			_, st := heldBy(f, churnStream(workers, gors))
			ids = append(ids, st["clock_ids"])
			if st["goroutines"] != int64(gors)+1 || st["races"] != 0 {
				t.Fatalf("%s: %d goroutines, %d races; want %d, 0", f.name, st["goroutines"], st["races"], gors+1)
			}
		}
		if ids[0] > 4*workers || ids[1] != ids[0] {
			t.Errorf("%s: clocks %d wide for 2000 goroutines, %d for 8000; want the same, at most %d", f.name, ids[0], ids[1], 4*workers)
		}
	}
	_, st := heldBy(ftNoRecycle, churnStream(workers, 2000))
	if st["clock_ids"] != 2001 {
		t.Errorf("fasttrack with one ID per goroutine: clocks %d wide, want 2001", st["clock_ids"])
	}
}

// BenchmarkChurn feeds churnStream to fasttrack and hb with recycled IDs
// and, as the baseline in the same run, with one ID per goroutine
// (one-id-each); it reports events/s, the heap the detector holds after
// the stream (bytes-held, measured once, outside the timed loop), its
// clock width (ids) and the goroutines.
func BenchmarkChurn(b *testing.B) {
	fs := []struct {
		name string
		f    flavour
	}{
		{"fasttrack", ftFlavour}, {"fasttrack/one-id-each", ftNoRecycle},
		{"hb", hbFlavour}, {"hb/one-id-each", hbNoRecycle},
	}
	for _, gors := range []int{2000, 8000} {
		evs := churnStream(100, gors)
		for _, x := range fs {
			b.Run(fmt.Sprintf("%s/gors=%d", x.name, gors), func(b *testing.B) {
				held, st := heldBy(x.f, evs)
				for b.Loop() {
					d := x.f.make(nil)
					for i := range evs {
						d.Handle(&evs[i])
					}
				}
				b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
				b.ReportMetric(float64(held), "bytes-held")
				b.ReportMetric(float64(st["clock_ids"]), "ids")
			})
		}
	}
}

// TestRecycledIDsIllFormedNoPanic feeds random event streams (forks of
// goroutines that ended, events after End, joins of anyone, all ops) to
// the recycling detectors: they must not panic.
func TestRecycledIDsIllFormedNoPanic(t *testing.T) {
	ops := []trace.Op{trace.OpRead, trace.OpWrite, trace.OpAcquire, trace.OpRelease, trace.OpFork, trace.OpJoin,
		trace.OpBegin, trace.OpEnd, trace.OpSyncRelease, trace.OpSyncAcquire, trace.OpAtomicRMW, trace.OpAlloc}
	for seed := range uint64(seeds()) {
		r := rand.New(rand.NewPCG(seed, 7))
		evs := make([]trace.Event, 400)
		for i := range evs {
			e := trace.Event{Seq: uint64(i), G: trace.GID(r.IntN(12)), Op: ops[r.IntN(len(ops))], Obj: uint64(r.IntN(6)) * 8, Site: trace.SiteID(r.IntN(5)), Flags: trace.FlagValueUnknown}
			if e.Op == trace.OpFork || e.Op == trace.OpJoin {
				e.Obj = uint64(r.IntN(14))
			}
			if e.Op == trace.OpAlloc {
				e.Value = 8
			}
			evs[i] = e
		}
		for _, f := range flavours {
			d := f.make(finding.SinkFunc(func(*finding.Race) {}))
			for i := range evs {
				d.Handle(&evs[i])
			}
		}
	}
}

// boundedChurn runs hb and fasttrack over the churn traces with the clock
// width bounded at width (clock.SetMaxIDs), so that IDs are recycled
// without order and lent by alive goroutines, and fails t at a report
// that is not a race of the trace (the oracle's), at a previous access
// whose goroutine is named wrong (clock.Tracker.GIDAt across lent IDs), at
// clocks wider than the bound or at ill-formed events. It returns
// fasttrack's counters summed over the traces, and the site pairs hb
// found and the oracle has.
func boundedChurn(t *testing.T, width int) (sum map[string]int64, found, oracleN int64) {
	defer clock.SetMaxIDs(width)()
	sum = map[string]int64{}
	for seed := range uint64(seeds()) {
		tr := reference.Churn(seed, 100+int(seed%8)*100)
		oracle := reference.HBRaces(tr)
		real := map[[2]uint64]bool{}
		for _, x := range oracle {
			real[[2]uint64{uint64(x.A), uint64(x.B)}] = true
		}
		h, f := run(t, hbFlavour, tr), run(t, ftFlavour, tr)
		for _, x := range append(h.races, f.races...) {
			if !real[[2]uint64{x.Prev.Seq, x.Cur.Seq}] {
				t.Fatalf("seed %d: %s reported %+v, not a race of the trace\n%s", seed, x.Detector, x, dump(tr))
			}
			if want := access(tr, int(x.Prev.Seq)); x.Prev != want {
				t.Fatalf("seed %d: %s: previous access %+v, want %+v (the goroutine of its epoch)\n%s", seed, x.Detector, x.Prev, want, dump(tr))
			}
		}
		for _, r := range []result{h, f} {
			if r.stats["clock_ids"] > int64(width) || r.stats["illformed"] != 0 {
				t.Fatalf("seed %d: %d clock IDs (bound %d), %d ill-formed events", seed, r.stats["clock_ids"], width, r.stats["illformed"])
			}
		}
		for k, v := range f.stats {
			sum[k] += v
		}
		found += int64(len(h.c.Pairs()))
		oracleN += int64(len(reference.Pairs(tr, oracle)))
	}
	return sum, found, oracleN
}

// TestRecycledIDsForcedNoFalseRace: with the clock width bounded far below
// the goroutines that end unordered, IDs are recycled without order; every
// race hb and fasttrack report is still a race of the trace, and some
// recycling is forced. Races may be lost that way, never invented.
func TestRecycledIDsForcedNoFalseRace(t *testing.T) {
	sum, _, _ := boundedChurn(t, 4)
	if sum["ids_recycled_unordered"] == 0 {
		t.Fatalf("no ID recycled without order over %d goroutines on %d IDs: the bound was never reached", sum["goroutines"], sum["clock_ids"])
	}
	t.Logf("%d goroutines on %d IDs, %d recycled without order", sum["goroutines"], sum["clock_ids"], sum["ids_recycled_unordered"])
}

// TestPreemptedIDsNoFalseRace: with the clock width bounded below the
// goroutines alive at once, alive goroutines lend their ID to new ones and
// take another at their next event; every race hb and fasttrack report is
// still a race of the trace, with the previous access's goroutine named
// right, and some races are still found.
func TestPreemptedIDsNoFalseRace(t *testing.T) {
	const width = 3
	sum, found, oracleN := boundedChurn(t, width)
	if sum["ids_preempted"] == 0 || found == 0 {
		t.Fatalf("%d IDs lent by alive goroutines, %d site pairs found: the generator should keep more than %d goroutines alive, and race", sum["ids_preempted"], found, width)
	}
	t.Logf("%d IDs lent by alive goroutines; hb found %d of the oracle's %d site pairs", sum["ids_preempted"], found, oracleN)
}

// TestPreemptedIDKeepsOwnOrder: A lends its ID to B (the clocks are two
// entries wide) and writes again on another: A's two writes stay ordered
// (no race of A with itself), A's later write races with B's, and a
// goroutine that acquires A's lock after it is ordered after both of A's.
// The documented loss: B's write seems ordered after A's first one.
func TestPreemptedIDKeepsOwnOrder(t *testing.T) {
	defer clock.SetMaxIDs(2)()
	b := trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "A", "goA")
	b.Write("A", "x", "a1")
	b.Fork("M", "B", "goB") // two IDs taken: B takes A's, A is alive
	b.Write("B", "x", "b")
	b.Write("A", "x", "a2") // A attaches again, on M's ID
	b.Acq("A", "l")
	b.Write("A", "y", "a3")
	b.Rel("A", "l")
	b.Fork("M", "C", "goC")
	b.Acq("C", "l")
	b.Write("C", "y", "c")
	b.Rel("C", "l")
	tr := b.Trace()
	for _, f := range flavours {
		r := run(t, f, tr)
		if got, want := labels(tr.M, r.c.Pairs()), norm([]string{"a2~b"}); !slices.Equal(got, want) {
			t.Errorf("%s: pairs %v, want %v", f.name, got, want)
		}
		if r.stats["clock_ids"] != 2 || r.stats["ids_preempted"] == 0 || r.stats["illformed"] != 0 {
			t.Errorf("%s: %d IDs, %d lent by alive goroutines, %d ill-formed: want 2 IDs, some lent, none ill-formed", f.name, r.stats["clock_ids"], r.stats["ids_preempted"], r.stats["illformed"])
		}
		for _, x := range r.races {
			if want := access(tr, int(x.Prev.Seq)); x.Prev != want {
				t.Errorf("%s: previous access %+v, want %+v", f.name, x.Prev, want)
			}
		}
	}
}

// TestPreemptedIDsRacesStillFound: 1,500 goroutines alive at once
// (past maxIDs: IDs are lent), each writing one shared word after reading
// its own, unsynchronized: hb and fasttrack still report the shared
// word's races, each with the goroutines and sites of the trace, and none
// on the private words.
func TestPreemptedIDsRacesStillFound(t *testing.T) {
	const n = 1500
	b := trace.NewBuilder()
	b.Begin("M")
	for i := range n {
		b.Fork("M", fmt.Sprintf("g%d", i), "go")
	}
	for i := range n {
		g := fmt.Sprintf("g%d", i)
		b.Read(g, "own"+g, "r")
		b.Write(g, "x", "w")
	}
	tr := b.Trace()
	for _, f := range flavours {
		r := run(t, f, tr)
		if r.stats["ids_preempted"] == 0 || r.stats["clock_ids"] > int64(clock.MaxIDs()) {
			t.Fatalf("%s: %d IDs lent, %d IDs: want some lent, at most %d", f.name, r.stats["ids_preempted"], r.stats["clock_ids"], clock.MaxIDs())
		}
		if got := labels(tr.M, r.c.Pairs()); !slices.Equal(got, []string{"w~w"}) {
			t.Errorf("%s: pairs %v, want [w~w]", f.name, got)
		}
		if len(r.races) < n/2 {
			t.Errorf("%s: %d dynamic reports of %d unordered writes", f.name, len(r.races), n)
		}
		for _, x := range r.races {
			if x.Prev != access(tr, int(x.Prev.Seq)) || x.Cur != access(tr, int(x.Cur.Seq)) || x.Prev.G == x.Cur.G {
				t.Fatalf("%s: report %+v does not match the trace", f.name, x)
			}
		}
	}
}
