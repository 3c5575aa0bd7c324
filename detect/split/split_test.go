package split_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/split"
	"github.com/racekit/racekit/trace"
)

type tb struct{ *trace.Builder }

func (b tb) ev(g string, op trace.Op, obj uint64, site string) {
	var s trace.SiteID
	if site != "" {
		s = b.Site(site)
	}
	b.Add(trace.Event{G: b.G(g), Op: op, Obj: obj, Site: s})
}
func (b tb) enter(g, fn string)     { b.ev(g, trace.OpFuncEnter, b.Obj(fn), "") }
func (b tb) exit(g, fn string)      { b.ev(g, trace.OpFuncExit, b.Obj(fn), "") }
func (b tb) acq(g, l, site string)  { b.ev(g, trace.OpAcquire, b.Obj(l), site) }
func (b tb) rel(g, l string)        { b.ev(g, trace.OpRelease, b.Obj(l), "") }
func (b tb) section(g, l, s string) { b.acq(g, l, s); b.rel(g, l) }

// find renders each split "fn:first>second gN shared".
func find(t *testing.T, tr *trace.Trace) []string {
	t.Helper()
	f := split.New(tr.M, split.Options{TestMark: "racekit:test"})
	if _, err := detect.Run(tr.Iter(), f); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range f.Splits() {
		fn := "-"
		if s.Func != 0 {
			fn = tr.M.NameOf(s.Func)
		}
		line := fmt.Sprintf("%s:%s>%s g%d %v", fn, tr.M.Site(s.First), tr.M.Site(s.Second), s.Goroutines, s.Shared)
		if len(s.Tests) > 0 {
			line += fmt.Sprintf(" %v", s.Tests)
		}
		out = append(out, line)
	}
	return out
}

// The check-then-act of the package comment: buy calls available and take,
// each locked, in two goroutines; one goroutine bought, the other saw the
// item gone and did not call take. The split is buy's, seen in one
// goroutine, on a lock both took.
func TestCheckThenAct(t *testing.T) {
	b := tb{trace.NewBuilder()}
	for _, g := range []string{"T1", "T2"} {
		b.enter(g, "buy")
		b.enter(g, "available")
		b.section(g, "mu", "shop.go:10")
		b.exit(g, "available")
		if g == "T1" {
			b.enter(g, "take")
			b.section(g, "mu", "shop.go:20")
			b.exit(g, "take")
		}
		b.exit(g, "buy")
	}
	got := find(t, b.Trace())
	want := []string{"buy:shop.go:10>shop.go:20 g1 true"}
	if !slices.Equal(got, want) {
		t.Fatalf("splits %q, want %q", got, want)
	}
}

// Sections in different invocations are not split: two calls of one
// locked method from a loop in the goroutine's function are (that
// function is the region), two goroutines' one section each are not; a
// lock taken by one goroutine only is listed last, not shared; a section
// held across a call still ends in the caller's invocation.
func TestInvocations(t *testing.T) {
	b := tb{trace.NewBuilder()}
	// T1: inc twice from run; T2: inc once.
	b.enter("T1", "run")
	for i := 0; i < 2; i++ {
		b.enter("T1", "inc")
		b.section("T1", "mu", "c.go:5")
		b.exit("T1", "inc")
	}
	b.exit("T1", "run")
	b.enter("T2", "inc")
	b.section("T2", "mu", "c.go:5")
	b.exit("T2", "inc")
	// T3: a private lock split in one function.
	b.enter("T3", "solo")
	b.section("T3", "own", "s.go:1")
	b.section("T3", "own", "s.go:2")
	b.exit("T3", "solo")
	got := find(t, b.Trace())
	want := []string{"run:c.go:5>c.go:5 g1 true", "solo:s.go:1>s.go:2 g1 false"}
	if !slices.Equal(got, want) {
		t.Fatalf("splits %q, want %q", got, want)
	}
}

// A goroutine without FuncEnter events (untraced function) has its base
// frame: two sections there are a split outside any function.
func TestBaseFrame(t *testing.T) {
	b := tb{trace.NewBuilder()}
	b.section("T1", "mu", "a.go:1")
	b.section("T1", "mu", "a.go:2")
	b.section("T2", "mu", "a.go:1")
	got := find(t, b.Trace())
	want := []string{"-:a.go:1>a.go:2 g1 true"}
	if !slices.Equal(got, want) {
		t.Fatalf("splits %q, want %q", got, want)
	}
}

// A split is the test's whose goroutine showed it, or whose goroutine
// created that one (rt/rttest's mark: a release at a site in file
// racekit:test named for the test).
func TestTests(t *testing.T) {
	b := tb{trace.NewBuilder()}
	mark := b.Trace().M.InternSite(trace.Site{File: "racekit:test", Line: 1, Func: "TestBuy"})
	b.Add(trace.Event{G: b.G("T0"), Op: trace.OpSyncRelease, Obj: b.Obj("mark"), Site: mark})
	b.Add(trace.Event{G: b.G("T0"), Op: trace.OpFork, Obj: uint64(b.G("T1"))})
	b.enter("T1", "buy")
	b.section("T1", "mu", "shop.go:10")
	b.section("T1", "mu", "shop.go:20")
	b.exit("T1", "buy")
	b.section("T2", "mu", "shop.go:10")
	got := find(t, b.Trace())
	want := []string{"buy:shop.go:10>shop.go:20 g1 true [TestBuy]"}
	if !slices.Equal(got, want) {
		t.Fatalf("splits %q, want %q", got, want)
	}
}

// A FuncExit pops to its function's frame: the frames a recovered panic
// left above it go too, and a section after the exit is outside them.
func TestPanicFrames(t *testing.T) {
	b := tb{trace.NewBuilder()}
	b.enter("T1", "outer")
	b.enter("T1", "inner") // exits by a panic outer recovers: no FuncExit
	b.section("T1", "mu", "p.go:1")
	b.exit("T1", "outer")
	b.section("T1", "mu", "p.go:2")
	b.section("T2", "mu", "p.go:2")
	got := find(t, b.Trace())
	want := []string{"-:p.go:1>p.go:2 g1 true"}
	if !slices.Equal(got, want) {
		t.Fatalf("splits %q, want %q", got, want)
	}
}
