package anomaly

import (
	"testing"

	"github.com/racekit/racekit/trace"
)

// figure1 is PECAN's Figure 1, whose code the text does not reproduce; we
// rebuilt it from what the text says: statements are numbered 1-7, the
// races are exactly (2,5), (2,6) and (3,7), the observed trace is
// <1,5,2,3,6,7> and the schedule <1,5,2,6,7,3> reaches ERROR (line 4):
//
//	t1:                          t2:
//	1: synchronized(l){x = 0}    5: if (y == 0) ...
//	2: y = 1                     6: y = 2
//	3: if (x == 1)               7: synchronized(l){x = 1}
//	4:     ERROR
func figure1() *trace.Builder {
	b := trace.NewBuilder()
	b.Fork("main", "t1", "main.go:0")
	b.Fork("main", "t2", "main.go:0")
	b.Acq("t1", "l")
	b.Write("t1", "x", "f1.go:1")
	b.Rel("t1", "l")
	b.Read("t2", "y", "f1.go:5")
	b.Write("t1", "y", "f1.go:2")
	b.Read("t1", "x", "f1.go:3")
	b.Write("t2", "y", "f1.go:6")
	b.Acq("t2", "l")
	b.Write("t2", "x", "f1.go:7")
	b.Rel("t2", "l")
	return b
}

func TestPaperFigure1(t *testing.T) {
	res := find(t, figure1(), KindRace)
	got := sites(res)
	want := []string{"race-w-r f1.go:2,f1.go:5", "race-w-w f1.go:6,f1.go:2", "race-w-r f1.go:7,f1.go:3"}
	if !sameStrings(got, want) {
		t.Fatalf("anomalies %q, want %q", got, want)
	}
	a := res.Anomalies[2]
	if cs, w := clipSites(a.Clip), []string{"f1.go:1", "f1.go:5", "f1.go:2", "f1.go:6", "f1.go:7", "f1.go:3"}; !sameStrings(cs, w) {
		t.Errorf("clip of race (3,7) runs %q, want the paper's <1,5,2,6,7,3>", cs)
	}
	if a.Observed || !a.Clip.Feasible || len(a.Clip.Anomaly) != 2 {
		t.Errorf("race (3,7): observed %v, feasible %v, anomaly steps %v", a.Observed, a.Clip.Feasible, a.Clip.Anomaly)
	}
}

// figure4 is Figure 4: v1, v2, v3 by one thread and v4, v5, v6 by another,
// a solid edge v1 → v4 and the race (v2, v5). Moving v2 alone before v5
// breaks its program order with v3; moving v2 and v3, then removing what
// follows the race, gives <v1, v4, v2, v5>.
func TestPaperFigure4(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("main", "A", "")
	b.Fork("main", "B", "")
	v1 := b.Snd("A", "o")
	v2 := b.Write("A", "x", "v2")
	v3 := b.Write("A", "y", "v3")
	v4 := b.Rcv("B", "o")
	v5 := b.Read("B", "x", "v5")
	b.Write("B", "z", "v6")
	steps, ok := schedule(t, b, true, v2, v5)
	if !ok {
		t.Fatal("no schedule for the race (v2, v5)")
	}
	want := []int32{0, 1, int32(v1), int32(v4), int32(v2), int32(v5)}
	if !equal32(steps, want) {
		t.Errorf("schedule %v, want forks then <v1, v4, v2, v5> = %v", steps, want)
	}
	_ = v3
}

// figure5 is Figure 5: thread A runs v1 lock(l), v2, v3 (the racy access),
// v4 unlock(l); thread B runs v5, v6 lock(l), v7 unlock(l), v8 (the other
// racy access). With a partial order v2 → v5 the race (v3, v8) satisfies
// the mutation condition but is false; without it the schedule must move
// the outermost lock block v1..v3 right before v8.
func figure5(por bool) (*trace.Builder, []int) {
	b := trace.NewBuilder()
	b.Fork("main", "A", "")
	b.Fork("main", "B", "")
	var v []int
	v = append(v, b.Acq("A", "l"))
	if por {
		v = append(v, b.Snd("A", "o"))
	} else {
		v = append(v, b.Write("A", "a", "v2"))
	}
	v = append(v, b.Write("A", "x", "v3"))
	v = append(v, b.Rel("A", "l"))
	if por {
		v = append(v, b.Rcv("B", "o"))
	} else {
		v = append(v, b.Write("B", "b", "v5"))
	}
	v = append(v, b.Acq("B", "l"))
	v = append(v, b.Rel("B", "l"))
	v = append(v, b.Read("B", "x", "v8"))
	return b, v
}

func TestPaperFigure5(t *testing.T) {
	b, v := figure5(false)
	steps, ok := schedule(t, b, true, v[2], v[7])
	if !ok {
		t.Fatal("no schedule for the real race (v3, v8)")
	}
	want := []int32{0, 1, int32(v[4]), int32(v[5]), int32(v[6]), int32(v[0]), int32(v[1]), int32(v[2]), int32(v[7])}
	if !equal32(steps, want) {
		t.Errorf("schedule %v, want forks then <v5,v6,v7,v1,v2,v3,v8> = %v", steps, want)
	}
	if res := find(t, b, KindRace); len(res.Anomalies) != 1 || !res.Anomalies[0].Clip.Feasible {
		t.Errorf("without the partial order: %q, want the race (v3, v8) with a feasible clip", sites(res))
	}

	b, v = figure5(true)
	if steps, ok := schedule(t, b, true, v[2], v[7]); ok {
		t.Errorf("false race (v3, v8) got schedule %v", steps)
	}
	res := find(t, b, KindRace)
	if len(res.Anomalies) != 0 || res.Stats["race_candidates"] == 0 || res.Stats["infeasible"] == 0 {
		t.Errorf("with v2 → v5: anomalies %q, stats %v; want the candidate (v3, v8) found and pruned", sites(res), res.Stats)
	}
}

func equal32(a, b []int32) bool {
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
