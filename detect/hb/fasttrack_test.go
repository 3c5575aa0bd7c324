package hb_test

// FastTrack's rules (Flanagan and Freund, PLDI'09, Section 3), one trace
// per rule path. Where a rule's only observable is which path was taken,
// the Stats counter says so; hb runs on every trace too, as the reference
// for the race set.

import (
	"testing"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// rules lists the FastTrack rule counters, to compare them all at once.
var rules = []string{
	"read_same_epoch", "read_shared_same_epoch", "read_exclusive", "read_share", "read_shared",
	"write_same_epoch", "write_exclusive", "write_shared",
}

func checkRules(t *testing.T, ft result, want map[string]int64) {
	t.Helper()
	for _, k := range rules {
		if ft.stats[k] != want[k] {
			t.Errorf("%s = %d, want %d", k, ft.stats[k], want[k])
		}
	}
}

func TestNoRaceReadSameEpoch(t *testing.T) {
	b := trace.NewBuilder()
	b.Read("M", "x", "a")
	b.Read("M", "x", "b") // same epoch of M: nothing to check
	_, ft := expect(t, b.Trace())
	checkRules(t, ft, map[string]int64{"read_exclusive": 1, "read_same_epoch": 1})
}

func TestNoRaceReadExclusive(t *testing.T) {
	// The first read takes R_x from ⊥e; after a release M is in a new
	// epoch, and its own earlier read is ordered before it.
	b := trace.NewBuilder()
	b.Read("M", "x", "a")
	b.Acq("M", "L")
	b.Rel("M", "L")
	b.Read("M", "x", "b")
	_, ft := expect(t, b.Trace())
	checkRules(t, ft, map[string]int64{"read_exclusive": 2})
}

func TestNoRaceReadExclusiveHandedOver(t *testing.T) {
	// T2's read is ordered after T1's through the lock: R_x stays an epoch.
	b := forked("T1", "T2")
	b.Acq("T1", "L")
	b.Read("T1", "x", "a")
	b.Rel("T1", "L")
	b.Acq("T2", "L")
	b.Read("T2", "x", "b")
	b.Rel("T2", "L")
	_, ft := expect(t, b.Trace())
	checkRules(t, ft, map[string]int64{"read_exclusive": 2})
}

func TestNoRaceReadShare(t *testing.T) {
	// Two concurrent reads: R_x becomes a vector clock (a promotion).
	b := forked("T1", "T2")
	b.Read("T1", "x", "a")
	b.Read("T2", "x", "b")
	_, ft := expect(t, b.Trace())
	checkRules(t, ft, map[string]int64{"read_exclusive": 1, "read_share": 1})
	if ft.stats["read_shared_live"] != 1 {
		t.Errorf("read_shared_live = %d, want 1", ft.stats["read_shared_live"])
	}
}

func TestNoRaceReadSharedSameEpoch(t *testing.T) {
	b := forked("T1", "T2")
	b.Read("T1", "x", "a")
	b.Read("T2", "x", "b")
	b.Read("T2", "x", "c") // R_x(T2) is T2's current clock
	b.Read("T1", "x", "d")
	_, ft := expect(t, b.Trace())
	checkRules(t, ft, map[string]int64{"read_exclusive": 1, "read_share": 1, "read_shared_same_epoch": 2})
}

func TestNoRaceReadShared(t *testing.T) {
	b := forked("T1", "T2", "T3")
	b.Read("T1", "x", "a")
	b.Read("T2", "x", "b")
	b.Read("T3", "x", "c") // a third reader joins the clock
	b.Acq("T1", "L")
	b.Rel("T1", "L")
	b.Read("T1", "x", "d") // and T1 again, in a new epoch
	_, ft := expect(t, b.Trace())
	checkRules(t, ft, map[string]int64{"read_exclusive": 1, "read_share": 1, "read_shared": 2})
}

func TestNoRaceWriteSameEpoch(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("M", "x", "a")
	b.Write("M", "x", "b")
	_, ft := expect(t, b.Trace())
	checkRules(t, ft, map[string]int64{"write_exclusive": 1, "write_same_epoch": 1})
}

func TestNoRaceWriteExclusive(t *testing.T) {
	b := forked("T1", "T2")
	b.Read("T1", "x", "a")
	b.Write("T1", "x", "b")
	b.Snd("T1", "c")
	b.Rcv("T2", "c")
	b.Write("T2", "x", "c")
	_, ft := expect(t, b.Trace())
	checkRules(t, ft, map[string]int64{"read_exclusive": 1, "write_exclusive": 2})
}

func TestNoRaceWriteShared(t *testing.T) {
	// M joins both readers, then writes: every read is ordered before the
	// write, and R_x goes back to an epoch (⊥e), so M's next read is
	// exclusive again.
	b := forked("T1", "T2")
	b.Read("T1", "x", "a")
	b.Read("T2", "x", "b")
	b.Join("M", "T1")
	b.Join("M", "T2")
	b.Write("M", "x", "c")
	b.Read("M", "x", "d")
	_, ft := expect(t, b.Trace())
	checkRules(t, ft, map[string]int64{"read_exclusive": 2, "read_share": 1, "write_exclusive": 0, "write_shared": 1})
	if ft.stats["read_shared_live"] != 0 {
		t.Errorf("read_shared_live = %d, want 0: WRITE SHARED frees R_x's clock", ft.stats["read_shared_live"])
	}
}

func TestRaceWriteRead(t *testing.T) {
	b := forked("T1", "T2")
	w := b.Write("T1", "x", "a")
	r := b.Read("T2", "x", "b")
	tr := b.Trace()
	h, ft := expect(t, tr, "a~b")
	checkOnly(t, "hb", h, tr, w, r)
	checkOnly(t, "fasttrack", ft, tr, w, r)
}

func TestRaceWriteWrite(t *testing.T) {
	b := forked("T1", "T2")
	w1 := b.Write("T1", "x", "a")
	w2 := b.Write("T2", "x", "b")
	tr := b.Trace()
	_, ft := expect(t, tr, "a~b")
	checkOnly(t, "fasttrack", ft, tr, w1, w2)
	checkRules(t, ft, map[string]int64{"write_exclusive": 2})
}

func TestRaceReadWriteExclusive(t *testing.T) {
	b := forked("T1", "T2")
	r := b.Read("T1", "x", "a")
	w := b.Write("T2", "x", "b")
	tr := b.Trace()
	_, ft := expect(t, tr, "a~b")
	checkOnly(t, "fasttrack", ft, tr, r, w)
}

func TestRaceReadWriteShared(t *testing.T) {
	// The write is checked against the whole read clock: it races with
	// T2's read but not T1's, which reached M by a join.
	b := forked("T1", "T2")
	b.Read("T1", "x", "a")
	r2 := b.Read("T2", "x", "b")
	b.Join("M", "T1")
	w := b.Write("M", "x", "c")
	tr := b.Trace()
	_, ft := expect(t, tr, "b~c")
	checkOnly(t, "fasttrack", ft, tr, r2, w)
	checkRules(t, ft, map[string]int64{"read_exclusive": 1, "read_share": 1, "write_shared": 1})
}

func TestRaceReadWriteSharedEveryReader(t *testing.T) {
	b := forked("T1", "T2", "T3")
	r1 := b.Read("T1", "x", "a")
	r2 := b.Read("T2", "x", "b")
	w := b.Write("T3", "x", "c")
	tr := b.Trace()
	_, ft := expect(t, tr, "a~c", "b~c")
	want := []finding.Race{
		{Detector: "fasttrack", Evidence: finding.Observed, Addr: tr.Events[w].Obj, Prev: access(tr, r1), Cur: access(tr, w)},
		{Detector: "fasttrack", Evidence: finding.Observed, Addr: tr.Events[w].Obj, Prev: access(tr, r2), Cur: access(tr, w)},
	}
	if len(ft.races) != 2 || ft.races[0] != want[0] || ft.races[1] != want[1] {
		t.Errorf("fasttrack races %+v, want %+v", ft.races, want)
	}
}

func TestRaceReadSameEpochKeepsFirstSite(t *testing.T) {
	// FastTrack skips M's second read (same epoch), so it names only the
	// first; hb keeps one entry per site and names both.
	b := forked("T1")
	b.Read("M", "x", "a")
	b.Read("M", "x", "b")
	b.Write("T1", "x", "c")
	expectEach(t, b.Trace(), []string{"a~c", "b~c"}, []string{"a~c"})
}

func TestRaceFastTrackReportsFirstRaceOnly(t *testing.T) {
	// After the first race on x FastTrack keeps only the last write: the
	// third write races with both earlier ones, but only the second is in
	// W_x. hb reports every pair.
	b := forked("T1", "T2", "T3")
	b.Write("T1", "x", "a")
	b.Write("T2", "x", "b")
	b.Write("T3", "x", "c")
	expectEach(t, b.Trace(), []string{"a~b", "a~c", "b~c"}, []string{"a~b", "b~c"})
}
