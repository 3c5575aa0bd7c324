package anomaly

import (
	"fmt"
	"strings"
	"testing"

	"github.com/racekit/racekit/trace"
)

// patternTrace builds a minimal trace for pattern p: the events of thread
// symbol T[0] in goroutine A, the others in B, each atomic region a
// critical section (A's lock and B's lock), step n at site p.go:n+1. All
// of A's events come first (or all of B's, with bFirst), so the pattern's
// interleaving is never observed and must be predicted by mutation. With
// sameLock both goroutines use one lock: no interleaving is possible and
// the pattern must not be reported.
func patternTrace(p *Pattern, sameLock, bFirst bool) *trace.Builder {
	b := trace.NewBuilder()
	b.Fork("main", "A", "")
	b.Fork("main", "B", "")
	vars := map[string]string{}
	for _, s := range p.SV {
		if _, ok := vars[s]; !ok {
			vars[s] = string(rune('x' + len(vars)))
		}
	}
	emit := func(g, lock string, first bool) {
		var cur string
		for n := range p.T {
			if (p.T[n] == p.T[0]) != first {
				continue
			}
			if p.AR[n] != cur {
				if cur != "" {
					b.Rel(g, lock)
				}
				b.Acq(g, lock)
				cur = p.AR[n]
			}
			site := fmt.Sprintf("p.go:%d", n+1)
			if p.AT[n] {
				b.Write(g, vars[p.SV[n]], site)
			} else {
				b.Read(g, vars[p.SV[n]], site)
			}
		}
		b.Rel(g, lock)
	}
	la, lb := "LA", "LB"
	if sameLock {
		lb = la
	}
	if bFirst {
		emit("B", lb, false)
		emit("A", la, true)
	} else {
		emit("A", la, true)
		emit("B", lb, false)
	}
	return b
}

// TestEachBuiltinPattern runs every built-in pattern alone on a trace that
// has it only in a reordering (both trace orders), and on the same trace
// with one lock for both goroutines, which has no instance.
func TestEachBuiltinPattern(t *testing.T) {
	for _, p := range Builtin() {
		for _, bFirst := range []bool{false, true} {
			var want []string
			for n := range p.T {
				want = append(want, fmt.Sprintf("p.go:%d", n+1))
			}
			if p.Name == "race-w-w" && !bFirst {
				// Symmetric: the clip runs the pair in the order
				// the trace did not show.
				want[0], want[1] = want[1], want[0]
			}
			res := Find(patternTrace(p, false, bFirst).Trace(), []*Pattern{p}, Options{})
			found := false
			for _, a := range res.Anomalies {
				if a.Pattern == p.Name && strings.Join(a.Sites, ",") == strings.Join(want, ",") {
					found = true
					if !a.Clip.Feasible || a.Observed {
						t.Errorf("%s: clip feasible %v, observed %v", p.Name, a.Clip.Feasible, a.Observed)
					}
					var roles []int
					for _, i := range a.Clip.Anomaly {
						roles = append(roles, a.Clip.Steps[i].Anomaly)
						if a.Clip.Steps[i].Site != want[a.Clip.Steps[i].Anomaly-1] {
							t.Errorf("%s: clip step %d is at %s", p.Name, i, a.Clip.Steps[i].Site)
						}
					}
					if fmt.Sprint(roles) != fmt.Sprint(seq(len(p.T))) {
						t.Errorf("%s: clip plays the anomaly's steps in order %v", p.Name, roles)
					}
				}
			}
			if !found {
				t.Errorf("%s (B first %v): got %q, want an anomaly at %v", p.Name, bFirst, sites(res), want)
			}
			if res.Stats["invalid_schedules"] != 0 {
				t.Errorf("%s: invalid schedules", p.Name)
			}
		}
		res := Find(patternTrace(p, true, false).Trace(), []*Pattern{p}, Options{})
		if len(res.Anomalies) != 0 {
			t.Errorf("%s with one lock: got %q, want none", p.Name, sites(res))
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i + 1
	}
	return s
}

// An atomicity violation needs its two local accesses in one atomic region:
// the same accesses in two critical sections are two units of work.
func TestNoAtomicityAcrossRegions(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "A", "")
	b.Fork("main", "B", "")
	b.Acq("A", "l")
	b.Read("A", "x", "a.go:1")
	b.Rel("A", "l")
	b.Acq("A", "l")
	b.Read("A", "x", "a.go:2")
	b.Rel("A", "l")
	b.Write("B", "x", "a.go:3")
	if res := find(t, b, KindAtomicity); len(res.Anomalies) != 0 {
		t.Errorf("got %q, want none", sites(res))
	}
	// With the two reads in one region it is av-r-w-r.
	b = trace.NewBuilder()
	b.Fork("main", "A", "")
	b.Fork("main", "B", "")
	b.Acq("A", "l")
	b.Read("A", "x", "a.go:1")
	b.Read("A", "x", "a.go:2")
	b.Rel("A", "l")
	b.Write("B", "x", "a.go:3")
	if got := sites(find(t, b, KindAtomicity)); !sameStrings(got, []string{"av-r-w-r a.go:1,a.go:3,a.go:2"}) {
		t.Errorf("got %q", got)
	}
}

// A channel operation bounds a region (§4.1: wait/notify): the reads on
// either side of a send are two units of work.
func TestSyncOpSplitsRegion(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "A", "")
	b.Fork("main", "B", "")
	b.Acq("A", "l")
	b.Read("A", "x", "a.go:1")
	b.Snd("A", "ch")
	b.Read("A", "x", "a.go:2")
	b.Rel("A", "l")
	b.Write("B", "x", "a.go:3")
	if res := find(t, b, KindAtomicity); len(res.Anomalies) != 0 {
		t.Errorf("got %q, want none", sites(res))
	}
}

// User-marked atomic functions are regions; by default functions are not.
func TestAtomicFunctions(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "A", "")
	b.Fork("main", "B", "")
	b.Enter("A", "pkg.transfer")
	b.Read("A", "bal", "a.go:1")
	b.Write("A", "bal", "a.go:2")
	b.Exit("A", "pkg.transfer")
	b.Write("B", "bal", "a.go:3")
	ps := Kinds(Builtin(), KindAtomicity)
	if res := Find(b.Trace(), ps, Options{}); len(res.Anomalies) != 0 {
		t.Errorf("default: got %q, want none (functions are not atomic)", sites(res))
	}
	res := Find(b.Trace(), ps, Options{AtomicFunc: func(f string) bool { return f == "pkg.transfer" }})
	if got := sites(res); !sameStrings(got, []string{"av-r-w-w a.go:1,a.go:3,a.go:2"}) {
		t.Errorf("transfer atomic: got %q, want the lost update", got)
	}
}

func TestUserPatternFile(t *testing.T) {
	src := `# two reads of x in one region see two remote writes
stale T=t1-t2-t3-t1 SV=s1-s1-s1-s1 AR=u1-u2-u3-u1 AT=r-w-w-r
`
	ps, err := ParsePatterns("my.pat", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	b := trace.NewBuilder()
	b.Fork("main", "A", "")
	b.Fork("main", "B", "")
	b.Fork("main", "C", "")
	b.Acq("A", "l")
	b.Read("A", "x", "u.go:1")
	b.Read("A", "x", "u.go:4")
	b.Rel("A", "l")
	b.Write("B", "x", "u.go:2")
	b.Write("C", "x", "u.go:3")
	res := Find(b.Trace(), ps, Options{})
	// t2 and t3 are symbols: B and C may play them either way.
	if got := sites(res); !sameStrings(got, []string{"stale u.go:1,u.go:2,u.go:3,u.go:4", "stale u.go:1,u.go:3,u.go:2,u.go:4"}) {
		t.Errorf("got %q", got)
	}
}

func TestParsePatternErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"p T=t1-t2 SV=s-s AR=u-v AT=r-x", "f:1:30: access type \"x\": want r or w"},
		{"\n\np T=t1-t2 SV=s-s AR=u-v", "f:3:1: pattern p has no AT field"},
		{"p T=t1-t2 SV=s AR=u-v AT=r-w", "f:1:1: pattern p: T, SV, AR and AT must have the same length (2, 1, 2, 2)"},
		{"p T=t1-t1 SV=s-s AR=u-v AT=r-w", "f:1:1: pattern p: a pattern needs at least two threads"},
		{"p T=t1-t2 SV=s-s AR=u-u AT=r-w", "f:1:1: pattern p: region u is used by threads t1 and t2: a region belongs to one thread"},
		{"p  T=t1-t2 SV=s-s AR=u-v AT=r-w bogus", "f:1:33: expected KEY=a-b-c or \"consecutive\", got \"bogus\""},
		{"p T=t1-t2 Q=1 SV=s-s AR=u-v AT=r-w", "f:1:11: unknown field \"Q\" (want T, SV, AR, AT)"},
		{"p T=t1--t2 SV=s-s AR=u-v AT=r-w", "f:1:8: empty symbol in T"},
		{"p T=t1-t2 SV=s-s AR=u-v AT=r-w\np T=t1-t2 SV=s-s AR=u-v AT=w-w", "f:2:1: pattern p already defined on line 1"},
		{"T=t1-t2", "f:1:1: expected a pattern name first, got \"T=t1-t2\""},
	} {
		_, err := ParsePatterns("f", strings.NewReader(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
	ps, err := ParsePatterns("f", strings.NewReader("  # only a comment\n\nrw T=a-b SV=s-s AR=u-v AT=r-w consecutive # trailing\n"))
	if err != nil || len(ps) != 1 || !ps[0].Consecutive || ps[0].String() != "rw T=a-b SV=s-s AR=u-v AT=r-w consecutive" {
		t.Errorf("got %v, %v", ps, err)
	}
}
