package confirm

import (
	"testing"

	"github.com/racekit/racekit/sched"
)

// RaceClip draws a created race from its schedule: the steps before the
// first access (at most raceClipBefore) up to the second, one lane per
// goroutine that took a step, the two accesses numbered 1 and 2 wherever
// the note names them.
func TestRaceClip(t *testing.T) {
	s := &sched.Schedule{Notes: []sched.Note{{Kind: "race", Text: "g0.2#1 r a.go:9 | g0.1#2 w a.go:5"}}}
	for i := 0; i < 60; i++ {
		s.Steps = append(s.Steps, sched.Step{G: "g0", N: i, Kind: sched.KindLock, Site: "a.go:1"})
	}
	s.Steps = append(s.Steps,
		sched.Step{G: "g0.1", N: 2, Kind: sched.KindWrite, Site: "a.go:5"},
		sched.Step{G: "g0.1", N: 3, Kind: sched.KindUnlock, Site: "a.go:6"},
		sched.Step{G: "g0.2", N: 1, Kind: sched.KindRead, Site: "a.go:9"},
		sched.Step{G: "g0", N: 60, Kind: sched.KindLock, Site: "a.go:1"})
	a, ok := RaceClip(s, "/m/a.go:5:2:w~/m/a.go:9:3:r")
	if !ok {
		t.Fatal("no clip")
	}
	c := a.Clip
	if len(c.Steps) != raceClipBefore+3 || len(c.Goroutines) != 3 {
		t.Fatalf("%d steps on %d lanes, want %d on 3", len(c.Steps), len(c.Goroutines), raceClipBefore+3)
	}
	first, second := c.Steps[c.Anomaly[0]], c.Steps[c.Anomaly[1]]
	if len(c.Anomaly) != 2 || first.Anomaly != 1 || first.G != "g0.1" || first.Op != "w" || second.Anomaly != 2 || second.G != "g0.2" || second.Op != "r" {
		t.Errorf("the race's accesses: %+v, %+v (indices %v)", first, second, c.Anomaly)
	}
	if a.Sites[0] != "/m/a.go:5" || a.Sites[1] != "/m/a.go:9" || a.Evidence != "confirmed" {
		t.Errorf("sites %v, evidence %q", a.Sites, a.Evidence)
	}
	s.Notes = nil
	if _, ok := RaceClip(s, "a~b"); ok {
		t.Errorf("a schedule without a race note drawn")
	}
}

// TestDeadlockClip: a deadlocked run's clip is its last raceClipBefore
// steps, then each goroutine's blocked operation numbered in the notes'
// order, a lane for every goroutine either shows.
func TestDeadlockClip(t *testing.T) {
	s := &sched.Schedule{Notes: []sched.Note{
		{Kind: "deadlock", Text: "g0#61 wait /m/a.go:30"},
		{Kind: "deadlock", Text: "g0.2#1 send /m/a.go:25 (parked)"},
	}}
	for i := 0; i < 60; i++ {
		s.Steps = append(s.Steps, sched.Step{G: "g0", N: i, Kind: sched.KindAtomic, Site: "/m/a.go:1"})
	}
	s.Steps = append(s.Steps, sched.Step{G: "g0.1", N: 0, Kind: sched.KindBegin})
	a, ok := DeadlockClip(s)
	if !ok {
		t.Fatal("no clip")
	}
	c := a.Clip
	if len(c.Steps) != raceClipBefore+2 || len(c.Goroutines) != 3 || len(c.Anomaly) != 2 {
		t.Fatalf("%d steps on %d lanes, %d marked; want %d on 3, 2 marked", len(c.Steps), len(c.Goroutines), len(c.Anomaly), raceClipBefore+2)
	}
	w, snd := c.Steps[c.Anomaly[0]], c.Steps[c.Anomaly[1]]
	if w.G != "g0" || w.Op != "wait (blocked)" || w.Anomaly != 1 || snd.G != "g0.2" || snd.Op != "send (blocked)" || snd.Anomaly != 2 || snd.Index != 1 {
		t.Errorf("blocked operations %+v, %+v", w, snd)
	}
	if a.Pattern != "deadlock" || len(a.Sites) != 2 || a.Sites[1] != "/m/a.go:25" {
		t.Errorf("pattern %q, sites %v", a.Pattern, a.Sites)
	}
	s.Notes = nil
	if _, ok := DeadlockClip(s); ok {
		t.Errorf("a run that did not deadlock drawn")
	}
}
