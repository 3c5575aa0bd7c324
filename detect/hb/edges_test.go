package hb_test

// One test per happens-before edge of docs/semantics.md, each run through
// both detectors (hb and fasttrack), in the style of
// $GOROOT/src/runtime/race/testdata: the name says whether a race is
// expected, the trace and the expected site pairs say which.

import (
	"testing"

	"github.com/racekit/racekit/trace"
)

// --- program order and no synchronization ---

func TestRaceUnsynchronizedWrites(t *testing.T) {
	b := forked("T1", "T2")
	w1 := b.Write("T1", "x", "a")
	w2 := b.Write("T2", "x", "b")
	tr := b.Trace()
	h, f := expect(t, tr, "a~b")
	checkOnly(t, "hb", h, tr, w1, w2)
	checkOnly(t, "fasttrack", f, tr, w1, w2)
}

func TestNoRaceSameGoroutine(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("M", "x", "a")
	b.Read("M", "x", "b")
	b.Write("M", "x", "c")
	expect(t, b.Trace())
}

func TestNoRaceConcurrentReads(t *testing.T) {
	b := forked("T1", "T2")
	b.Read("T1", "x", "a")
	b.Read("T2", "x", "b")
	expect(t, b.Trace())
}

func TestRaceDifferentAddressesDoNotMix(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "a")
	b.Write("T2", "y", "b")
	b.Write("T2", "x", "c")
	expect(t, b.Trace(), "a~c")
}

// --- exclusive locks ---

func TestNoRaceMutex(t *testing.T) {
	b := forked("T1", "T2")
	b.Acq("T1", "L")
	b.Write("T1", "x", "a")
	b.Rel("T1", "L")
	b.Acq("T2", "L")
	b.Write("T2", "x", "b")
	b.Rel("T2", "L")
	expect(t, b.Trace())
}

func TestRaceMutexAccessBeforeLock(t *testing.T) {
	// Both writes precede the critical sections: the lock orders nothing
	// that matters (runtime/race TestRaceMutex).
	b := forked("T1", "T2")
	b.Write("T1", "x", "a")
	b.Acq("T1", "L")
	b.Rel("T1", "L")
	b.Write("T2", "x", "b")
	b.Acq("T2", "L")
	b.Rel("T2", "L")
	expect(t, b.Trace(), "a~b")
}

func TestRaceMutexDifferentLocks(t *testing.T) {
	b := forked("T1", "T2")
	b.Acq("T1", "L1")
	b.Write("T1", "x", "a")
	b.Rel("T1", "L1")
	b.Acq("T2", "L2")
	b.Write("T2", "x", "b")
	b.Rel("T2", "L2")
	expect(t, b.Trace(), "a~b")
}

func TestNoRaceNestedLocksInnerCommon(t *testing.T) {
	b := forked("T1", "T2")
	b.Acq("T1", "L1")
	b.Acq("T1", "L2")
	b.Write("T1", "x", "a")
	b.Rel("T1", "L2")
	b.Rel("T1", "L1")
	b.Acq("T2", "L2")
	b.Read("T2", "x", "b")
	b.Rel("T2", "L2")
	expect(t, b.Trace())
}

func TestRaceMutexReleaseBeforeAccess(t *testing.T) {
	// T1's write comes after its release: the next acquirer is not ordered
	// after it.
	b := forked("T1", "T2")
	b.Acq("T1", "L")
	b.Rel("T1", "L")
	b.Write("T1", "x", "a")
	b.Acq("T2", "L")
	b.Read("T2", "x", "b")
	b.Rel("T2", "L")
	expect(t, b.Trace(), "a~b")
}

// --- read-write locks ---

func TestRaceRLockReadersDoNotSync(t *testing.T) {
	// RUnlock → RLock is no edge: a write under RLock races with a later
	// read under RLock.
	b := forked("T1", "T2")
	b.RAcq("T1", "L")
	b.Write("T1", "x", "a")
	b.RRel("T1", "L")
	b.RAcq("T2", "L")
	b.Read("T2", "x", "b")
	b.RRel("T2", "L")
	expect(t, b.Trace(), "a~b")
}

func TestNoRaceRUnlockThenLock(t *testing.T) {
	b := forked("T1", "T2")
	b.RAcq("T1", "L")
	b.Read("T1", "x", "a")
	b.RRel("T1", "L")
	b.Acq("T2", "L")
	b.Write("T2", "x", "b")
	b.Rel("T2", "L")
	expect(t, b.Trace())
}

func TestNoRaceUnlockThenRLock(t *testing.T) {
	b := forked("T1", "T2")
	b.Acq("T1", "L")
	b.Write("T1", "x", "a")
	b.Rel("T1", "L")
	b.RAcq("T2", "L")
	b.Read("T2", "x", "b")
	b.RRel("T2", "L")
	expect(t, b.Trace())
}

func TestNoRaceLockAfterSeveralReaders(t *testing.T) {
	// R_L joins every read-mode release, so the writer is ordered after
	// both readers, not only the last.
	b := forked("T1", "T2", "T3")
	b.RAcq("T1", "L")
	b.Read("T1", "x", "a")
	b.RAcq("T2", "L")
	b.Read("T2", "x", "b")
	b.RRel("T1", "L")
	b.RRel("T2", "L")
	b.Acq("T3", "L")
	b.Write("T3", "x", "c")
	b.Rel("T3", "L")
	expect(t, b.Trace())
}

func TestNoRaceReaderOrderedThroughWriter(t *testing.T) {
	// T1's read-mode release reaches T2's exclusive acquire, whose release
	// reaches T3's read-mode acquire: T1's read is ordered before T3's write.
	b := forked("T1", "T2", "T3")
	b.RAcq("T1", "L")
	b.Read("T1", "x", "a")
	b.RRel("T1", "L")
	b.Acq("T2", "L")
	b.Rel("T2", "L")
	b.RAcq("T3", "L")
	b.Write("T3", "x", "b")
	b.RRel("T3", "L")
	expect(t, b.Trace())
}

func TestRaceExclusiveReleaseForgetsEarlierReaders(t *testing.T) {
	// T1 reads outside the lock after its read-mode release; T2's exclusive
	// section in between does not order T1's later read before T3.
	b := forked("T1", "T2", "T3")
	b.RAcq("T1", "L")
	b.RRel("T1", "L")
	b.Read("T1", "x", "a")
	b.Acq("T2", "L")
	b.Rel("T2", "L")
	b.Acq("T3", "L")
	b.Write("T3", "x", "b")
	b.Rel("T3", "L")
	expect(t, b.Trace(), "a~b")
}

// --- fork and join ---

func TestNoRaceForkOrdersParentBefore(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("M", "x", "a")
	b.Fork("M", "T1", "go")
	b.Read("T1", "x", "b")
	expect(t, b.Trace())
}

func TestRaceForkDoesNotOrderParentAfter(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("M", "T1", "go")
	w := b.Write("M", "x", "a")
	r := b.Read("T1", "x", "b")
	tr := b.Trace()
	h, f := expect(t, tr, "a~b")
	checkOnly(t, "hb", h, tr, w, r)
	checkOnly(t, "fasttrack", f, tr, w, r)
}

func TestRaceSiblingsForkedInOrder(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "a")
	b.Fork("T1", "T3", "go T3")
	b.Write("T2", "x", "b")
	b.Read("T3", "x", "c") // after T1's write (fork), not after T2's
	expect(t, b.Trace(), "a~b", "b~c")
}

func TestNoRaceJoin(t *testing.T) {
	b := forked("T1")
	b.Write("T1", "x", "a")
	b.End("T1")
	b.Join("M", "T1")
	b.Read("M", "x", "b")
	expect(t, b.Trace())
}

func TestRaceAccessBeforeJoin(t *testing.T) {
	b := forked("T1")
	b.Write("T1", "x", "a")
	b.Read("M", "x", "b")
	b.Join("M", "T1")
	expect(t, b.Trace(), "a~b")
}

func TestRaceJoinDoesNotOrderChildsLaterEvents(t *testing.T) {
	// A join covers the child's events up to the join only; whatever the
	// child does after it (an ill-formed but tolerated stream) is not
	// ordered before the joiner.
	b := forked("T1")
	b.Join("M", "T1")
	b.Write("T1", "x", "a")
	b.Read("M", "x", "b")
	expect(t, b.Trace(), "a~b")
}

func TestRaceJoinOfUnknownGoroutineTolerated(t *testing.T) {
	// Joining a goroutine never seen joins ⊥: it orders nothing and is
	// counted as ill-formed.
	b := forked("T1")
	b.Write("T1", "x", "a")
	b.Join("M", "T9")
	b.Read("M", "x", "b")
	h, f := expect(t, b.Trace(), "a~b")
	for _, r := range []result{h, f} {
		if r.stats["illformed"] != 1 {
			t.Errorf("illformed = %d, want 1", r.stats["illformed"])
		}
	}
}

// --- sync objects (snd/rcv) ---

func TestNoRaceChannelHandoff(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "a")
	b.Snd("T1", "c")
	b.Rcv("T2", "c")
	b.Read("T2", "x", "b")
	expect(t, b.Trace())
}

func TestRaceWriteAfterSend(t *testing.T) {
	b := forked("T1", "T2")
	b.Snd("T1", "c")
	b.Write("T1", "x", "a")
	b.Rcv("T2", "c")
	b.Read("T2", "x", "b")
	expect(t, b.Trace(), "a~b")
}

func TestRaceReceiveBeforeSend(t *testing.T) {
	b := forked("T1", "T2")
	b.Rcv("T2", "c") // nothing sent yet: joins ⊥
	b.Read("T2", "x", "b")
	b.Write("T1", "x", "a")
	b.Snd("T1", "c")
	expect(t, b.Trace(), "a~b")
}

func TestNoRaceReceiveAfterEveryEarlierSend(t *testing.T) {
	// A sync object's clock joins every release (docs/semantics.md), so
	// the receive is ordered after T1's send even though T3 sent last.
	b := forked("T1", "T2", "T3")
	b.Write("T1", "x", "a")
	b.Snd("T1", "c")
	b.Snd("T3", "c")
	b.Rcv("T2", "c")
	b.Read("T2", "x", "b")
	expect(t, b.Trace())
}

func TestRaceSyncObjectsAreDistinct(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "a")
	b.Snd("T1", "c")
	b.Rcv("T2", "d")
	b.Read("T2", "x", "b")
	expect(t, b.Trace(), "a~b")
}

// --- atomics ---

func TestNoRaceAtomicStoreThenLoad(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "a")
	b.AStore("T1", "flag")
	b.ALoad("T2", "flag")
	b.Read("T2", "x", "b")
	expect(t, b.Trace())
}

func TestRaceAtomicLoadDoesNotRelease(t *testing.T) {
	// T1's load publishes nothing: T2's later store and read are not
	// ordered after T1's write.
	b := forked("T1", "T2")
	b.Write("T1", "x", "a")
	b.ALoad("T1", "flag")
	b.AStore("T2", "flag")
	b.Read("T2", "x", "b")
	expect(t, b.Trace(), "a~b")
}

func TestRaceAtomicStoreDoesNotAcquire(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "a")
	b.AStore("T1", "flag")
	b.AStore("T2", "flag")
	b.Read("T2", "x", "b")
	expect(t, b.Trace(), "a~b")
}

func TestNoRaceAtomicRMWAcquiresAndReleases(t *testing.T) {
	b := forked("T1", "T2", "T3")
	b.Write("T1", "x", "a")
	b.ARMW("T1", "n")
	b.ARMW("T2", "n") // acquires T1's, releases its own
	b.ALoad("T3", "n")
	b.Read("T3", "x", "b")
	expect(t, b.Trace())
}

func TestNoRaceAtomicsNeverRace(t *testing.T) {
	b := forked("T1", "T2")
	b.AStore("T1", "n")
	b.ARMW("T2", "n")
	b.ALoad("T1", "n")
	b.AStore("T2", "n")
	expect(t, b.Trace())
}

func TestNoRaceAtomicIsNotADataAccess(t *testing.T) {
	// Atomics are not recorded as accesses (docs/semantics.md), so a plain
	// write and an unordered atomic store to the same word are no race;
	// the plain accesses around them still are (see the next test).
	b := forked("T1", "T2")
	b.AStore("T1", "w")
	b.Write("T2", "w", "a")
	expect(t, b.Trace())
}

func TestRacePlainAccessesAroundAtomicOnSameWord(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "w", "a")
	b.ALoad("T1", "w")
	b.AStore("T2", "w")
	b.Write("T2", "w", "b")
	expect(t, b.Trace(), "a~b")
}

func TestRaceAtomicAndSyncObjectDoNotMix(t *testing.T) {
	// The same object ID used as a sync object and as an atomic word gives
	// two independent clocks.
	b := forked("T1", "T2")
	b.Write("T1", "x", "a")
	b.Snd("T1", "o")
	b.ALoad("T2", "o")
	b.Read("T2", "x", "b")
	expect(t, b.Trace(), "a~b")
}

// --- goroutines born in untraced code ---

func TestNoRaceGoroutineBornWithoutFork(t *testing.T) {
	// U is never forked: it starts after everything observed so far.
	b := trace.NewBuilder()
	b.Write("M", "x", "a")
	b.Read("U", "x", "b")
	expect(t, b.Trace())
}

func TestRaceGoroutineBornWithoutForkNotAfterLaterEvents(t *testing.T) {
	// Events of M after U's birth are not ordered before U's.
	b := trace.NewBuilder()
	b.Write("M", "y", "s0")
	b.Begin("U")
	b.Write("M", "x", "a")
	b.Read("U", "x", "b")
	expect(t, b.Trace(), "a~b")
}

func TestRaceForkedGoroutineNotBeforeUntracedOne(t *testing.T) {
	// T1 is forked but has not run when U is born: U is ordered after the
	// fork, not after T1's events.
	b := trace.NewBuilder()
	b.Fork("M", "T1", "go")
	b.Begin("U")
	b.Write("T1", "x", "a")
	b.Read("U", "x", "b")
	expect(t, b.Trace(), "a~b")
}

// --- ill-formed streams ---

func TestNoRaceReleaseOfUnheldLockStillPublishes(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "a")
	b.Rel("T1", "L") // never acquired: ill-formed, still W_L := C_T1
	b.Acq("T2", "L")
	b.Read("T2", "x", "b")
	b.Rel("T2", "L")
	h, f := expect(t, b.Trace())
	for _, r := range []result{h, f} {
		if r.stats["illformed"] != 1 {
			t.Errorf("illformed = %d, want 1", r.stats["illformed"])
		}
	}
}

func TestNoRaceSecondForkStillOrders(t *testing.T) {
	// Forking a goroutine that already runs is ill-formed; the fork still
	// applies its edge (docs/semantics.md), so M's write is ordered before
	// T1's later read.
	b := forked("T1")
	b.Read("T1", "y", "s0")
	b.Write("M", "x", "a")
	b.Fork("M", "T1", "go again")
	b.Read("T1", "x", "b")
	h, f := expect(t, b.Trace())
	for _, r := range []result{h, f} {
		if r.stats["illformed"] != 1 {
			t.Errorf("illformed = %d, want 1", r.stats["illformed"])
		}
	}
}

func TestNoRaceIllFormedEventsNeverPanic(t *testing.T) {
	b := forked("T1")
	b.Write("T1", "x", "a")
	b.Add(trace.Event{G: 1, Op: trace.Op(200)})                                      // unknown op
	b.Add(trace.Event{G: 1, Op: trace.OpInvalid})                                    // invalid op
	b.Add(trace.Event{G: 0, Op: trace.OpFork, Obj: 1 << 40})                         // child out of range
	b.Add(trace.Event{G: 0, Op: trace.OpJoin, Obj: 1 << 40})                         // child out of range
	b.Add(trace.Event{G: 0, Op: trace.OpJoin, Obj: 0})                               // self-join
	b.Add(trace.Event{G: 0, Op: trace.OpFork, Obj: 1})                               // second fork of T1
	b.Add(trace.Event{G: 0, Op: trace.OpRelease, Obj: 7, Flags: trace.FlagReadLock}) // not held
	b.Add(trace.Event{G: 1, Op: trace.OpAcquire, Obj: 9})                            // fine
	b.Add(trace.Event{G: 0, Op: trace.OpAcquire, Obj: 9})                            // held by T1
	b.Add(trace.Event{G: 0xFFFFFFF0, Op: trace.OpWrite, Obj: 5})                     // huge GID: untraced birth
	b.Add(trace.Event{G: 0xFFFFFFF0, Op: trace.OpJoin, Obj: 0xFFFFFFF1})             // never seen
	h, f := expect(t, b.Trace())
	for _, r := range []result{h, f} {
		if got := r.stats["illformed"]; got != 9 {
			t.Errorf("illformed = %d, want 9", got)
		}
		if got := r.stats["goroutines"]; got != 3 {
			t.Errorf("goroutines = %d, want 3 (M, T1, the huge GID)", got)
		}
	}
}

func TestRaceHugeGoroutineIDsAreOrdinaryGoroutines(t *testing.T) {
	b := trace.NewBuilder()
	const big = trace.GID(1 << 31)
	x := b.Obj("x")
	b.Add(trace.Event{G: 0, Op: trace.OpFork, Obj: uint64(big)})
	b.Add(trace.Event{G: 0, Op: trace.OpFork, Obj: uint64(big + 1)})
	b.Add(trace.Event{G: big, Op: trace.OpWrite, Obj: x, Site: b.Site("a")})
	b.Add(trace.Event{G: big + 1, Op: trace.OpRead, Obj: x, Site: b.Site("b")})
	b.Add(trace.Event{G: 0, Op: trace.OpJoin, Obj: uint64(big)})
	b.Add(trace.Event{G: 0, Op: trace.OpJoin, Obj: uint64(big + 1)})
	b.Add(trace.Event{G: 0, Op: trace.OpWrite, Obj: x, Site: b.Site("c")})
	h, f := expect(t, b.Trace(), "a~b")
	for _, r := range []result{h, f} {
		if r.races[0].Prev.G != big || r.races[0].Cur.G != big+1 {
			t.Errorf("race between %d and %d, want %d and %d", r.races[0].Prev.G, r.races[0].Cur.G, big, big+1)
		}
	}
}

func TestRaceUnalignedAddressesAreDistinct(t *testing.T) {
	// Byte-sized objects in one word are different addresses: only the
	// accesses to the same byte race.
	b := forked("T1", "T2")
	for _, a := range []struct {
		g    string
		addr uint64
		site string
	}{{"T1", 0x1001, "a"}, {"T2", 0x1002, "b"}, {"T2", 0x1000, "c"}, {"T2", 0x1001, "d"}, {"T1", 0, "e"}, {"T2", 0, "f"}} {
		b.Add(trace.Event{G: b.G(a.g), Op: trace.OpWrite, Obj: a.addr, Site: b.Site(a.site)})
	}
	expect(t, b.Trace(), "a~d", "e~f")
}
