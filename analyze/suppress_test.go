package analyze

import (
	"fmt"
	"slices"
	"testing"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// suppressTrace is three tests racing: TestA on x (sites 31, 13), TestB
// the same pair on x again (its previous access the one TestA's race
// had), then 31-41 and 31-43 on x (the same), then 41-43 on x (both
// accesses after TestA's race), TestC the first pair on another variable,
// y, with TestA's stacks.
func suppressTrace(t *testing.T) string {
	b := trace.NewBuilder()
	mark := func(g, test string) { markTest(b, g, test) }
	mark("main", "TestA")
	b.Fork("main", "worker", "main.go:7")
	b.Write("worker", "x", "main.go:31")
	b.Write("worker", "y", "main.go:31")
	b.Write("main", "x", "main.go:13") // TestA's race
	b.Fork("main", "second", "main.go:14")
	mark("second", "TestB")
	b.Write("second", "x", "main.go:13") // the same pair, the same address
	b.Fork("second", "b2", "main.go:40")
	b.Write("b2", "x", "main.go:41")
	b.Write("second", "x", "main.go:43") // another pair, the same address
	b.Fork("second", "third", "main.go:15")
	mark("third", "TestC")
	b.Write("third", "y", "main.go:13") // the first pair on another address, the same stacks
	return writeTrace(t, b)
}

// TestSuppressLikeGoRace: go test -race does not see a race whose
// previous access was made on the cell before a race reported there
// (ThreadSanitizer resets the cell's shadow), and reports a race once per
// pair of stacks (suppress_equal_stacks, on by default): TestB's races
// with x's write at 31 are not seen, its race between two later accesses
// is; TestC's repeats TestA's stacks. Each rule alone, both, and neither.
func TestSuppressLikeGoRace(t *testing.T) {
	path := suppressTrace(t)
	for _, tc := range []struct {
		rule       Suppress
		pairs      int
		again      []string // of the first pair
		suppressed int
	}{
		{Suppress{}, 4, []string{"TestB", "TestC"}, 0},
		{Suppress{ResetCells: true}, 2, []string{"TestC"}, 3},
		{Suppress{EqualStacks: true}, 4, nil, 2},
		{GoRaceSuppress(""), 2, nil, 4},
	} {
		a, err := Trace(path, Options{Algos: []string{"hb"}, New: newHB, Suppress: tc.rule})
		if err != nil {
			t.Fatal(err)
		}
		res := a.Results[0]
		if len(res.Groups) != tc.pairs || a.Races != tc.pairs {
			t.Errorf("%+v: %d races, want %d: %+v", tc.rule, len(res.Groups), tc.pairs, res.Groups)
			continue
		}
		p := finding.MakePair(a.Meta.InternSite(trace.Site{File: "main.go", Line: 31}), a.Meta.InternSite(trace.Site{File: "main.go", Line: 13}))
		if res.Tests[p] != "TestA" || !slices.Equal(res.Again[p], tc.again) {
			t.Errorf("%+v: first pair in %q, again in %q; want TestA, again in %q", tc.rule, res.Tests[p], res.Again[p], tc.again)
		}
		if a.Suppressed != tc.suppressed {
			t.Errorf("%+v: %d suppressed, want %d", tc.rule, a.Suppressed, tc.suppressed)
		}
	}
}

func TestGoRaceSuppress(t *testing.T) {
	for v, want := range map[string]Suppress{
		"":                           {true, true},
		"halt_on_error=1":            {true, true},
		"suppress_equal_stacks=0":    {true, false},
		"suppress_equal_addresses=0": {true, true}, // not a flag of Go's runtime
		"suppress_equal_addresses=false suppress_equal_stacks=no": {true, false},
		"suppress_equal_stacks=maybe suppress_equal_addresses":    {true, true},
		"atexit_sleep_ms=0,suppress_equal_stacks=0":               {true, false}, // commas split as the race runtime splits
		"halt_on_error=1:suppress_equal_stacks=false":             {true, false},
	} {
		if got := GoRaceSuppress(v); got != want {
			t.Errorf("GoRaceSuppress(%q) = %+v, want %+v", v, got, want)
		}
	}
}

// wideRead appends g's read of x at main.go:line, a site of a wide
// access (a struct copied whole: a range access under go test -race).
func wideRead(b *trace.Builder, g, x string, line int) {
	b.Add(trace.Event{G: b.G(g), Op: trace.OpRead, Obj: b.Obj(x), Flags: trace.FlagValueUnknown,
		Site: b.Trace().M.InternSite(trace.Site{File: "main.go", Line: line, Wide: true})})
}

// TestSuppressRangeAfterReset: after a race reported on x, go test -race
// forgets x's earlier accesses, checks a later word access of x as usual,
// and skips a range access of it (the read-only marker the report left)
// until x is allocated again. Each case with ResetCells alone.
func TestSuppressRangeAfterReset(t *testing.T) {
	b := trace.NewBuilder()
	markTest(b, "main", "TestA")
	b.Fork("main", "worker", "main.go:7")
	b.Write("worker", "x", "main.go:31")
	b.Read("main", "x", "main.go:13") // reported: x's cell reset
	b.Fork("main", "w2", "main.go:40")
	b.Write("w2", "x", "main.go:41")  // with 31: forgotten
	wideRead(b, "main", "x", 50)      // with 41: a range access of the marked cell
	b.Read("main", "x", "main.go:52") // with 41: a word access, seen
	b.Fork("main", "w3", "main.go:60")
	b.Write("w3", "x", "main.go:61") // with 31 and 41: forgotten (52's race reset x)
	b.Add(trace.Event{G: b.G("main"), Op: trace.OpAlloc, Obj: b.Obj("x"), Value: 8, Site: b.Site("main.go:70")})
	b.Fork("main", "w4", "main.go:71")
	b.Write("w4", "x", "main.go:72")
	wideRead(b, "main", "x", 73) // with 72: the marker gone with the allocation
	path := writeTrace(t, b)

	a, err := Trace(path, Options{Algos: []string{"hb"}, New: newHB, Suppress: Suppress{ResetCells: true}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range a.Results[0].Groups {
		got = append(got, fmt.Sprintf("%d-%d", a.Meta.Site(g.Prev.Site).Line, a.Meta.Site(g.Cur.Site).Line))
	}
	slices.Sort(got)
	if want := []string{"31-13", "41-52", "72-73"}; !slices.Equal(got, want) {
		t.Errorf("races %q, want %q", got, want)
	}
	if a.Suppressed != 6 {
		t.Errorf("%d suppressed, want 6 (31 with 41, 50, 52 and 61; 41 with 50 and 61)", a.Suppressed)
	}
	a, err = Trace(path, Options{Algos: []string{"hb"}, New: newHB})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(a.Results[0].Groups); n != 9 || a.Suppressed != 0 {
		t.Errorf("without the rule: %d races, %d suppressed; want 9 and 0", n, a.Suppressed)
	}
}

// An allocation forgets the marked cells it covers, also at the top of
// the address space (an allocation's range ends at 2^64-1 there).
func TestSuppressorAllocated(t *testing.T) {
	s := newSuppressor(Suppress{ResetCells: true}, trace.NewMeta())
	top := ^uint64(0) &^ 7
	for _, c := range []uint64{0x1000, 0x1008, 0x2000, top - 8, top} {
		s.reset[c] = 1
	}
	s.allocated(0x1004, 0x100c) // both cells it touches
	s.allocated(top+2, ^uint64(0))
	var left []uint64
	for c := range s.reset {
		left = append(left, c)
	}
	slices.Sort(left)
	if want := []uint64{0x2000, top - 8}; !slices.Equal(left, want) {
		t.Errorf("cells left %#x, want %#x", left, want)
	}
	s.allocated(0, ^uint64(0)) // wider than the table: a scan of it
	if len(s.reset) != 0 {
		t.Errorf("cells left %v after allocating everything", s.reset)
	}
}
