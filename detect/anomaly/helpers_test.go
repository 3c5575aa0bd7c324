package anomaly

import (
	"strings"
	"testing"

	"github.com/racekit/racekit/trace"
)

// find runs the given kinds of built-in patterns on b's trace.
func find(t *testing.T, b *trace.Builder, kinds ...Kind) *Result {
	t.Helper()
	res := Find(b.Trace(), Kinds(Builtin(), kinds...), Options{})
	if n := res.Stats["invalid_schedules"]; n != 0 {
		t.Fatalf("%d generated schedules failed the feasibility check", n)
	}
	return res
}

// sites lists each anomaly as "pattern site1,site2,...".
func sites(res *Result) []string {
	var out []string
	for _, a := range res.Anomalies {
		out = append(out, a.Pattern+" "+strings.Join(a.Sites, ","))
	}
	return out
}

// clipSites lists the sites of a clip's data accesses, in schedule order.
func clipSites(c *Clip) []string {
	var out []string
	for _, s := range c.Steps {
		if s.Op == "r" || s.Op == "w" {
			out = append(out, s.Site)
		}
	}
	return out
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// schedule runs the schedule generator on the events of b's trace with the
// given indices, in pattern order, and checks its result.
func schedule(t *testing.T, b *trace.Builder, consecutive bool, P ...int) ([]int32, bool) {
	t.Helper()
	m := NewModel(b.Trace(), Options{})
	ps := make([]int32, len(P))
	for i, p := range P {
		ps[i] = int32(p)
	}
	steps, ok := m.generate(ps, consecutive)
	if ok {
		if err := newValidator(m).check(steps, ps, consecutive); err != nil {
			t.Fatalf("generated schedule %v is infeasible: %v", steps, err)
		}
	}
	return steps, ok
}
