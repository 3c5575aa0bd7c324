package reference

import (
	"reflect"
	"testing"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

func pairs(b *trace.Builder, labels ...[2]string) []finding.Pair {
	var ps []finding.Pair
	for _, l := range labels {
		ps = append(ps, finding.MakePair(b.Site(l[0]), b.Site(l[1])))
	}
	finding.SortPairs(ps)
	return ps
}

func check(t *testing.T, name string, got, want []finding.Pair) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %v, want %v", name, got, want)
	}
}

// RaceFuzzer (PLDI'08) Figure 1, thread1 run first. Happens-before sees only
// the race on z (5,7); hybrid also flags x (1,10), which the lock on y
// orders in every execution.
func TestRaceFuzzerFigure1(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "f1")
	b.Fork("main", "T2", "f2")
	b.Write("T1", "x", "1")
	b.Acq("T1", "L")
	b.Write("T1", "y", "3")
	b.Rel("T1", "L")
	b.Read("T1", "z", "5")
	b.Write("T2", "z", "7")
	b.Acq("T2", "L")
	b.Read("T2", "y", "9")
	b.Read("T2", "x", "10")
	b.Rel("T2", "L")
	tr := b.Trace()
	check(t, "hb", HBPairs(tr), pairs(b, [2]string{"5", "7"}))
	check(t, "hybrid", HybridPairs(tr), pairs(b, [2]string{"5", "7"}, [2]string{"1", "10"}))
	check(t, "lockset", LocksetPairs(tr), pairs(b, [2]string{"5", "7"}, [2]string{"1", "10"}))
}

func TestNoRaceForkJoinSndRcvAtomic(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("main", "x", "init")
	b.Fork("main", "T1", "go")
	b.Write("T1", "x", "child")
	b.Snd("T1", "ch")
	b.Rcv("main", "ch")
	b.Write("main", "x", "afterRcv")
	b.AStore("main", "flag")
	b.Fork("main", "T2", "go2")
	b.ALoad("T2", "flag")
	b.Join("main", "T1")
	b.Read("main", "x", "afterJoin")
	tr := b.Trace()
	check(t, "hb", HBPairs(tr), nil)
	check(t, "hybrid", HybridPairs(tr), nil)
	// Lockset ignores every edge here: all three writes pair up.
	if got := len(LocksetPairs(tr)); got == 0 {
		t.Errorf("lockset should flag the unlocked writes, got none")
	}
}

// A read-mode release orders only later exclusive acquires: two readers
// under RLock do not synchronize, so a write under RLock races.
func TestRaceWriteUnderReadLock(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "")
	b.Fork("main", "T2", "")
	b.RAcq("T1", "L")
	b.Write("T1", "m", "w")
	b.RRel("T1", "L")
	b.RAcq("T2", "L")
	b.Read("T2", "m", "r")
	b.RRel("T2", "L")
	b.Acq("T2", "L")
	b.Read("T2", "m", "r2")
	b.Rel("T2", "L")
	tr := b.Trace()
	// r2 is ordered after w through RUnlock→Lock; r is not.
	check(t, "hb", HBPairs(tr), pairs(b, [2]string{"w", "r"}))
	check(t, "lockset", LocksetPairs(tr), pairs(b, [2]string{"w", "r"}))
}

// A goroutine first seen without a fork starts after everything observed.
func TestNoRaceUntracedGoroutine(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("main", "x", "a")
	b.Read("worker", "x", "b")
	check(t, "hb", HBPairs(b.Trace()), nil)
}

func TestRaceUnorderedSiblings(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "")
	b.Fork("main", "T2", "")
	b.Write("T1", "x", "a")
	b.Acq("T1", "L")
	b.Rel("T1", "L")
	b.Acq("T2", "L")
	b.Rel("T2", "L")
	b.Write("T2", "x", "b")
	tr := b.Trace()
	// The lock orders a before b under hb; hybrid ignores lock edges.
	check(t, "hb", HBPairs(tr), nil)
	check(t, "hybrid", HybridPairs(tr), pairs(b, [2]string{"a", "b"}))
}
