package analyze

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/alloc"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/rkt"
	"github.com/racekit/racekit/trace/tracefile"
)

// newHB makes every race detector hb: the tests need one, not racekit's
// -algo table.
func newHB(_ string, s finding.Sink) detect.Detector { return hb.New(s) }

// writeTrace writes b's trace to a binary trace file and returns its path.
func writeTrace(t *testing.T, b *trace.Builder) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.rkt")
	if err := tracefile.Save(path, b.Trace()); err != nil {
		t.Fatal(err)
	}
	return path
}

// enter and exit append g's entry into and exit from function fn, whose
// declaration is at main.go:line.
func enter(b *trace.Builder, g, fn string, line int) {
	b.Add(trace.Event{G: b.G(g), Op: trace.OpFuncEnter, Site: funcSite(b, fn, line)})
}

func exit(b *trace.Builder, g, fn string, line int) {
	b.Add(trace.Event{G: b.G(g), Op: trace.OpFuncExit, Site: funcSite(b, fn, line)})
}

func funcSite(b *trace.Builder, fn string, line int) trace.SiteID {
	return b.Trace().M.InternSite(trace.Site{File: "main.go", Line: line, Func: fn})
}

// raceTrace is a race on x between goroutine main, in main.f called from
// main.main at line 8, and goroutine worker, which main.main created at
// line 7 and which wrote x in main.worker called from main.loop at line
// 21, then went on into main.other: the previous access's stack is one
// the goroutine left before the race was seen.
func raceTrace() *trace.Builder {
	b := trace.NewBuilder()
	enter(b, "main", "main.main", 5)
	b.Add(trace.Event{G: b.G("main"), Op: trace.OpSyncRelease, Obj: b.Obj("mark"),
		Site: b.Trace().M.InternSite(trace.Site{File: TestMarkFile, Func: "TestRace"})})
	b.Fork("main", "worker", "main.go:7")
	enter(b, "worker", "main.loop", 20)
	b.Read("worker", "z", "main.go:21")
	enter(b, "worker", "main.worker", 30)
	b.Write("worker", "x", "main.go:31")
	exit(b, "worker", "main.worker", 30)
	enter(b, "worker", "main.other", 40)
	b.Write("worker", "w", "main.go:41")
	exit(b, "worker", "main.other", 40)
	b.Write("main", "y", "main.go:8")
	enter(b, "main", "main.f", 12)
	b.Write("main", "x", "main.go:13")
	return b
}

// frames formats a stack as func@line, innermost first.
func frames(stack []trace.Site) []string {
	var out []string
	for _, s := range stack {
		out = append(out, fmt.Sprintf("%s@%s:%d", s.Func, s.File, s.Line))
	}
	return out
}

// Trace finds the one race with both accesses' stacks as they were at
// the accesses, the creation stack of the goroutine that made the
// previous one, and the test the current one ran in.
func TestTraceRaceStacks(t *testing.T) {
	path := writeTrace(t, raceTrace())
	a, err := Trace(path, Options{Algos: []string{"hb"}, New: newHB})
	if err != nil {
		t.Fatal(err)
	}
	if a.Races != 1 || len(a.Results) != 1 || len(a.Results[0].Groups) != 1 {
		t.Fatalf("races %d, results %+v; want 1 race", a.Races, a.Results)
	}
	res := a.Results[0]
	g := res.Groups[0]
	if res.Detector != "hb" || a.Meta.Site(g.Cur.Site).Line != 13 || a.Meta.Site(g.Prev.Site).Line != 31 {
		t.Fatalf("race %s: %v after %v, want main.go:13 after main.go:31", res.Detector, a.Meta.Site(g.Cur.Site), a.Meta.Site(g.Prev.Site))
	}
	p := g.Pair()
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"current access's stack", frames(res.Stacks[p]), []string{"main.f@main.go:13", "main.main@main.go:8"}},
		{"previous access's stack", frames(res.PrevStacks[p]), []string{"main.worker@main.go:31", "main.loop@main.go:21"}},
		{"worker's creation stack", frames(a.Created[g.Prev.G]), []string{"main.main@main.go:7"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
	if _, ok := a.Created[g.Cur.G]; ok {
		t.Errorf("goroutine main has a creation stack; the trace did not create it")
	}
	if res.Tests[p] != "TestRace" {
		t.Errorf("test %q, want TestRace", res.Tests[p])
	}
	if a.Events != int64(len(raceTrace().Trace().Events)) {
		t.Errorf("events %d, want %d", a.Events, len(raceTrace().Trace().Events))
	}

	var out bytes.Buffer
	if err := a.Print(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"WARNING: DATA RACE (observed by hb)\n",
		"  main.f()\n      main.go:13\n  main.main()\n      main.go:8\n",
		"  main.worker()\n      main.go:31\n  main.loop()\n      main.go:21\n",
		"(created by goroutine main at):\n  main.main()\n      main.go:7\n",
		"hb: 1 distinct race(s), 1 dynamic\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// A race between two std calls' interceptor accesses shows each callee's
// frame above its caller's, as Go's report shows the std frame; a frame
// further out whose last site was such a call shows the call alone.
func TestTraceRaceCalleeFrames(t *testing.T) {
	b := trace.NewBuilder()
	m := b.Trace().M
	ws := trace.Frame{Func: "strings.(*Builder).WriteString", File: "/go/src/strings/builder.go", Line: 112}
	site := func(line int, c trace.Frame) trace.SiteID {
		return m.InternSite(trace.Site{File: "main.go", Line: line, Col: 3, Callee: c})
	}
	enter(b, "main", "main.main", 5)
	b.Fork("main", "worker", "main.go:7")
	b.Add(trace.Event{G: b.G("main"), Op: trace.OpWrite, Obj: b.Obj("b"), Site: site(6, ws)}) // the call site's last event
	enter(b, "worker", "main.worker", 30)
	b.Add(trace.Event{G: b.G("worker"), Op: trace.OpWrite, Obj: b.Obj("x"), Site: site(31, ws)})
	enter(b, "main", "main.f", 12)
	b.Add(trace.Event{G: b.G("main"), Op: trace.OpWrite, Obj: b.Obj("x"), Site: site(13, ws)})
	a, err := Trace(writeTrace(t, b), Options{Algos: []string{"hb"}, New: newHB})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Results) != 1 || len(a.Results[0].Groups) != 1 {
		t.Fatalf("results %+v; want 1 race", a.Results)
	}
	res := a.Results[0]
	g := res.Groups[0]
	p := g.Pair()
	std := "strings.(*Builder).WriteString@/go/src/strings/builder.go:112"
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"current access's stack", frames(res.Stacks[p]), []string{std, "main.f@main.go:13", "main.main@main.go:6"}},
		{"previous access's stack", frames(res.PrevStacks[p]), []string{std, "main.worker@main.go:31"}},
		{"worker's creation stack", frames(a.Created[g.Prev.G]), []string{"main.main@main.go:7"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
	var out bytes.Buffer
	if err := a.Print(&out); err != nil {
		t.Fatal(err)
	}
	if want := "  strings.(*Builder).WriteString()\n      /go/src/strings/builder.go:112\n  main.f()\n      main.go:13:3\n"; !strings.Contains(out.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, out.String())
	}
}

// StartFunc keeps the races whose later access comes after the first
// entry into it, and none when it is never entered.
func TestTraceStartFunc(t *testing.T) {
	path := writeTrace(t, raceTrace())
	for start, want := range map[string]int{"main.f": 1, "main.main": 1, "main.never": 0} {
		a, err := Trace(path, Options{Algos: []string{"hb"}, New: newHB, StartFunc: start})
		if err != nil {
			t.Fatal(err)
		}
		if a.Races != want {
			t.Errorf("StartFunc %s: %d races, want %d", start, a.Races, want)
		}
		var out bytes.Buffer
		if err := a.Print(&out); err != nil {
			t.Fatal(err)
		}
		if (out.Len() > 0) != (want > 0) {
			t.Errorf("StartFunc %s: report %q", start, out.String())
		}
	}
}

// DeadlockAlgo reports a lock-order cycle with the stacks of its requests;
// a race detector named without Options.New is an error.
func TestTraceDeadlock(t *testing.T) {
	b := trace.NewBuilder()
	enter(b, "main", "main.main", 5)
	b.Fork("main", "T1", "main.go:6")
	b.Acq("main", "A")
	b.Acq("main", "B")
	b.Rel("main", "B")
	b.Rel("main", "A")
	enter(b, "T1", "main.t1", 20)
	b.Acq("T1", "B")
	b.Acq("T1", "A")
	b.Rel("T1", "A")
	b.Rel("T1", "B")
	path := writeTrace(t, b)
	a, err := Trace(path, Options{Algos: []string{DeadlockAlgo}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Races != 0 || len(a.Cycles) != 1 {
		t.Fatalf("races %d, cycles %d; want one cycle", a.Races, len(a.Cycles))
	}
	var out bytes.Buffer
	if err := a.Print(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Found 1 potential deadlock(s)\n") || !strings.Contains(out.String(), "main.t1()") {
		t.Errorf("report:\n%s", out.String())
	}
	if _, err := Trace(path, Options{Algos: []string{"hb"}}); err == nil {
		t.Errorf("hb without Options.New: no error")
	}
}

// TestTraceStopsAtMemLimit: past its memory limit, an analysis stops
// reading, keeps the races of what it read, and says so in a warning
// instead of growing until the machine kills it. A limit of one byte
// stops it at the first look at the heap (detect.ProgressEvery events); a race
// before that point is reported, one after it is not.
func TestTraceStopsAtMemLimit(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "T", "go")
	b.Write("T", "x", "early1")
	b.Write("M", "x", "early2")
	for len(b.Trace().Events) < 2*detect.ProgressEvery {
		b.Read("M", "y", "filler")
	}
	b.Write("T", "z", "late1")
	b.Write("M", "z", "late2")
	path := writeTrace(t, b)

	full, err := Trace(path, Options{Algos: []string{"hb"}, New: newHB})
	if err != nil {
		t.Fatal(err)
	}
	if full.Races != 2 || len(full.Warns) != 0 {
		t.Fatalf("without a limit: %d races, warnings %q; want 2, none", full.Races, full.Warns)
	}
	a, err := Trace(path, Options{Algos: []string{"hb"}, New: newHB, MemLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if a.Races != 1 || a.Events >= int64(len(b.Trace().Events)) {
		t.Errorf("with a 1-byte limit: %d races after %d of %d events; want 1 race, stopped early", a.Races, a.Events, len(b.Trace().Events))
	}
	// hb forgot its shadow memory first (detect.Forgetter), which does
	// not bring a heap under a 1-byte limit: both are said.
	if len(a.Warns) != 2 || !strings.Contains(a.Warns[0], "the analysis forgot the accesses") ||
		!strings.Contains(a.Warns[1], "the analysis stopped after") || !strings.Contains(a.Warns[1], "RACEKIT_ANALYSIS_MEM") {
		t.Errorf("warnings %q, want the memory limit's: forgot, then stopped", a.Warns)
	}
}

func TestParseBytes(t *testing.T) {
	for s, want := range map[string]uint64{"123": 123, "4K": 4 << 10, "5m": 5 << 20, "6G": 6 << 30} {
		if got, err := parseBytes(s); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	if _, err := parseBytes("x"); err == nil {
		t.Error("parseBytes(x): no error")
	}
}

// markTest adds rttest's mark that goroutine g runs test.
func markTest(b *trace.Builder, g, test string) {
	b.Add(trace.Event{G: b.G(g), Op: trace.OpSyncRelease, Obj: b.Obj("mark"),
		Site: b.Trace().M.InternSite(trace.Site{File: TestMarkFile, Func: test})})
}

// A race that occurs again in a later test (same pair of sites) is named
// for that test too (Result.Again), as go test -race fails each test
// during which a race is reported; the first test keeps the report.
func TestTraceRaceAgainInLaterTest(t *testing.T) {
	b := trace.NewBuilder()
	mark := func(g, test string) { markTest(b, g, test) }
	mark("main", "TestA")
	b.Fork("main", "worker", "main.go:7")
	b.Write("worker", "x", "main.go:31")
	b.Write("main", "x", "main.go:13") // races with worker's write: TestA
	b.Fork("main", "second", "main.go:14")
	mark("second", "TestB")
	b.Write("second", "x", "main.go:13") // the same pair again: TestB
	b.Fork("second", "third", "main.go:15")
	mark("third", "TestB")
	b.Write("third", "x", "main.go:13") // TestB again: named once
	path := writeTrace(t, b)
	a, err := Trace(path, Options{Algos: []string{"hb"}, New: newHB})
	if err != nil {
		t.Fatal(err)
	}
	if a.Races != 1 || len(a.Results[0].Groups) != 1 {
		t.Fatalf("races %d, want 1: %+v", a.Races, a.Results)
	}
	res := a.Results[0]
	p := res.Groups[0].Pair()
	if res.Groups[0].Count != 3 {
		t.Errorf("occurrences %d, want 3", res.Groups[0].Count)
	}
	if res.Tests[p] != "TestA" || !slices.Equal(res.Again[p], []string{"TestB"}) {
		t.Errorf("tests %q, again %q; want TestA, then [TestB]", res.Tests[p], res.Again[p])
	}
}

// TestTraceCutWarnings: a trace whose writer did not finish, analyzed for
// leaks, warns of both: the reader's missing end block and that leaks are
// not reported. The reader's warnings used to replace the others.
func TestTraceCutWarnings(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "T", "go")
	for len(b.Trace().Events) < 5000 {
		b.Read("M", "y", "filler")
	}
	path := filepath.Join(t.TempDir(), "cut.rkt")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := rkt.NewWriterSize(fh, 512)
	if _, err := trace.Copy(w, b.Trace().Iter()); err != nil {
		t.Fatal(err)
	}
	fh.Close() // no w.Close: the blocks written so far, no end block
	a, err := Trace(path, Options{Algos: []string{"hb", LeakAlgo}, New: newHB})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(a.Warns, "\n")
	if !strings.Contains(all, "no end block") || !strings.Contains(all, "--leaks: the run did not finish") {
		t.Errorf("warnings %q, want the reader's and --leaks'", a.Warns)
	}
}

// The race's heap block: the last allocation holding its address before
// the accesses, from the allocations Stacks kept while the trace was read
// (alloc.Log), and from a second pass where there were more than the log
// keeps (LogMax 0).
func TestTraceHeapBlock(t *testing.T) {
	b := trace.NewBuilder()
	const x = 0xc000001008 // an address without a name
	newSite := b.Site("main.go:3")
	b.Add(trace.Event{G: b.G("main"), Op: trace.OpAlloc, Obj: x - 8, Value: 32, Site: newSite})
	b.Fork("main", "worker", "main.go:4")
	b.Add(trace.Event{G: b.G("worker"), Op: trace.OpWrite, Obj: x, Site: b.Site("main.go:5"), Flags: trace.FlagValueUnknown})
	b.Add(trace.Event{G: b.G("main"), Op: trace.OpWrite, Obj: x, Site: b.Site("main.go:6"), Flags: trace.FlagValueUnknown})
	b.Add(trace.Event{G: b.G("main"), Op: trace.OpAlloc, Obj: x, Value: 8, Site: b.Site("main.go:7")}) // after: not it
	path := writeTrace(t, b)
	defer func(n int) { alloc.LogMax = n }(alloc.LogMax)
	for _, max := range []int{alloc.LogMax, 0} {
		alloc.LogMax = max
		a, err := Trace(path, Options{Algos: []string{"hb"}, New: newHB})
		if err != nil {
			t.Fatal(err)
		}
		if a.Races != 1 {
			t.Fatalf("LogMax %d: %d races, want 1", max, a.Races)
		}
		res := a.Results[0]
		blk, ok := res.Heap[res.Groups[0].Pair()]
		if !ok || blk.Addr != x-8 || blk.Size != 32 || blk.Site != newSite {
			t.Errorf("LogMax %d: heap block %+v %v, want 32 bytes at %#x from main.go:3", max, blk, ok, x-8)
		}
	}
}
