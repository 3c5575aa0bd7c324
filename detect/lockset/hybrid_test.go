package lockset

import (
	"testing"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// Two siblings write x with no lock and nothing ordering them.
func TestRaceHybridConcurrentNoCommonLock(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.Write("T1", "x", "a")
	b.Write("T2", "x", "b")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"a", "b"}))
	g := c.Groups()[0]
	if g.Detector != HybridName || g.Evidence != finding.Potential || g.Addr != b.Obj("x") ||
		g.Prev.G != b.G("T1") || g.Cur.G != b.G("T2") || g.Prev.Seq >= g.Cur.Seq {
		t.Errorf("finding = %+v, want a potential hybrid race on x, T1 then T2", g.Race)
	}
}

// Two concurrent reads never race.
func TestNoRaceHybridReadsOnly(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.Read("T1", "x", "a")
	b.Read("T2", "x", "b")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b))
}

// A common lock held at both accesses protects them.
func TestNoRaceHybridCommonLock(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.Acq("T1", "L")
	b.Acq("T1", "M")
	b.Write("T1", "x", "a")
	b.Rel("T1", "M")
	b.Rel("T1", "L")
	b.Acq("T2", "N")
	b.Acq("T2", "L")
	b.Write("T2", "x", "b")
	b.Rel("T2", "L")
	b.Rel("T2", "N")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b))
}

// A write under RLock and a read under RLock share L only in read mode:
// readers do not exclude each other, so nothing protects the pair.
func TestRaceHybridReadLocksDoNotProtectWrite(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.RAcq("T1", "L")
	b.Write("T1", "x", "w")
	b.RRel("T1", "L")
	b.RAcq("T2", "L")
	b.Read("T2", "x", "r")
	b.RRel("T2", "L")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"w", "r"}))
}

// A read under RLock(L) and a write under Lock(L) are protected by L.
func TestNoRaceHybridReadUnderRLockWriteUnderLock(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.RAcq("T1", "L")
	b.Read("T1", "x", "r")
	b.RRel("T1", "L")
	b.Acq("T2", "L")
	b.Write("T2", "x", "w")
	b.Rel("T2", "L")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b))
}

// A fork orders the parent's earlier accesses before the child's.
func TestNoRaceHybridForkOrders(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("main", "x", "parent")
	b.Fork("main", "T1", "go1")
	b.Write("T1", "x", "child")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b))
}

// Without the fork edge the parent's access after the fork races.
func TestRaceHybridParentAfterFork(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Write("main", "x", "parent")
	b.Write("T1", "x", "child")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"parent", "child"}))
}

// A join orders the child's accesses before the parent's later ones.
func TestNoRaceHybridJoinOrders(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Write("T1", "x", "child")
	b.End("T1")
	b.Join("main", "T1")
	b.Write("main", "x", "parent")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b))
}

// A send orders the sender's earlier accesses before the receiver's later
// ones (a channel hand-off; Eraser's known false alarm).
func TestNoRaceHybridSndRcvOrders(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Write("main", "x", "produce")
	b.Snd("main", "ch")
	b.Rcv("T1", "ch")
	b.Write("T1", "x", "consume")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b))
}

// A receive is not ordered after a send that comes later in the trace.
func TestRaceHybridRcvBeforeSnd(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Rcv("T1", "ch")
	b.Write("T1", "x", "consume")
	b.Write("main", "x", "produce")
	b.Snd("main", "ch")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"consume", "produce"}))
}

// An atomic store releases and a later atomic load (or read-modify-write)
// of the same word acquires.
func TestNoRaceHybridAtomicOrders(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.Write("main", "x", "m")
	b.AStore("main", "flag")
	b.ALoad("T1", "flag")
	b.Write("T1", "x", "t1")
	b.ARMW("T1", "flag")
	b.ARMW("T2", "flag")
	b.Write("T2", "x", "t2")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b))
}

// An atomic load orders nothing by itself: two loads are no edge.
func TestRaceHybridAtomicLoadsDoNotOrder(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Write("main", "x", "m")
	b.ALoad("main", "flag")
	b.ALoad("T1", "flag")
	b.Write("T1", "x", "t1")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"m", "t1"}))
}

// Lock release/acquire is NOT a hybrid edge: the writes are ordered through
// L in this run (hb reports nothing) but neither holds L at its access, so
// hybrid reports the pair, predicting the schedule where T2 goes first.
func TestRaceHybridLockOnlyOrderingIsNotAnEdge(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.Write("T1", "x", "a")
	b.Acq("T1", "L")
	b.Rel("T1", "L")
	b.Acq("T2", "L")
	b.Rel("T2", "L")
	b.Write("T2", "x", "b")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"a", "b"}))
}

// A goroutine first seen without a fork was born in untraced code: it is
// ordered after everything observed before it, not after what follows.
func TestRaceHybridUntracedGoroutineAfterPriorEventsOnly(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("main", "x", "before")
	b.Begin("worker")
	b.Write("main", "x", "after")
	b.Read("worker", "x", "r")
	d, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"after", "r"}))
	wantStat(t, d, "untraced", 2) // main and worker
	wantStat(t, d, "illformed", 0)
}

// Every distinct site pair is reported, not only the first race on x.
func TestRaceHybridEveryDistinctPair(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.Fork("main", "T3", "go3")
	b.Write("T1", "x", "a")
	b.Write("T1", "x", "b")
	b.Read("T2", "x", "c")
	b.Read("T3", "x", "d")
	b.Write("T3", "x", "e")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b,
		[2]string{"a", "c"}, [2]string{"b", "c"},
		[2]string{"a", "d"}, [2]string{"b", "d"},
		[2]string{"a", "e"}, [2]string{"b", "e"}, [2]string{"c", "e"}))
}

// The latest access of a key stands for the earlier ones: T1's first write
// at a is ordered before T2's read by the message, its second is not.
func TestRaceHybridLatestEpochOfSite(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.Write("T1", "x", "a")
	b.Snd("T1", "ch")
	b.Write("T1", "x", "a")
	b.Rcv("T2", "ch")
	b.Read("T2", "x", "r")
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"a", "r"}))
	if g := c.Groups()[0]; g.Prev.Seq != 4 {
		t.Errorf("prev seq = %d, want 4 (the second write at a)", g.Prev.Seq)
	}
}

// The lockset is part of the key: T1's later write at a holds L and is
// protected, but its earlier unlocked write at the same site still races
// with T2's read under L.
func TestRaceHybridKeepsEntryPerLockset(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.Write("T1", "x", "a")
	b.Acq("T1", "L")
	b.Write("T1", "x", "a")
	b.Rel("T1", "L")
	b.Acq("T2", "L")
	b.Read("T2", "x", "r")
	b.Rel("T2", "L")
	d, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"a", "r"}))
	wantStat(t, d, "entries", 3)
}

// Ill-formed events are counted and tolerated. The release of a lock main
// does not hold leaves T1's lock in place (T1 still holds L at its write);
// the join of a never-seen goroutine joins ⊥; a second fork re-applies the
// fork edge. T1's write and main's write after all that are unordered and
// share no lock. A huge GID is one more goroutine: born untraced, after
// everything so far, its fork of another huge GID orders that child's read
// after both writes.
func TestRaceHybridIllFormedStreamCounted(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Acq("T1", "L")
	b.Rel("main", "L") // 1: not held by main
	b.Write("T1", "x", "a")
	b.Add(trace.Event{G: b.G("main"), Op: trace.OpJoin, Obj: 99}) // 2: never seen
	b.Fork("main", "T1", "go1")                                   // 3: second fork
	b.Acq("main", "M")
	b.Acq("main", "M") // 4: nested
	b.Write("main", "x", "b")
	b.Add(trace.Event{G: 0xFFFFFFF0, Op: trace.OpFork, Obj: 0xFFFFFFF1})
	b.Add(trace.Event{G: 0xFFFFFFF1, Op: trace.OpRead, Obj: b.Obj("x"), Site: b.Site("huge")})
	d, c := runHybrid(t, b.Trace())
	wantStat(t, d, "illformed", 4)
	wantStat(t, d, "goroutines", 4)
	wantPairs(t, b, c, pairs(b, [2]string{"a", "b"}))
}
