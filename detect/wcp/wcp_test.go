package wcp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/wcp"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// result is what one detector reported on one trace.
type result struct {
	races []finding.Race
	c     *finding.Collector
	stats map[string]int64
}

type detector interface {
	detect.Detector
	detect.Stats
}

func runDetector(t testing.TB, d detector, tr *trace.Trace) {
	t.Helper()
	if _, err := detect.Run(tr.Iter(), d); err != nil {
		t.Fatal(err)
	}
}

func runWCP(t testing.TB, tr *trace.Trace) result {
	t.Helper()
	r := result{c: finding.NewCollector()}
	d := wcp.New(finding.SinkFunc(func(x *finding.Race) {
		r.races = append(r.races, *x)
		r.c.Report(x)
	}))
	runDetector(t, d, tr)
	r.stats = d.Stats()
	for _, x := range r.races {
		if x.Detector != "wcp" || x.Evidence != finding.Predicted {
			t.Errorf("wcp reported %q with evidence %v", x.Detector, x.Evidence)
		}
	}
	return r
}

func runHB(t testing.TB, tr *trace.Trace) result {
	t.Helper()
	r := result{c: finding.NewCollector()}
	d := hb.NewLockedAtomics(finding.SinkFunc(func(x *finding.Race) {
		r.races = append(r.races, *x)
		r.c.Report(x)
	}))
	runDetector(t, d, tr)
	r.stats = d.Stats()
	return r
}

// labels renders site pairs as sorted "a~b" strings in the trace's labels.
func labels(m *trace.Meta, ps []finding.Pair) []string {
	out := []string{}
	for _, p := range ps {
		a, b := m.Site(p.A).String(), m.Site(p.B).String()
		if a > b {
			a, b = b, a
		}
		out = append(out, a+"~"+b)
	}
	slices.Sort(out)
	return out
}

func norm(want []string) []string {
	out := []string{}
	for _, w := range want {
		a, b, _ := strings.Cut(w, "~")
		if a > b {
			a, b = b, a
		}
		out = append(out, a+"~"+b)
	}
	slices.Sort(out)
	return out
}

// expect checks that wcp reports exactly wcpWant and hb exactly hbWant
// (site pairs "a~b").
func expect(t *testing.T, tr *trace.Trace, hbWant, wcpWant []string) {
	t.Helper()
	w, h := runWCP(t, tr), runHB(t, tr)
	if got, want := labels(tr.M, w.c.Pairs()), norm(wcpWant); !slices.Equal(got, want) {
		t.Errorf("wcp: races %v, want %v", got, want)
	}
	if got, want := labels(tr.M, h.c.Pairs()), norm(hbWant); !slices.Equal(got, want) {
		t.Errorf("hb: races %v, want %v", got, want)
	}
}

func forked(gs ...string) *trace.Builder {
	b := trace.NewBuilder()
	b.Begin("M")
	for _, g := range gs {
		b.Fork("M", g, "go "+g)
	}
	return b
}

// TestRaceCriticalSectionsWithoutConflictAreReordered is the paper's
// motivating pattern (Kini et al. 2017, section 2): two critical sections
// of one lock that touch nothing in common order the accesses around them
// under HB, but the second section can run first, so w(x) and r(x) can be
// enabled together: a predictable race HB misses.
func TestRaceCriticalSectionsWithoutConflictAreReordered(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.Acq("T1", "l")
	b.Write("T1", "y", "y1")
	b.Rel("T1", "l")
	b.Acq("T2", "l")
	b.Write("T2", "z", "z2")
	b.Rel("T2", "l")
	b.Read("T2", "x", "r2")
	expect(t, b.Trace(), nil, []string{"w1~r2"})
}

// TestNoRaceRuleA: the critical sections conflict on y (T2 reads what T1
// wrote under the lock), so T1's release is WCP-before T2's read (rule a)
// and the accesses to x around them are ordered: T2's section cannot move
// ahead of T1's without changing the value it reads.
func TestNoRaceRuleA(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.Acq("T1", "l")
	b.Write("T1", "y", "y1")
	b.Rel("T1", "l")
	b.Acq("T2", "l")
	b.Read("T2", "y", "y2")
	b.Rel("T2", "l")
	b.Read("T2", "x", "r2")
	expect(t, b.Trace(), nil, nil)
}

// TestRaceRuleAOrdersFromTheConflictOn: rule (a) orders T1's release
// before T2's conflicting access, not before T2's acquire: T2's read of x
// inside its section but before the conflict on y can run before T1's
// section (T2 acquires first), while T1's write of x is enabled.
func TestRaceRuleAOrdersFromTheConflictOn(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "x1")
	b.Acq("T1", "l")
	b.Write("T1", "y", "y1")
	b.Rel("T1", "l")
	b.Acq("T2", "l")
	b.Read("T2", "x", "x2")
	b.Read("T2", "y", "y2")
	b.Rel("T2", "l")
	expect(t, b.Trace(), nil, []string{"x1~x2"})
}

// TestNoRaceRuleB: T1 holds l while it writes x under m; T2 reads x under
// m (rule a: T1's release of m is before it), so T1's acquire of l is
// WCP-before T2's release of l, and rule (b) orders T1's release of l
// before T2's: T1's write of z at the end of its section of l is ordered
// before T2's read of z after its own.
func TestNoRaceRuleB(t *testing.T) {
	b := forked("T1", "T2")
	b.Acq("T1", "l")
	b.Acq("T1", "m")
	b.Write("T1", "x", "x1")
	b.Rel("T1", "m")
	b.Write("T1", "z", "z1")
	b.Rel("T1", "l")
	b.Acq("T2", "m")
	b.Read("T2", "x", "x2")
	b.Rel("T2", "m")
	b.Acq("T2", "l")
	b.Rel("T2", "l")
	b.Read("T2", "z", "z2")
	r := runWCP(t, b.Trace())
	if r.c.Len() != 0 {
		t.Errorf("wcp: races %v, want none", labels(b.Trace().M, r.c.Pairs()))
	}
	if r.stats["rule_b"] == 0 {
		t.Errorf("rule (b) never applied: stats %v", r.stats)
	}
}

// TestNoRaceHardEdges: edges that every reordering keeps
// (fork, join, snd→rcv, atomics) order as they do under HB.
func TestNoRaceHardEdges(t *testing.T) {
	b := forked("T1", "T2", "T3")
	b.Write("M", "a", "a0") // touched by no one else
	b.Write("T1", "x", "x1")
	b.Snd("T1", "ch")
	b.Rcv("T2", "ch")
	b.Write("T2", "x", "x2")
	b.Write("T2", "y", "y2")
	b.AStore("T2", "flag")
	b.ALoad("T3", "flag")
	b.Read("T3", "y", "y3")
	b.End("T3")
	b.Join("M", "T3")
	b.Read("M", "y", "ym")
	expect(t, b.Trace(), nil, nil)
}

// TestRaceForkDoesNotOrderParentAfter: the parent's events after a fork
// are unordered with the child's, under WCP as under HB.
func TestRaceForkDoesNotOrderParentAfter(t *testing.T) {
	b := forked("T1")
	b.Write("M", "x", "wm")
	b.Write("T1", "x", "w1")
	expect(t, b.Trace(), []string{"wm~w1"}, []string{"wm~w1"})
}

// TestNoRaceReadLockEdgesAreHard: a read-mode critical section keeps its
// observed order against the exclusive ones (racekit's conservative
// mapping of RWMutex), so the pattern WCP predicts for two exclusive
// sections is not predicted when one of them is a reader's.
func TestNoRaceReadLockEdgesAreHard(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.RAcq("T1", "l")
	b.Read("T1", "y", "y1")
	b.RRel("T1", "l")
	b.Acq("T2", "l")
	b.Write("T2", "z", "z2")
	b.Rel("T2", "l")
	b.Read("T2", "x", "r2")
	expect(t, b.Trace(), nil, nil)

	b = forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.Acq("T1", "l")
	b.RRel("T1", "l") // ill-formed mode mix is tolerated, never a panic
	b.RAcq("T2", "l")
	b.Rel("T2", "l")
	b.Read("T2", "x", "r2")
	runWCP(t, b.Trace())
}

// TestRaceUntracedGoroutine: a goroutine born in untraced code is ordered
// after everything observed before its first event (a hard edge), and
// nothing after.
func TestRaceUntracedGoroutine(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Write("M", "x", "before")
	b.Read("U", "x", "u1") // U's first event: after M's write
	b.Write("M", "x", "after")
	expect(t, b.Trace(), []string{"u1~after"}, []string{"u1~after"})
}

// TestNoRaceNestedCriticalSections: an access inside nested sections
// conflicts through the outer lock too.
func TestNoRaceNestedCriticalSections(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "w1")
	b.Acq("T1", "outer")
	b.Acq("T1", "inner")
	b.Write("T1", "y", "y1")
	b.Rel("T1", "inner")
	b.Rel("T1", "outer")
	b.Acq("T2", "outer")
	b.Read("T2", "y", "y2")
	b.Rel("T2", "outer")
	b.Read("T2", "x", "r2")
	expect(t, b.Trace(), nil, nil)
}

func TestIllFormedNeverPanics(t *testing.T) {
	b := trace.NewBuilder()
	b.Rel("A", "l")
	b.Acq("A", "l")
	b.Acq("B", "l")
	b.Join("A", "nobody")
	b.Fork("A", "A", "")
	b.Write("B", "x", "b")
	b.Rel("B", "l")
	b.RRel("B", "l")
	b.ARMW("B", "a")
	b.ARMW("A", "a")
	b.Write("A", "x", "a")
	r := runWCP(t, b.Trace())
	if r.stats["illformed"] == 0 {
		t.Errorf("no ill-formed events counted: %v", r.stats)
	}
}
