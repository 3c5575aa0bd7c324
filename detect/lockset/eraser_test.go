package lockset

import (
	"testing"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// wantState fails unless Eraser's state of variable x is want and its
// candidate set holds exactly the named locks (nil: C(v) is still "every
// lock", as before sharing).
func wantState(t *testing.T, d *Eraser, b *trace.Builder, x string, want uint8, cand []string) {
	t.Helper()
	i, ok := d.idx[b.Obj(x)]
	if !ok {
		t.Fatalf("%s has no shadow state", x)
	}
	s := d.shadow[i]
	if s.state != want {
		t.Errorf("state of %s = %d, want %d", x, s.state, want)
	}
	if cand == nil {
		if s.cand != topSet {
			t.Errorf("C(%s) = %v, want every lock", x, d.tr.ls.sets[s.cand])
		}
		return
	}
	var got []uint64
	if s.cand != topSet {
		for _, e := range d.tr.ls.sets[s.cand] {
			got = append(got, e.Lock)
		}
	}
	if len(got) != len(cand) {
		t.Fatalf("C(%s) = %v, want %v", x, got, cand)
	}
	for k, l := range cand {
		if got[k] != b.Obj(l) {
			t.Errorf("C(%s) = %v, want %v", x, got, cand)
		}
	}
}

// Virgin → Exclusive: the first goroutine to touch x owns it and may read
// and write it without locks.
func TestNoRaceEraserVirginToExclusive(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("main", "x", "w1")
	b.Read("main", "x", "r1")
	b.Write("main", "x", "w2")
	d, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b))
	wantState(t, d, b, "x", exclusive, nil)
}

// Exclusive → Shared: a read by a second goroutine shares x; C(x) is
// refined (here to empty) but a shared, never re-written address is not
// reported.
func TestNoRaceEraserExclusiveToSharedOnForeignRead(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("main", "x", "init")
	b.Fork("main", "T1", "go1")
	b.Read("T1", "x", "r")
	d, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b))
	wantState(t, d, b, "x", shared, []string{})
}

// Initialization by one goroutine, then read-only sharing by several, all
// without locks: no warning.
func TestNoRaceEraserInitThenReadOnlySharing(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("main", "x", "init1")
	b.Write("main", "x", "init2")
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.Read("T1", "x", "r1")
	b.Read("T2", "x", "r2")
	b.Read("main", "x", "r0")
	b.Read("T1", "x", "r1b")
	d, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b))
	wantState(t, d, b, "x", shared, []string{})
}

// Exclusive → SharedModified: a write by a second goroutine with no lock
// empties C(x) and warns at once; Prev is the owner's access.
func TestRaceEraserExclusiveToSharedModifiedOnForeignWrite(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("main", "x", "init")
	b.Fork("main", "T1", "go1")
	b.Write("T1", "x", "w")
	d, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"init", "w"}))
	wantState(t, d, b, "x", sharedModified, []string{})
}

// Shared → SharedModified: a write while shared warns when C(x) is empty.
// Prev is the latest access by a goroutine other than the writer: T1's read,
// not T2's own earlier read nor main's initialization.
func TestRaceEraserSharedToSharedModifiedOnWrite(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("main", "x", "init")
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.Read("T1", "x", "r1")
	b.Read("T2", "x", "r2")
	d, _ := runEraser(t, b.Trace())
	wantState(t, d, b, "x", shared, []string{})

	b.Write("T2", "x", "w2")
	d, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"r1", "w2"}))
	wantState(t, d, b, "x", sharedModified, []string{})
	g := c.Groups()[0]
	if g.Detector != Name || g.Evidence != finding.Potential || g.Addr != b.Obj("x") {
		t.Errorf("finding = %+v, want a potential lockset race on x", g.Race)
	}
	if g.Prev.G != b.G("T1") || g.Prev.Write || g.Cur.G != b.G("T2") || !g.Cur.Write {
		t.Errorf("finding prev %+v cur %+v, want T1's read then T2's write", g.Prev, g.Cur)
	}
}

// SharedModified with a consistent lock: C(x) stays {L}, no warning.
func TestNoRaceEraserConsistentLock(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("main", "x", "init")
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	for _, g := range []string{"T1", "T2", "T1", "main"} {
		b.Acq(g, "M")
		b.Acq(g, "L")
		b.Read(g, "x", "r"+g)
		b.Write(g, "x", "w"+g)
		b.Rel(g, "L")
		b.Rel(g, "M")
	}
	b.Acq("T2", "L")
	b.Write("T2", "x", "wonlyL")
	b.Rel("T2", "L")
	d, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b))
	wantState(t, d, b, "x", sharedModified, []string{"L"})
}

// Inconsistent locks: after main's initialization, T1 uses L1 and T2 uses
// L2; C(x) = {L1} ∩ {L2} = ∅.
func TestRaceEraserInconsistentLocks(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("main", "x", "init")
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.Acq("T1", "L1")
	b.Write("T1", "x", "w1")
	b.Rel("T1", "L1")
	b.Acq("T2", "L2")
	b.Write("T2", "x", "w2")
	b.Rel("T2", "L2")
	d, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"w1", "w2"}))
	wantState(t, d, b, "x", sharedModified, []string{})
}

// A read lock does not protect a write: T2 writes under RLock(L), so the
// write refines C(x) with no lock at all.
func TestRaceEraserWriteUnderReadLock(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.Acq("T1", "L")
	b.Write("T1", "x", "w1")
	b.Rel("T1", "L")
	b.RAcq("T2", "L")
	b.Write("T2", "x", "w2")
	b.RRel("T2", "L")
	_, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"w1", "w2"}))
}

// RWMutex used right: reads under RLock(L) and writes under Lock(L) keep
// C(x) = {L}.
func TestNoRaceEraserReadsUnderRLockWritesUnderLock(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("main", "x", "init")
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T2", "go2")
	b.RAcq("T1", "L")
	b.Read("T1", "x", "r1")
	b.RRel("T1", "L")
	b.Acq("T2", "L")
	b.Write("T2", "x", "w2")
	b.Rel("T2", "L")
	b.RAcq("main", "L")
	b.RAcq("T1", "L")
	b.Read("T1", "x", "r1b")
	b.Read("main", "x", "r0")
	b.RRel("T1", "L")
	b.RRel("main", "L")
	d, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b))
	wantState(t, d, b, "x", sharedModified, []string{"L"})
}

// A KNOWN FALSE ALARM: main initializes x, hands it to T1 through a channel
// and never touches it again; the send orders the two writes (hb and hybrid
// report nothing), but Eraser ignores message edges and the write by a
// second goroutine with no lock leaves C(x) empty.
func TestRaceEraserChannelHandoffFalseAlarm(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Write("main", "x", "produce")
	b.Snd("main", "ch")
	b.Rcv("T1", "ch")
	b.Write("T1", "x", "consume")
	_, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"produce", "consume"}))
}

// Eraser warns once per address: later unprotected accesses to x add
// nothing, while a second address is reported on its own.
func TestRaceEraserReportsOncePerAddress(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Write("main", "x", "a")
	b.Write("T1", "x", "b")
	b.Write("main", "x", "c")
	b.Write("T1", "x", "d")
	b.Write("main", "y", "e")
	b.Read("T1", "y", "f")
	b.Write("T1", "y", "g")
	d, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"a", "b"}, [2]string{"e", "g"}))
	if g := c.Groups(); g[0].Count != 1 || g[1].Count != 1 {
		t.Errorf("counts %d, %d, want one report per address", g[0].Count, g[1].Count)
	}
	wantStat(t, d, "warnings", 2)
}

// Accesses in the exclusive state never refine C(v): an unlocked
// initialization followed by consistently locked sharing is silent, although
// the initialization and T1's write hold no common lock (reference.LocksetPairs
// reports that pair; see TestEraserWarnsOnEverySharedPhaseLocksetRace).
func TestNoRaceEraserUnlockedInitThenLocked(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("main", "x", "init")
	b.Fork("main", "T1", "go1")
	b.Acq("T1", "L")
	b.Write("T1", "x", "w1")
	b.Rel("T1", "L")
	b.Acq("main", "L")
	b.Write("main", "x", "w0")
	b.Rel("main", "L")
	d, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b))
	wantState(t, d, b, "x", sharedModified, []string{"L"})
}

// Fork and join do not order anything for Eraser: a write by main after
// joining T1 is still a second goroutine's unprotected write.
func TestRaceEraserIgnoresForkJoin(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "T1", "go1")
	b.Write("T1", "x", "child")
	b.End("T1")
	b.Join("main", "T1")
	b.Write("main", "x", "parent")
	_, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"child", "parent"}))
}

// Ill-formed lock and goroutine events are counted, not fatal: a release of
// a lock not held, a second fork, a nested acquire, a read-mode release of a
// write-held lock, a join of a goroutine never seen and an event after its
// join. The nested lock stays held until its last release, so w0 and w0b
// both hold L; T1's read after the join holds nothing and empties C(x).
// A huge GID is not ill-formed: it is one more goroutine (born untraced).
func TestRaceEraserIllFormedStreamCounted(t *testing.T) {
	b := trace.NewBuilder()
	b.Rel("main", "L") // 1: not held
	b.Fork("main", "T1", "go1")
	b.Fork("main", "T1", "go1") // 2: second fork
	b.Acq("main", "L")
	b.Acq("main", "L") // 3: nested
	b.Write("main", "x", "w0")
	b.Rel("main", "L")
	b.Write("main", "x", "w0b")
	b.Rel("main", "L")
	b.Acq("T1", "L")
	b.Write("T1", "x", "w1")
	b.RRel("T1", "L")                                             // 4: mode mismatch
	b.Add(trace.Event{G: b.G("main"), Op: trace.OpJoin, Obj: 77}) // 5: never seen
	b.Join("main", "T1")
	b.Read("T1", "x", "late") // 6: after join
	b.Add(trace.Event{G: 0xFFFFFFF0, Op: trace.OpWrite, Obj: b.Obj("y"), Site: b.Site("huge")})
	d, c := runEraser(t, b.Trace())
	wantStat(t, d, "illformed", 6)
	wantStat(t, d, "goroutines", 3)
	wantPairs(t, b, c, pairs(b, [2]string{"w0b", "late"}))
}
