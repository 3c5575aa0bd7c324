package analyze

import (
	"fmt"
	"slices"
	"testing"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// callSiteOf interns the site of a call in function fn at main.go:line:col,
// of function callee ("": not known statically), its arguments ending at
// endLine:endCol.
func callSiteOf(b *trace.Builder, fn string, line, col int, callee string, endLine, endCol int) {
	b.Trace().M.InternSite(trace.Site{File: "main.go", Line: line, Col: col, Func: fn,
		Call: trace.Call{Func: callee, EndLine: endLine, EndCol: endCol}})
}

// An outer frame of a stack is at the call its callee was entered from,
// as in Go's reports, not at its function's last event: the call of the
// callee by name after that event, the next call of the same function
// after a call, the first again on a loop's next turn, a call not known
// statically for a callee no call names, and the last event where the
// function has no call that fits.
func TestStacksShowCalls(t *testing.T) {
	b := trace.NewBuilder()
	//	5 func main() {
	//	6 	a = 1
	//	8 	f(1)
	//	9 	f(2)
	//	10	run(cb)
	//	}
	//	30 func loop() {
	//	31	for { g(z)
	//	32	  z++ }
	callSiteOf(b, "main.main", 8, 2, "main.f", 8, 5)
	callSiteOf(b, "main.main", 9, 2, "main.f", 9, 5)
	callSiteOf(b, "main.main", 10, 2, "", 10, 8)
	callSiteOf(b, "main.loop", 31, 8, "main.g", 31, 11)
	var stacks [][]string
	st := NewStacks(b.Trace().M, "")
	fed := 0
	snap := func(g string) { // the stack of g after the events so far
		for _, e := range b.Trace().Events[fed:] {
			st.Handle(&e)
		}
		fed = len(b.Trace().Events)
		stacks = append(stacks, frames(st.Stack(b.Trace().M, b.G(g))))
	}

	enter(b, "main", "main.main", 5)
	b.Write("main", "a", "main.go:6")
	enter(b, "main", "main.f", 12)
	snap("main") // f(1): the first call of f after line 6
	exit(b, "main", "main.f", 12)
	enter(b, "main", "main.f", 12)
	snap("main") // f(2): the next call of f after f(1), no event between
	exit(b, "main", "main.f", 12)
	enter(b, "main", "main.cb", 20)
	snap("main") // cb, called back by run: the call not known statically
	exit(b, "main", "main.cb", 20)
	b.Write("main", "a", "main.go:11")
	enter(b, "main", "main.f", 12)
	snap("main") // f again, after line 11: no call of f after it, so the first
	exit(b, "main", "main.f", 12)

	enter(b, "w", "main.loop", 30)
	b.Read("w", "z", "main.go:31:10") // g's argument
	enter(b, "w", "main.g", 40)
	snap("w") // g(z), after its argument's read
	exit(b, "w", "main.g", 40)
	b.Write("w", "z", "main.go:32:4")
	enter(b, "w", "main.g", 40)
	snap("w") // the loop's next turn: after line 32, the first call again
	enter(b, "w", "main.k", 50)
	snap("w") // g's frame has no call table: its last event, its own site
	want := [][]string{
		{"main.f@main.go:12", "main.main@main.go:8"},
		{"main.f@main.go:12", "main.main@main.go:9"},
		{"main.cb@main.go:20", "main.main@main.go:10"},
		{"main.f@main.go:12", "main.main@main.go:8"},
		{"main.g@main.go:40", "main.loop@main.go:31"},
		{"main.g@main.go:40", "main.loop@main.go:31"},
		{"main.k@main.go:50", "main.g@main.go:40", "main.loop@main.go:31"},
	}
	if !slices.EqualFunc(stacks, want, slices.Equal) {
		t.Errorf("stacks:\n got %q\nwant %q", stacks, want)
	}
}

// Two calls of interface methods in one function (urfave/cli's flagSet:
// c.WithSeparatorSpec(spec), then f.Apply(set)) are told apart by the
// method entered: the frame shows the call of the method of the callee's
// name (on the loop's next turn, the first), not the first call not known
// statically after the last event; a call back through an untraced
// function (run(cb)) is the call of a callee no method call names.
func TestStacksInterfaceMethodCalls(t *testing.T) {
	b := trace.NewBuilder()
	//	5 func flagSet() {
	//	6 	for _, f := range flags {
	//	7 		c.WithSeparatorSpec(spec)
	//	8 		f.Apply(set)
	//	9 		run(cb)
	//	}
	callSiteOf(b, "main.flagSet", 7, 5, ".WithSeparatorSpec", 7, 28)
	callSiteOf(b, "main.flagSet", 8, 5, ".Apply", 8, 15)
	callSiteOf(b, "main.flagSet", 9, 3, "", 9, 9)
	var stacks [][]string
	st := NewStacks(b.Trace().M, "")
	fed := 0
	snap := func() {
		for _, e := range b.Trace().Events[fed:] {
			st.Handle(&e)
		}
		fed = len(b.Trace().Events)
		stacks = append(stacks, frames(st.Stack(b.Trace().M, b.G("main"))))
	}
	enter(b, "main", "main.flagSet", 5)
	b.Read("main", "flags", "main.go:6:17")
	enter(b, "main", "main.(*BoolFlag).Apply", 20)
	snap() // f.Apply(set): not c.WithSeparatorSpec, the first call after line 6
	exit(b, "main", "main.(*BoolFlag).Apply", 20)
	enter(b, "main", "main.(*StringSliceFlag).WithSeparatorSpec", 30)
	snap() // its method's call, before Apply's: the loop's next turn
	exit(b, "main", "main.(*StringSliceFlag).WithSeparatorSpec", 30)
	enter(b, "main", "main.cb", 40)
	snap() // cb, called back by run: neither method's name
	exit(b, "main", "main.cb", 40)
	want := [][]string{
		{"main.(*BoolFlag).Apply@main.go:20", "main.flagSet@main.go:8"},
		{"main.(*StringSliceFlag).WithSeparatorSpec@main.go:30", "main.flagSet@main.go:7"},
		{"main.cb@main.go:40", "main.flagSet@main.go:9"},
	}
	if !slices.EqualFunc(stacks, want, slices.Equal) {
		t.Errorf("stacks:\n got %q\nwant %q", stacks, want)
	}
}

// An inline function (trace.Site.Inline: a small wrapper that records no
// frame) is put back between its caller and its callee by their calls,
// as Go's reports show an inlined frame, and leaves with its callee.
func TestStacksInlineFrames(t *testing.T) {
	b := trace.NewBuilder()
	//	5 func main() {
	//	6 	d := New()
	//	7 	d.x = 1
	//	8 	g()
	//	}
	//	20 func New() *D { return NewWithSeed(0) }
	//	22 func NewWithSeed(s uint64) *D { var d D; d.Reset(s); return &d }
	//	30 func (d *D) Reset(s uint64) {
	//	31 	d.x = s
	//	}
	//	40 func g() { d.Reset(1) }
	callSiteOf(b, "main.main", 6, 7, "main.New", 6, 11)
	callSiteOf(b, "main.main", 8, 2, "main.g", 8, 4)
	b.Trace().M.InternSite(trace.Site{File: "main.go", Line: 20, Col: 6, Func: "main.New", Inline: true})
	callSiteOf(b, "main.New", 20, 24, "main.NewWithSeed", 20, 37)
	b.Trace().M.InternSite(trace.Site{File: "main.go", Line: 22, Col: 6, Func: "main.NewWithSeed", Inline: true})
	callSiteOf(b, "main.NewWithSeed", 22, 44, "main.(*D).Reset", 22, 52)
	callSiteOf(b, "main.g", 40, 12, "main.(*D).Reset", 40, 20)
	var stacks [][]string
	st := NewStacks(b.Trace().M, "")
	fed := 0
	snap := func(g string) {
		for _, e := range b.Trace().Events[fed:] {
			st.Handle(&e)
		}
		fed = len(b.Trace().Events)
		stacks = append(stacks, frames(st.Stack(b.Trace().M, b.G(g))))
	}
	enter(b, "main", "main.main", 5)
	enter(b, "main", "main.(*D).Reset", 30)
	b.Write("main", "x", "main.go:31")
	snap("main") // Reset, entered from main through New and NewWithSeed
	exit(b, "main", "main.(*D).Reset", 30)
	b.Write("main", "x", "main.go:7")
	snap("main") // back in main: the inline frames left with Reset
	enter(b, "main", "main.g", 40)
	enter(b, "main", "main.(*D).Reset", 30)
	b.Write("main", "x", "main.go:31")
	snap("main") // Reset called by g by name: no inline frame
	want := [][]string{
		{"main.(*D).Reset@main.go:31", "main.NewWithSeed@main.go:22", "main.New@main.go:20", "main.main@main.go:6"},
		{"main.main@main.go:7"},
		{"main.(*D).Reset@main.go:31", "main.g@main.go:40", "main.main@main.go:8"},
	}
	if !slices.EqualFunc(stacks, want, slices.Equal) {
		t.Errorf("stacks:\n got %q\nwant %q", stacks, want)
	}
}

// A race's previous access keeps the call lines of its stack as they were
// (the stack history holds the resolved calls), through a trace file.
func TestTraceRaceStacksAtCalls(t *testing.T) {
	b := trace.NewBuilder()
	callSiteOf(b, "main.main", 9, 2, "main.f", 9, 5)
	callSiteOf(b, "main.main", 10, 2, "main.f", 10, 5)
	callSiteOf(b, "main.loop", 22, 3, "main.worker", 22, 11)
	enter(b, "main", "main.main", 5)
	b.Fork("main", "worker", "main.go:7")
	enter(b, "worker", "main.loop", 20)
	b.Read("worker", "z", "main.go:21")
	enter(b, "worker", "main.worker", 30)
	b.Write("worker", "x", "main.go:31")
	exit(b, "worker", "main.worker", 30)
	b.Write("main", "y", "main.go:8")
	enter(b, "main", "main.f", 12)
	exit(b, "main", "main.f", 12)
	enter(b, "main", "main.f", 12)
	b.Write("main", "x", "main.go:13")
	a, err := Trace(writeTrace(t, b), Options{Algos: []string{"hb"}, New: newHB})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Results) != 1 || len(a.Results[0].Groups) != 1 {
		t.Fatalf("results %+v; want 1 race", a.Results)
	}
	res := a.Results[0]
	p := res.Groups[0].Pair()
	if got, want := frames(res.Stacks[p]), []string{"main.f@main.go:13", "main.main@main.go:10"}; !slices.Equal(got, want) {
		t.Errorf("current access's stack %q, want %q", got, want)
	}
	if got, want := frames(res.PrevStacks[p]), []string{"main.worker@main.go:31", "main.loop@main.go:22"}; !slices.Equal(got, want) {
		t.Errorf("previous access's stack %q, want %q", got, want)
	}
}

// BenchmarkStacksCalls measures Stacks over calls and returns (a caller
// calling two functions in turn, each writing once), with the call sites
// that pick each outer frame's call, and without them, as a trace older
// than .rkt version 6 has it: the cost of the pick, in the same run.
func BenchmarkStacksCalls(b *testing.B) {
	for _, withCalls := range []bool{false, true} {
		name := "no-call-sites"
		if withCalls {
			name = "call-sites"
		}
		b.Run(name, func(b *testing.B) {
			tb := trace.NewBuilder()
			if withCalls {
				callSiteOf(tb, "main.main", 8, 2, "main.f", 8, 5)
				callSiteOf(tb, "main.main", 9, 2, "main.g", 9, 5)
			}
			enter(tb, "main", "main.main", 5)
			for range 64 {
				enter(tb, "main", "main.f", 12)
				tb.Write("main", "x", "main.go:13")
				exit(tb, "main", "main.f", 12)
				enter(tb, "main", "main.g", 20)
				tb.Write("main", "y", "main.go:21")
				exit(tb, "main", "main.g", 20)
			}
			events := tb.Trace().Events
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				st := NewStacks(tb.Trace().M, "")
				for i := range events {
					st.Handle(&events[i])
				}
			}
			b.ReportMetric(float64(b.N*len(events))/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// The histories of goroutines that ended stay within endedBudget entries
// together: the oldest keep their last histEnded entries, so a previous
// access early in one is shown at its site only, while the goroutine that
// ended last keeps its whole history.
func TestStacksEndedHistoryBounded(t *testing.T) {
	defer func(old int) { endedBudget = old }(endedBudget)
	endedBudget = 100
	b := trace.NewBuilder()
	st := NewStacks(b.Trace().M, "")
	const gs, calls = 6, 40
	var early []finding.Access
	for i := range gs {
		g := fmt.Sprintf("g%d", i)
		b.Begin(g)
		enter(b, g, "main.worker", 10)
		n := b.Write(g, "x", "main.go:11")
		early = append(early, finding.Access{G: b.G(g), Seq: b.Trace().Events[n].Seq, Site: b.Trace().Events[n].Site, Write: true})
		for range calls {
			enter(b, g, "main.step", 20)
			exit(b, g, "main.step", 20)
		}
		exit(b, g, "main.worker", 10)
		b.End(g)
	}
	for _, e := range b.Trace().Events {
		st.Handle(&e)
	}
	total := 0
	for _, s := range st.m {
		total += len(s.hist)
	}
	if limit := endedBudget + gs*histEnded; total > limit {
		t.Errorf("%d entries of history kept, want at most %d", total, limit)
	}
	m := b.Trace().M
	if got := frames(st.stackAt(m, early[gs-1])); !slices.Equal(got, []string{"main.worker@main.go:11"}) {
		t.Errorf("the last goroutine's early access: stack %q, want its whole stack", got)
	}
	if got := st.stackAt(m, early[0]); got != nil {
		t.Errorf("the first goroutine's early access: stack %q, want none (its history trimmed)", frames(got))
	}
}
