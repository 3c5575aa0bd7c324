package anomaly

import (
	"testing"

	"github.com/racekit/racekit/trace"
)

// lostUpdateTrace is a lost update (av-r-w-w) whose remote write comes from
// one statement, set.go:5 (a setter called from two places), that goroutine
// B runs both inside lock l, which A's read-modify-write also holds, and
// outside any lock. Only the unlocked run can come between A's read and
// write: the locked one shares A's lock (Algorithm 2 finds no position in
// A's window without l). locked gives B's runs of set.go:5 in trace order,
// true for a locked one; A's region comes right before B's last run, so
// that the trace never shows the anomaly and the schedule generator
// (Algorithm 4) can hold A inside its region while B runs. It returns the
// index of B's last unlocked run, -1 if none.
func lostUpdateTrace(locked ...bool) (*trace.Builder, int) {
	b := trace.NewBuilder()
	b.Fork("main", "A", "")
	b.Fork("main", "B", "")
	unlocked := -1
	for i, lk := range locked {
		if i == len(locked)-1 {
			b.Acq("A", "l")
			b.Read("A", "x", "a.go:1")
			b.Write("A", "x", "a.go:2")
			b.Rel("A", "l")
		}
		if lk {
			b.Acq("B", "l")
			b.Write("B", "x", "set.go:5")
			b.Rel("B", "l")
		} else {
			unlocked = b.Write("B", "x", "set.go:5")
		}
	}
	return b, unlocked
}

// Every event of a site is a candidate binding for a pattern step (§5.2
// binds any event of the index, not the first of each statement): the
// violating instance may be a statement's second run.
func TestEverySiteEventIsACandidate(t *testing.T) {
	want := []string{"av-r-w-w a.go:1,set.go:5,a.go:2"}
	for _, tc := range []struct {
		name   string
		locked []bool
		want   []string
	}{
		// Binding only the first event of set.go:5 (the locked one)
		// missed this.
		{"unlocked second", []bool{true, false}, want},
		{"unlocked first", []bool{false, true}, want},
		{"always locked", []bool{true, true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, unlocked := lostUpdateTrace(tc.locked...)
			res := find(t, b, KindAtomicity)
			got := sites(res)
			if !sameStrings(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if len(got) == 0 {
				return
			}
			// The remote write is B's unlocked run.
			if a := res.Anomalies[0]; a.Seqs[1] != b.Trace().Events[unlocked].Seq {
				t.Errorf("remote write is seq %d, want the unlocked one, seq %d", a.Seqs[1], b.Trace().Events[unlocked].Seq)
			}
		})
	}
}

// Options.SiteEvents bounds the runs of one site tried per enumeration, but
// a run holding a lockset none of the tried runs held is still tried, and
// the runs left out are counted.
func TestSiteEventsBound(t *testing.T) {
	// Five locked runs of set.go:5, then the unlocked one.
	b, _ := lostUpdateTrace(true, true, true, true, true, false)
	var ps []*Pattern
	for _, p := range Builtin() {
		if p.Name == "av-r-w-w" {
			ps = append(ps, p)
		}
	}
	res := Find(b.Trace(), ps, Options{SiteEvents: 1})
	if got := sites(res); !sameStrings(got, []string{"av-r-w-w a.go:1,set.go:5,a.go:2"}) {
		t.Errorf("SiteEvents 1: got %q, want the lost update through the unlocked run", got)
	}
	// One enumeration of B's writes binds the second step: the
	// first locked run is tried, the other four share its site and
	// lockset, the unlocked run has a new lockset.
	if n := res.Stats["site_events_skipped"]; n != 4 {
		t.Errorf("site_events_skipped = %d, want 4", n)
	}
	res = Find(b.Trace(), ps, Options{SiteEvents: -1})
	if n := res.Stats["site_events_skipped"]; n != 0 || len(res.Anomalies) != 1 {
		t.Errorf("unbounded: %d skipped, %q; want 0 and the lost update", n, sites(res))
	}
}

// A recorded trace leaves function objects unnamed and names the function
// in the entry's site (rt's FuncEnter): Options.AtomicFunc matches it
// there, as it matches a written trace's enter(pkg.transfer).
func TestAtomicFunctionBySiteFunc(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "A", "")
	b.Fork("main", "B", "")
	site := b.Site("a.go:10")
	b.Trace().M.Sites[site].Func = "pkg.transfer"
	b.Add(trace.Event{G: b.G("A"), Op: trace.OpFuncEnter, Obj: 0x99, Site: site})
	b.Read("A", "bal", "a.go:1")
	b.Write("A", "bal", "a.go:2")
	b.Add(trace.Event{G: b.G("A"), Op: trace.OpFuncExit, Obj: 0x99, Site: site})
	b.Write("B", "bal", "a.go:3")
	res := Find(b.Trace(), Kinds(Builtin(), KindAtomicity), Options{AtomicFunc: func(f string) bool { return f == "pkg.transfer" }})
	if got := sites(res); !sameStrings(got, []string{"av-r-w-w a.go:1,a.go:3,a.go:2"}) {
		t.Errorf("got %q, want the lost update in transfer", got)
	}
}
