package lockset

import (
	"testing"

	"github.com/racekit/racekit/trace"
)

// raceFuzzerFigure1 is the program of RaceFuzzer (Sen, PLDI'08) Figure 1
// run with thread1 first, statement k as site "k":
//
//	thread1 {            thread2 {
//	1: x = 1;            7:  z = 1;
//	2: lock(L);          8:  lock(L);
//	3: y = 1;            9:  if (y==1) {
//	4: unlock(L);        10:   if (x != 1) {
//	5: if (z==1)         11:     ERROR2; } }
//	6:   ERROR1;         14: unlock(L);
//	}                    }
//
// With thread1 first, z is 0 at 5 (6 is skipped), y is 1 at 9 and x is 1 at
// 10 (11-13 are skipped). T1 and T2 are forked by main.
func raceFuzzerFigure1() *trace.Builder {
	b := trace.NewBuilder()
	lock := func(g string, op trace.Op, site string) {
		b.Add(trace.Event{G: b.G(g), Op: op, Obj: b.Obj("L"), Site: b.Site(site)})
	}
	b.Fork("main", "T1", "fork1")
	b.Fork("main", "T2", "fork2")
	b.WriteV("T1", "x", 1, "1")
	lock("T1", trace.OpAcquire, "2")
	b.WriteV("T1", "y", 1, "3")
	lock("T1", trace.OpRelease, "4")
	b.ReadV("T1", "z", 0, "5")
	b.WriteV("T2", "z", 1, "7")
	lock("T2", trace.OpAcquire, "8")
	b.ReadV("T2", "y", 1, "9")
	b.ReadV("T2", "x", 1, "10")
	lock("T2", trace.OpRelease, "14")
	return b
}

// Hybrid reports (5,7), the real race on z, and (1,10), the paper's false
// alarm on x: 1 holds no lock and the lock edge 4→8 that orders it before 10
// is not a hybrid edge. y is accessed under L at 3 and 9: no race.
func TestRaceFuzzerFigure1Hybrid(t *testing.T) {
	b := raceFuzzerFigure1()
	_, c := runHybrid(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"5", "7"}, [2]string{"1", "10"}))
}

// Eraser reports only (5,7). z: T1's read at 5 makes it Exclusive(T1) and
// T2's unlocked write at 7 makes it SharedModified with C(z) = ∅. x: the
// write at 1 is T1's exclusive access (not refined) and T2's read at 10
// under L makes it Shared with C(x) = {L}, never written again: no warning.
// y: written under L at 3 and read under L at 9, Shared with C(y) = {L}.
func TestRaceFuzzerFigure1Lockset(t *testing.T) {
	b := raceFuzzerFigure1()
	d, c := runEraser(t, b.Trace())
	wantPairs(t, b, c, pairs(b, [2]string{"5", "7"}))
	wantState(t, d, b, "x", shared, []string{"L"})
	wantState(t, d, b, "y", shared, []string{"L"})
	wantState(t, d, b, "z", sharedModified, []string{})
}
