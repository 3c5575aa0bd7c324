package confirm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/racekit/racekit/detect/anomaly"
	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/text"
)

// hatched judges a run by its schedule: the anomaly's events must have run
// as access points at their sites, in pattern order, back to back for a
// race, on variables related as in the recorded run, with no departure.
func TestHatchedVerdict(t *testing.T) {
	race := &hatchCand{consecutive: true, events: []hatchEvent{
		{G: "g0.1", Ev: 5, Kind: sched.KindWrite, Site: "a.go:7", Obj: 0x10},
		{G: "g0.2", Ev: 3, Kind: sched.KindRead, Site: "a.go:5", Obj: 0x10},
	}}
	// x++ by g0.1 racing with g0.2's read: g0.1's own read of x may run
	// between g0.2's read and g0.1's write.
	readWrite := &hatchCand{consecutive: true, events: []hatchEvent{
		{G: "g0.2", Ev: 3, Kind: sched.KindRead, Site: "a.go:5", Obj: 0x10},
		{G: "g0.1", Ev: 5, Kind: sched.KindWrite, Site: "a.go:7", Obj: 0x10},
	}}
	step := func(g string, ev int, k sched.Kind, site string, obj uint64) sched.Step {
		return sched.Step{G: g, Ev: ev, Kind: k, Site: "/src/" + site, Obj: obj}
	}
	good := []sched.Step{
		step("g0.1", 0, sched.KindBegin, "", 0),
		step("g0.2", 0, sched.KindBegin, "", 0),
		step("g0.1", 2, sched.KindLock, "a.go:2", 0x99),
		step("g0.1", 5, sched.KindWrite, "a.go:7", 0xc0),
		step("g0.2", 3, sched.KindRead, "a.go:5", 0xc0),
		step("g0.1", 6, sched.KindUnlock, "a.go:8", 0x99),
	}
	for _, tc := range []struct {
		name   string
		cand   *hatchCand
		steps  []sched.Step
		notes  []sched.Note
		reason string // "" for confirmed
	}{
		{"confirmed", race, good, nil, ""},
		{"departure", race, good, []sched.Note{{Kind: "departure", Text: "clip step 3: g0.2 is not at a scheduling point"}}, "departed"},
		{"other order", race, []sched.Step{good[0], good[1], good[4], good[3]}, nil, "other order"},
		{"not adjacent", race, []sched.Step{good[0], good[1], good[3], good[2], good[4]}, nil, "back to back"},
		// Steps in between that commute with the first access (the second
		// goroutine's own read of x before its write, as in x++; another
		// goroutine's step on another variable) leave them adjacent in an
		// equivalent run; a conflicting access by a third goroutine does not.
		{"commuting in between", readWrite, []sched.Step{good[0], good[1],
			step("g0.2", 3, sched.KindRead, "a.go:5", 0xc0), step("g0.1", 4, sched.KindRead, "a.go:7", 0xc0),
			step("g0.3", 1, sched.KindWrite, "b.go:1", 0xe0), step("g0.1", 5, sched.KindWrite, "a.go:7", 0xc0)}, nil, ""},
		// An earlier instance of the second access (the same statement in
		// a loop) ran first: that instance raced.
		{"earlier instance", race, []sched.Step{good[0], good[1], good[3],
			step("g0.2", 2, sched.KindRead, "a.go:5", 0xc0), good[4]}, nil, ""},
		{"write in between", race, []sched.Step{good[0], good[1], good[3],
			step("g0.2", 2, sched.KindRead, "a.go:4", 0xc0), good[4]}, nil, "same variable in between"},
		{"first goroutine in between", readWrite, []sched.Step{good[0], good[1],
			step("g0.2", 3, sched.KindRead, "a.go:5", 0xc0), step("g0.2", 4, sched.KindLock, "a.go:6", 0x99),
			step("g0.1", 5, sched.KindWrite, "a.go:7", 0xc0)}, nil, "g0.2 ran lock"},
		{"conflict in between", race, []sched.Step{good[0], good[1], good[3],
			step("g0.3", 1, sched.KindRead, "b.go:1", 0xc0), good[4]}, nil, "same variable in between"},
		// A later instance of the first access (every worker writes the
		// field at one statement) is adjacent to the second: the same pair
		// of statements raced. Steps after it are checked against it.
		{"later instance of the first", race, []sched.Step{good[0], good[1], good[3],
			step("g0.3", 4, sched.KindWrite, "a.go:7", 0xc0), good[4]}, nil, ""},
		{"later instance, then its goroutine", race, []sched.Step{good[0], good[1], good[3],
			step("g0.3", 4, sched.KindWrite, "a.go:7", 0xc0), step("g0.3", 5, sched.KindUnlock, "a.go:8", 0x99), good[4]}, nil, "g0.3 ran unlock"},
		{"later instance on another variable", race, []sched.Step{good[0], good[1], good[3],
			step("g0.3", 4, sched.KindWrite, "a.go:7", 0xd0), step("g0.3", 5, sched.KindWrite, "a.go:9", 0xc0), good[4]}, nil, "same variable in between"},
		{"other variable", race, []sched.Step{good[0], good[1], good[3], step("g0.2", 3, sched.KindRead, "a.go:5", 0xd0)}, nil, "variables differ"},
		{"not an access there", race, []sched.Step{good[0], good[1], good[3], step("g0.2", 3, sched.KindLock, "a.go:5", 0xc0)}, nil, "where the clip has"},
		{"never reached", race, []sched.Step{good[0], good[3]}, nil, "never reached"},
		// The event inside a point's segment (an atomic operation's data
		// access after its lock and atomic events): the point before it.
		{"inside a segment", race, []sched.Step{good[0], good[1], good[2],
			step("g0.1", 3, sched.KindWrite, "a.go:7", 0xc0), good[4], good[5]}, nil, ""},
	} {
		ok, why := hatched(tc.cand, &sched.Schedule{Steps: tc.steps, Notes: tc.notes})
		if tc.reason == "" && !ok {
			t.Errorf("%s: not confirmed: %s", tc.name, why)
		}
		if tc.reason != "" && (ok || !strings.Contains(why, tc.reason)) {
			t.Errorf("%s: confirmed %v, reason %q; want a reason with %q", tc.name, ok, why, tc.reason)
		}
	}
}

// A witness's steps: a step without a check of its own is dropped when
// the next step is the same goroutine's (running up to that one runs it).
func TestCompactSteps(t *testing.T) {
	in := []sched.ClipStep{{G: "a", Ev: 0}, {G: "a", Ev: 1}, {G: "b", Ev: 0}, {G: "a", Ev: 2}, {G: "a", Ev: 3, Kind: sched.KindWrite, Site: "x.go:1"}, {G: "b", Ev: 1}}
	got := compactSteps(in)
	want := []sched.ClipStep{{G: "a", Ev: 1}, {G: "b", Ev: 0}, {G: "a", Ev: 3, Kind: sched.KindWrite, Site: "x.go:1"}, {G: "b", Ev: 1}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// A full clip gets a wide candidate: every access site of the clip is a
// statement under test, so every access has a position of its own (they
// count); the anomaly's candidate counts only its own statements.
// A compact clip gets none.
func TestWideCandidates(t *testing.T) {
	tr, err := text.Parse("wide.rktx", `
T0|fork(T1)|m.go:1
T0|w(n)|m.go:2
T0|r(n)|m.go:3
T0|w(x)|m.go:4
T1|begin|m.go:1
T1|r(n)|m.go:5
T1|w(n)|m.go:5
T1|r(x)|m.go:6
`)
	if err != nil {
		t.Fatal(err)
	}
	wide := 0
	for _, mode := range []anomaly.ClipMode{anomaly.ClipFull, anomaly.ClipCompact} {
		res := anomaly.Find(tr, anomaly.Kinds(anomaly.Builtin(), anomaly.KindRace), anomaly.Options{Clips: mode})
		cands := anomalyCands(tr, res)
		if len(cands) == 0 {
			t.Fatalf("mode %v: no candidates", mode)
		}
		for _, cd := range cands {
			if mode == anomaly.ClipCompact {
				if cd.wide != nil {
					t.Errorf("compact clip of %v: a wide candidate", cd.Sites)
				}
				continue
			}
			other := false // an access outside the anomaly's statements
			for _, line := range []int{2, 3, 4, 5, 6} {
				other = other || clipHasLine(tr, cd, line) && !cd.pair().Matches("m.go", line)
			}
			if !other {
				if cd.wide != nil {
					t.Errorf("full clip of %v has only the anomaly's statements: a wide candidate", cd.Sites)
				}
				continue
			}
			wide++
			if cd.wide == nil {
				t.Fatalf("full clip of %v: no wide candidate", cd.Sites)
			}
			pair := cd.wide.pair()
			for _, line := range []int{2, 3, 4, 5, 6} {
				if !pair.Matches("m.go", line) && clipHasLine(tr, cd, line) {
					t.Errorf("%v: wide pair %v misses m.go:%d", cd.Sites, pair, line)
				}
			}
			// The same steps, at positions that count the other accesses.
			sum := func(steps []sched.ClipStep) (n int) {
				for _, st := range steps {
					n += st.Ev
				}
				return n
			}
			if sum(cd.wide.steps) <= sum(cd.steps) {
				t.Errorf("%v: wide clip %v, the anomaly's %v: want later positions", cd.Sites, cd.wide.steps, cd.steps)
			}
			if len(cd.wide.events) != len(cd.events) {
				t.Errorf("%v: %d anomaly events, wide %d", cd.Sites, len(cd.events), len(cd.wide.events))
			}
		}
	}
	if wide == 0 {
		t.Error("no full clip with accesses outside its anomaly's statements: the test needs one (the race on x)")
	}
}

// A race hatching did not confirm is observed when the recorded run had
// it (hb reports its two statements on its variable), pruned when the
// recorded run ordered the accesses (here through a lock) or when it is
// not a race; a confirmed run wins.
func TestHatchObservedVerdict(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("g1")
	b.Begin("g2")
	b.Write("g1", "x", "a.go:5") // x: unordered with g2's read
	b.Write("g1", "y", "a.go:6")
	b.Acq("g1", "m")
	b.Rel("g1", "m")
	b.Read("g2", "x", "a.go:9")
	b.Acq("g2", "m") // y: ordered through m
	b.Rel("g2", "m")
	b.Read("g2", "y", "a.go:10")
	tr := b.Trace()
	observed := observedRaces(tr)
	x, y := b.Obj("x"), b.Obj("y")
	race := func(s1, s2 string, obj uint64) *hatchCand {
		return &hatchCand{consecutive: true, events: []hatchEvent{{Site: s1, Obj: obj}, {Site: s2, Obj: obj}}}
	}
	failed := []HatchRun{{Reason: "departed from the clip"}}
	for _, c := range []struct {
		cd   *hatchCand
		runs []HatchRun
		want string
	}{
		{race("a.go:9", "a.go:5", x), failed, "observed"}, // either order
		{race("a.go:5", "a.go:9", x+8), failed, "pruned"}, // another variable
		{race("a.go:6", "a.go:10", y), failed, "pruned"},  // ordered by m
		{race("a.go:5", "a.go:9", x), []HatchRun{{}, {Confirmed: true}}, "confirmed"},
		{&hatchCand{events: []hatchEvent{{Site: "a.go:5", Obj: x}, {Site: "a.go:9", Obj: x}}}, failed, "pruned"}, // not a race
	} {
		if got := verdictOf(c.cd, c.runs, observed); got != c.want {
			t.Errorf("%+v: verdict %s, want %s (observed %v)", c.cd.events, got, c.want, observed)
		}
	}
}

func TestRecordSpecs(t *testing.T) {
	for _, c := range []struct {
		list    string
		n       int
		preempt float64
		want    string
	}{
		{"0", 1, 0, "[{0 0}]"},
		{"0", 3, 0.5, "[{0 0} {0 0} {0 0}]"},
		{"5", 3, 0, "[{5 0} {6 0} {7 0}]"},
		{"5", 2, 0.5, "[{5 0.5} {6 0.5}]"},
		{"0,1,2", 1, 0, "[{0 0} {1 0} {2 0}]"},
		{"0, 7", 2, 0.25, "[{0 0} {7 0.25}]"},
		{"1,2/0.5,3/0", 1, 0.1, "[{1 0.1} {2 0.5} {3 0}]"},
		{"1,2", 3, 0, "error"},
		{"", 1, 0, "error"},
		{"-1", 1, 0, "error"},
		{"0/0.5", 1, 0, "error"},
		{"1/2", 1, 0, "error"},
		{"1/x", 1, 0, "error"},
	} {
		got, err := RecordSpecs(c.list, c.n, c.preempt)
		s := fmt.Sprint(got)
		if err != nil {
			s = "error"
		}
		if s != c.want {
			t.Errorf("RecordSpecs(%q, %d, %v) = %s (%v), want %s", c.list, c.n, c.preempt, s, err, c.want)
		}
	}
}

// TestAtRootBegin: a step that runs a goroutine born outside instrumented
// code up to its Begin is left out of a clip (it has no point there: every
// clip of jobsys departed at step 0 once package initializers recorded
// allocations); a forked goroutine's Begin, and later positions, stay.
func TestAtRootBegin(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Alloc("M", "x", 8)
	b.Fork("M", "T", "a.go:1")
	b.Begin("T")
	tr := b.Trace()
	x := newIndexer(tr)
	m, c := tr.M.Goroutines[0].ID, tr.M.Goroutines[1].ID
	if !x.atRootBegin(tr, m, 0) {
		t.Errorf("main's Begin: not left out")
	}
	if x.atRootBegin(tr, m, 1) || x.atRootBegin(tr, c, 0) {
		t.Errorf("a later position, or a forked goroutine's Begin, left out")
	}
}

// clipHasLine reports whether cd's clip has an access at m.go:line.
func clipHasLine(tr *trace.Trace, cd *hatchCand, line int) bool {
	x := newIndexer(tr)
	for _, st := range cd.anomaly.Clip.Steps {
		e := x.event(tr, st.GID, st.Index)
		if e.Op.IsAccess() && tr.M.Site(e.Site).Line == line {
			return true
		}
	}
	return false
}
