package sched

import (
	"fmt"
	"testing"
)

// A small simulator of scheduling-point sequences, no real goroutines: each
// goroutine is a list of steps; locks block; a step may change variables
// and jump (an if). It drives a Strategy the way rt does: collect the
// waiting goroutines in creation order, mark the enabled ones, run the one
// picked for one step.

type simStep struct {
	kind Kind
	obj  uint64
	size uint64
	// stmt: which statements of the pair the step is at (Point.Stmt); a
	// step with stmt set is a pair point.
	stmt uint8
	site string
	col  int
	// do runs when the step executes; it returns the index of the next
	// step (-1: the next one).
	do func(v map[string]int) int
	// err marks an ERROR statement.
	err string
}

type simG struct {
	name  string
	steps []simStep
	pc    int
}

type simResult struct {
	order  []string // the points executed, "g:site"
	errors []string
	vars   map[string]int
	stuck  bool
	steps  []Step
}

// simulate runs the goroutines under s until all are done or nothing is
// enabled.
func simulate(s Strategy, gs []*simG) simResult {
	held := map[uint64]string{}
	res := simResult{vars: map[string]int{}}
	n := map[string]int{}
	for iter := 0; iter < 100000; iter++ {
		var w []Point
		var idx []*simG
		anyEnabled := false
		for _, g := range gs {
			if g.pc >= len(g.steps) {
				continue
			}
			st := g.steps[g.pc]
			en := true
			if st.kind == KindLock {
				_, h := held[st.obj]
				en = !h
			}
			anyEnabled = anyEnabled || en
			w = append(w, Point{G: g.name, N: n[g.name], Kind: st.kind, Obj: st.obj, Size: st.size, Site: st.site, Col: st.col, Pair: st.stmt != 0, Stmt: st.stmt, Enabled: en, Ev: simEv(n[g.name])})
			idx = append(idx, g)
		}
		if len(w) == 0 {
			return res
		}
		if !anyEnabled {
			res.stuck = true
			return res
		}
		i := s.Next(w)
		if !w[i].Enabled {
			panic(fmt.Sprintf("strategy picked a disabled goroutine: %v", w[i]))
		}
		g := idx[i]
		st := g.steps[g.pc]
		res.steps = append(res.steps, Step{G: g.name, N: n[g.name], Kind: st.kind, Site: st.site})
		n[g.name]++
		res.order = append(res.order, g.name+":"+st.site)
		switch st.kind {
		case KindLock:
			held[st.obj] = g.name
		case KindUnlock:
			delete(held, st.obj)
		}
		next := -1
		if st.do != nil {
			next = st.do(res.vars)
		}
		if st.err != "" {
			res.errors = append(res.errors, st.err)
		}
		if next >= 0 {
			g.pc = next
		} else {
			g.pc++
		}
	}
	panic("simulation does not end")
}

const (
	objX = 0x100 + 8*iota
	objY
	objZ
	objL
)

func set(name string, val int) func(map[string]int) int {
	return func(v map[string]int) int { v[name] = val; return -1 }
}

// figure1 is Figure 1 of the RaceFuzzer paper with racing pair pair (the
// statement numbers of the paper as sites "1".."14"). Accesses at the
// pair's statements are pair points; the others are not scheduling points
// in rt, but they are steps here (rt runs them within the holder's turn).
func figure1(pair [2]string) []*simG {
	p := func(site string) uint8 {
		var m uint8
		for i, s := range pair {
			if s == site {
				m |= 1 << i
			}
		}
		return m
	}
	t1 := &simG{name: "g0.1", steps: []simStep{
		{kind: KindWrite, obj: objX, site: "1", stmt: p("1"), do: set("x", 1)},
		{kind: KindLock, obj: objL, site: "2"},
		{kind: KindWrite, obj: objY, site: "3", stmt: p("3"), do: set("y", 1)},
		{kind: KindUnlock, obj: objL, site: "4"},
		{kind: KindRead, obj: objZ, site: "5", stmt: p("5"), do: func(v map[string]int) int {
			if v["z"] == 1 {
				return 5
			}
			return 6
		}},
		{kind: KindOther, site: "6", err: "ERROR1"},
	}}
	t2 := &simG{name: "g0.2", steps: []simStep{
		{kind: KindWrite, obj: objZ, site: "7", stmt: p("7"), do: set("z", 1)},
		{kind: KindLock, obj: objL, site: "8"},
		{kind: KindRead, obj: objY, site: "9", stmt: p("9"), do: func(v map[string]int) int {
			if v["y"] == 1 {
				return 3
			}
			return 5
		}},
		{kind: KindRead, obj: objX, site: "10", stmt: p("10"), do: func(v map[string]int) int {
			if v["x"] != 1 {
				return 4
			}
			return 5
		}},
		{kind: KindOther, site: "11", err: "ERROR2"},
		{kind: KindUnlock, obj: objL, site: "14"},
	}}
	return []*simG{t1, t2}
}

// figure2 is Figure 2 with n calls (f1..fn) before statement 8.
func figure2(n int) []*simG {
	t1 := &simG{name: "g0.1"}
	t1.steps = append(t1.steps, simStep{kind: KindLock, obj: objL, site: "1"})
	for i := 0; i < n; i++ {
		// Each fi does a synchronization operation, a scheduling point.
		t1.steps = append(t1.steps, simStep{kind: KindAtomic, obj: 0x900, site: fmt.Sprintf("f%d", i+1)})
	}
	t1.steps = append(t1.steps,
		simStep{kind: KindUnlock, obj: objL, site: "7"},
		simStep{kind: KindRead, obj: objX, site: "8", stmt: 1, do: func(v map[string]int) int {
			if v["x"] == 0 {
				return -1
			}
			return len(t1.steps) // done
		}},
		simStep{kind: KindOther, site: "9", err: "ERROR"},
	)
	t2 := &simG{name: "g0.2", steps: []simStep{
		{kind: KindWrite, obj: objX, site: "10", stmt: 2, do: set("x", 1)},
		{kind: KindLock, obj: objL, site: "11"},
		{kind: KindAtomic, obj: 0x900, site: "12"},
		{kind: KindUnlock, obj: objL, site: "13"},
	}}
	return []*simG{t1, t2}
}

func TestRaceFuzzerFigure1(t *testing.T) {
	const runs = 200
	// Case 2: RaceSet = {5, 7} is a real race; ERROR1 in about half.
	created, errs := 0, 0
	for seed := uint64(0); seed < runs; seed++ {
		rf := NewRaceFuzzer(seed)
		res := simulate(rf, figure1([2]string{"5", "7"}))
		if res.stuck {
			t.Fatalf("seed %d: stuck", seed)
		}
		if len(rf.Races()) > 0 {
			created++
			r := rf.Races()[0]
			sites := map[string]bool{r.First.Site: true, r.Second.Site: true}
			if !sites["5"] || !sites["7"] {
				t.Errorf("seed %d: race between %v and %v, want 5 and 7", seed, r.First, r.Second)
			}
			// The resolution decides ERROR1: 7 first reaches it.
			if got, want := contains(res.errors, "ERROR1"), r.First.Site == "7"; got != want {
				t.Errorf("seed %d: ERROR1 reached %v, but %s ran first", seed, got, r.First.Site)
			}
		}
		if contains(res.errors, "ERROR1") {
			errs++
		}
		if contains(res.errors, "ERROR2") {
			t.Errorf("seed %d: ERROR2 is unreachable", seed)
		}
	}
	if created != runs {
		t.Errorf("race (5,7) created in %d of %d runs, want all", created, runs)
	}
	if errs < runs*35/100 || errs > runs*65/100 {
		t.Errorf("ERROR1 reached in %d of %d runs, want about half", errs, runs)
	}
	// Case 1: RaceSet = {1, 10} is a false race: never created, and the
	// postponed thread is released (line 26) so every run ends.
	for seed := uint64(0); seed < runs; seed++ {
		rf := NewRaceFuzzer(seed)
		res := simulate(rf, figure1([2]string{"1", "10"}))
		if res.stuck || len(rf.Races()) != 0 {
			t.Fatalf("seed %d: pair (1,10): stuck %v, races %v", seed, res.stuck, rf.Races())
		}
	}
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func TestRaceFuzzerFigure2(t *testing.T) {
	const runs = 200
	for _, n := range []int{0, 5, 50, 500} {
		created, errs, plain := 0, 0, 0
		for seed := uint64(0); seed < runs; seed++ {
			rf := NewRaceFuzzer(seed)
			res := simulate(rf, figure2(n))
			if len(rf.Races()) > 0 {
				created++
			}
			if contains(res.errors, "ERROR") {
				errs++
			}
			// The simple random scheduler, for comparison (§3.2).
			if contains(simulate(NewRandom(seed), figure2(n)).errors, "ERROR") {
				plain++
			}
		}
		if created != runs {
			t.Errorf("n=%d: race created in %d of %d runs, want all (probability 1)", n, created, runs)
		}
		if errs < runs*35/100 || errs > runs*65/100 {
			t.Errorf("n=%d: ERROR in %d of %d runs, want about half", n, errs, runs)
		}
		if n >= 50 && plain > runs/10 {
			t.Errorf("n=%d: the random scheduler reached ERROR in %d of %d runs; the example says rarely", n, plain, runs)
		}
		t.Logf("n=%d: racefuzzer ERROR %d/%d, random ERROR %d/%d", n, errs, runs, plain, runs)
	}
}

// TestRaceFuzzerReadersAndWriter: two readers postponed at the pair wait
// for the writer; R holds both (Algorithm 2 returns every racing postponed
// goroutine), and both run before the writer when the coin says so.
func TestRaceFuzzerReadersAndWriter(t *testing.T) {
	mk := func() []*simG {
		return []*simG{
			{name: "g0.1", steps: []simStep{{kind: KindRead, obj: objX, site: "a", stmt: 1}}},
			{name: "g0.2", steps: []simStep{{kind: KindRead, obj: objX, site: "a", stmt: 1}}},
			{name: "g0.3", steps: []simStep{{kind: KindAtomic, site: "s"}, {kind: KindAtomic, site: "s"}, {kind: KindWrite, obj: objX, site: "b", stmt: 2}}},
		}
	}
	sawBoth := false
	for seed := uint64(0); seed < 100; seed++ {
		rf := NewRaceFuzzer(seed)
		res := simulate(rf, mk())
		// Two reads never race with each other.
		for _, r := range rf.Races() {
			if r.First.Kind == KindRead && r.Second.Kind == KindRead {
				t.Fatalf("seed %d: read-read race %v", seed, r)
			}
		}
		if len(rf.Races()) == 2 && res.order[len(res.order)-1] == "g0.3:b" {
			sawBoth = true
		}
	}
	if !sawBoth {
		t.Error("never saw both postponed readers run before the writer")
	}
}

// TestRaceFuzzerDifferentObjects: accesses at the pair's statement (a
// statement racing with itself, (a, a)) on different locations are not a
// race; every goroutine still finishes.
func TestRaceFuzzerDifferentObjects(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		rf := NewRaceFuzzer(seed)
		res := simulate(rf, []*simG{
			{name: "g0.1", steps: []simStep{{kind: KindWrite, obj: objX, site: "a", stmt: 3}, {kind: KindWrite, obj: objX, site: "a", stmt: 3}}},
			{name: "g0.2", steps: []simStep{{kind: KindWrite, obj: objY, site: "a", stmt: 3}}},
		})
		if len(rf.Races()) != 0 || res.stuck || len(res.order) != 3 {
			t.Fatalf("seed %d: races %v, stuck %v, order %v", seed, rf.Races(), res.stuck, res.order)
		}
	}
}

// TestRaceFuzzerLivelock: the monitor's bound releases a goroutine that
// waits for a partner that only comes after a long busy loop of
// scheduling points of another goroutine that never ends while it waits.
func TestRaceFuzzerLivelock(t *testing.T) {
	rf := NewRaceFuzzer(1)
	rf.MaxWait = 20
	spin := &simG{name: "g0.2"}
	for i := 0; i < 200; i++ {
		spin.steps = append(spin.steps, simStep{kind: KindAtomic, site: "spin"})
	}
	res := simulate(rf, []*simG{
		{name: "g0.1", steps: []simStep{{kind: KindWrite, obj: objX, site: "a", stmt: 1}, {kind: KindOther, site: "after"}}},
		spin,
	})
	pos := -1
	for i, o := range res.order {
		if o == "g0.1:a" {
			pos = i
		}
	}
	if pos < 0 || pos > 40 {
		t.Errorf("postponed goroutine ran its access at decision %d, want within the bound", pos)
	}
}

func TestRandomDeterministic(t *testing.T) {
	a := simulate(NewRandom(42), figure2(20))
	b := simulate(NewRandom(42), figure2(20))
	if fmt.Sprint(a.order) != fmt.Sprint(b.order) {
		t.Fatal("same seed, different schedules")
	}
	differ := false
	for seed := uint64(0); seed < 20 && !differ; seed++ {
		differ = fmt.Sprint(simulate(NewRandom(seed), figure2(20)).order) != fmt.Sprint(a.order)
	}
	if !differ {
		t.Error("20 seeds give one schedule")
	}
}

func TestRandomUniform(t *testing.T) {
	s := NewRandom(7)
	w := []Point{{G: "a", Enabled: true}, {G: "b"}, {G: "c", Enabled: true}, {G: "d", Enabled: true}}
	count := map[int]int{}
	for i := 0; i < 3000; i++ {
		count[s.Next(w)]++
	}
	if count[1] != 0 {
		t.Fatal("picked a disabled goroutine")
	}
	for _, i := range []int{0, 2, 3} {
		if count[i] < 800 || count[i] > 1200 {
			t.Errorf("goroutine %d picked %d of 3000 times, want about 1000", i, count[i])
		}
	}
}

func TestReplayFollowsRecording(t *testing.T) {
	for seed := uint64(0); seed < 30; seed++ {
		rf := NewRaceFuzzer(seed)
		rec := simulate(rf, figure1([2]string{"5", "7"}))
		rp := NewReplay(rec.steps)
		got := simulate(rp, figure1([2]string{"5", "7"}))
		if fmt.Sprint(got.order) != fmt.Sprint(rec.order) || rp.Diverged() {
			t.Fatalf("seed %d: replay %v, recorded %v (notes %v)", seed, got.order, rec.order, rp.Notes())
		}
	}
}

func TestReplayDivergence(t *testing.T) {
	rec := simulate(NewRandom(3), figure2(3))
	steps := append([]Step(nil), rec.steps...)
	// Claim the other goroutine ran at step 0.
	if steps[0].G == "g0.1" {
		steps[0].G = "g0.2"
	} else {
		steps[0].G = "g0.1"
	}
	steps[0].Kind = KindBegin // and did something it never does there
	rp := NewReplay(steps)
	res := simulate(rp, figure2(3))
	if !rp.Diverged() || res.stuck {
		t.Fatalf("diverged %v stuck %v", rp.Diverged(), res.stuck)
	}
	notes := rp.Notes()
	if len(notes) != 1 || notes[0].Kind != "divergence" {
		t.Fatalf("notes %v, want one divergence", notes)
	}
}

// simEv is the event index of a goroutine's n-th point in the simulator:
// as if each point's operation and the plain code after it recorded ten
// events.
func simEv(n int) int { return 10 * n }

func TestClip(t *testing.T) {
	// Make statement 10 run after statement 8 in Figure 2: g0.1's 5 points
	// (lock, f1, f2, unlock, 8: indices 0..4), then g0.2's first.
	clip := []ClipStep{{G: "g0.1", Ev: simEv(4), Kind: KindRead, Site: "8"}, {G: "g0.2", Ev: simEv(0), Kind: KindWrite}}
	// Up to an event that is not a point (inside point 3's segment): g0.1
	// runs up to its point 3 (the unlock) while g0.2 is held; then 8 and
	// 10 run in either order, and about half the runs reach ERROR.
	loose := []ClipStep{{G: "g0.1", Ev: simEv(3) + 4}}
	errs := 0
	for seed := uint64(0); seed < 30; seed++ {
		c := NewClip(clip, seed)
		res := simulate(c, figure2(2))
		if !c.Done() || !contains(res.errors, "ERROR") {
			t.Fatalf("seed %d: done %v, errors %v, order %v", seed, c.Done(), res.errors, res.order)
		}
		if n := c.Notes(); len(n) != 0 {
			t.Fatalf("seed %d: notes %v", seed, n)
		}
		c = NewClip(loose, seed)
		res = simulate(c, figure2(2))
		if !c.Done() {
			t.Fatalf("loose, seed %d: not done, order %v", seed, res.order)
		}
		// Point 3 of g0.1 ran before g0.2's write.
		i3, iw := index(res.order, "g0.1:7"), index(res.order, "g0.2:10")
		if i3 < 0 || iw < 0 || i3 > iw {
			t.Fatalf("loose, seed %d: order %v", seed, res.order)
		}
		if contains(res.errors, "ERROR") {
			errs++
		}
	}
	if errs == 0 || errs == 30 {
		t.Errorf("loose clip: ERROR in %d of 30 runs, want some but not all", errs)
	}
	// A clip naming the wrong operation is reported as a departure.
	c := NewClip([]ClipStep{{G: "g0.2", Ev: 0, Kind: KindRead}, {G: "g0.1", Ev: 0}}, 1)
	simulate(c, figure2(2))
	if n := c.Notes(); len(n) != 1 || n[0].Kind != "departure" {
		t.Fatalf("notes %v, want one departure", n)
	}
	// The departure gave the clip up: no goroutine is waited for, the
	// later step is not followed, the clip is not done.
	if c.Want() != "" || c.Done() {
		t.Fatalf("after a departure: want %q, done %v", c.Want(), c.Done())
	}
	// A goroutine that ended has run all its steps.
	c = NewClip([]ClipStep{{G: "g0.2", Ev: 1000}, {G: "g0.1", Ev: 0}}, 1)
	c.Ended("g0.2")
	if c.Want() != "g0.1" {
		t.Fatalf("want %q after g0.2 ended", c.Want())
	}
}

func index(s []string, x string) int {
	for i, y := range s {
		if y == x {
			return i
		}
	}
	return -1
}

// A goroutine parked inside its last point's operation (a send whose
// receiver comes later in the clip) has run the steps of that operation's
// segment: the clip goes on with the receiver, without a departure. A step
// the last point contradicts (an access) is not taken as run.
func TestClipParked(t *testing.T) {
	send := Point{G: "a", Kind: KindSend, Site: "c.go:3", Ev: 5, Enabled: true}
	recv := Point{G: "b", Kind: KindRecv, Site: "c.go:9", Ev: 2, Enabled: true}
	// The send's point is at the channel read (event 5), its snd is event 6.
	c := NewClip([]ClipStep{{G: "a", Ev: 5}, {G: "a", Ev: 6}, {G: "b", Ev: 2}, {G: "a", Ev: 8}}, 1)
	if i := c.Next([]Point{send, recv}); i != 0 {
		t.Fatalf("ran %d, want a's send", i)
	}
	if c.Want() != "a" || !c.Parked("a") || c.Want() != "b" {
		t.Fatalf("after a parked: want %q", c.Want())
	}
	if i := c.Next([]Point{recv}); i != 0 || c.Want() != "a" {
		t.Fatalf("ran %d, want b; then want %q", i, c.Want())
	}
	if n := c.Notes(); len(n) != 0 {
		t.Fatalf("notes %v", n)
	}
	// Absent from the waiting goroutines (Next without Parked): the same.
	c = NewClip([]ClipStep{{G: "a", Ev: 5}, {G: "a", Ev: 6}, {G: "b", Ev: 2}}, 1)
	c.Next([]Point{send, recv})
	if i := c.Next([]Point{recv}); i != 0 || !c.Done() {
		t.Fatalf("ran %d, done %v", i, c.Done())
	}
	if n := c.Notes(); len(n) != 0 {
		t.Fatalf("notes %v", n)
	}
	// The next step is an access of a's: not in the send's segment.
	c = NewClip([]ClipStep{{G: "a", Ev: 5}, {G: "a", Ev: 7, Kind: KindWrite, Site: "c.go:4"}, {G: "b", Ev: 2}}, 1)
	c.Next([]Point{send, recv})
	if c.Parked("a") {
		t.Fatal("a's write taken as part of its send")
	}
}

// TestRandomYield: a goroutine that yields at a preemption is not chosen
// while another is enabled; alone, it is.
func TestRandomYield(t *testing.T) {
	r := NewRandom(7)
	w := []Point{{G: "a", Enabled: true, Yield: true}, {G: "b", Enabled: true}, {G: "c"}}
	for i := 0; i < 100; i++ {
		if got := r.Next(w); got != 1 {
			t.Fatalf("draw %d: chose %s, want b (a yields, c cannot proceed)", i, w[got].G)
		}
	}
	w[1].Enabled = false
	if got := r.Next(w); got != 0 {
		t.Fatalf("chose %s, want a, the only enabled one", w[got].G)
	}
}
