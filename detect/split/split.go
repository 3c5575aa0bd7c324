// Package split finds the atomic regions whose critical sections on one
// lock are split in two: a goroutine takes a lock, releases it, and takes
// it again within one invocation of a function. Code that checks in the
// first section and acts in the second (`if s.available() { s.take() }`,
// each method locked) is atomic only if no other goroutine runs the first
// section in between; no race detector sees it (every access is locked),
// and a run in which the second goroutine saw the item gone and skipped
// its write shows PECAN nothing to predict from. AtomFuzzer (Park and Sen,
// FSE'08, section 3) takes such lock-release-acquire patterns of an
// atomic block as its candidates and pauses a goroutine between the two
// sections (sched.AtomFuzzer); this package finds them on a recorded run.
// A function invocation is the atomic block, as in the paper's default
// of methods; a goroutine's own function counts (its FuncEnter).
package split

import (
	"maps"
	"slices"

	"github.com/racekit/racekit/trace"
)

// Split is one candidate: within an invocation of Func, a goroutine took
// Lock at First, released it, and took it again at Second.
type Split struct {
	Func          uint64       // the function's Obj (trace.OpFuncEnter), 0: outside any
	Enter         trace.SiteID // the site of the invocation's FuncEnter (its Func names the function)
	Lock          uint64
	First, Second trace.SiteID
	// Goroutines is how many goroutines showed the pattern; Shared,
	// whether more than one goroutine took the lock in the run (a lock no
	// other goroutine takes cannot interleave anything).
	Goroutines int
	Shared     bool
	// Tests are the tests whose goroutines showed it (Options.TestMark),
	// sorted.
	Tests []string
}

// Options configures a Finder.
type Options struct {
	// TestMark is the file of the sites at which a test's goroutine
	// records the test's name (a SyncRelease whose site's Func is the
	// name: rt/rttest); goroutines it creates run for that test too.
	// Empty: no test names.
	TestMark string
}

type frame struct {
	fn    uint64
	enter trace.SiteID
	done  map[uint64]trace.SiteID // lock -> where its last section in this invocation began
}

type gstate struct {
	stack []frame
	held  map[uint64]trace.SiteID // lock -> where the section being held began
	test  string
}

type key struct {
	fn            uint64
	first, second trace.SiteID
}

// found is a split as it is being seen: the goroutines and tests that
// showed it.
type found struct {
	s     Split
	by    map[trace.GID]bool
	tests map[string]bool
}

// Finder collects the splits of a trace (detect.Run's Handler).
type Finder struct {
	opt     Options
	meta    *trace.Meta
	gs      map[trace.GID]*gstate
	found   map[key]*found
	order   []*found // as first seen
	lockers map[uint64]map[trace.GID]bool
}

// New returns a Finder of the trace whose metadata is meta (nil: no test
// names).
func New(meta *trace.Meta, opt Options) *Finder {
	return &Finder{opt: opt, meta: meta, gs: map[trace.GID]*gstate{}, found: map[key]*found{}, lockers: map[uint64]map[trace.GID]bool{}}
}

func (f *Finder) g(id trace.GID) *gstate {
	g := f.gs[id]
	if g == nil {
		g = &gstate{stack: []frame{{}}, held: map[uint64]trace.SiteID{}} // the goroutine's base frame
		f.gs[id] = g
	}
	return g
}

// Handle processes one event.
func (f *Finder) Handle(e *trace.Event) {
	switch e.Op {
	case trace.OpFuncEnter:
		g := f.g(e.G)
		g.stack = append(g.stack, frame{fn: e.Obj, enter: e.Site})
	case trace.OpFuncExit:
		// Pop to this function's frame (frames a recovered panic left go
		// with it).
		g := f.g(e.G)
		for i := len(g.stack) - 1; i >= 1; i-- {
			if g.stack[i].fn == e.Obj {
				g.stack = g.stack[:i]
				break
			}
		}
	case trace.OpFork:
		if t := f.g(e.G).test; t != "" {
			f.g(trace.GID(e.Obj)).test = t
		}
	case trace.OpSyncRelease:
		if f.meta != nil && f.opt.TestMark != "" {
			if site := f.meta.Site(e.Site); site.File == f.opt.TestMark {
				f.g(e.G).test = site.Func
			}
		}
	case trace.OpAcquire:
		g := f.g(e.G)
		if f.lockers[e.Obj] == nil {
			f.lockers[e.Obj] = map[trace.GID]bool{}
		}
		f.lockers[e.Obj][e.G] = true
		// The innermost invocation in which a section on the lock was
		// completed before.
		for i := len(g.stack) - 1; i >= 0; i-- {
			if first, ok := g.stack[i].done[e.Obj]; ok {
				f.add(key{g.stack[i].fn, first, e.Site}, g.stack[i].enter, e)
				break
			}
		}
		g.held[e.Obj] = e.Site
	case trace.OpRelease:
		g := f.g(e.G)
		first, ok := g.held[e.Obj]
		if !ok {
			return
		}
		delete(g.held, e.Obj)
		for i := range g.stack {
			if g.stack[i].done == nil {
				g.stack[i].done = map[uint64]trace.SiteID{}
			}
			g.stack[i].done[e.Obj] = first
		}
	case trace.OpEnd:
		delete(f.gs, e.G)
	}
}

func (f *Finder) add(k key, enter trace.SiteID, e *trace.Event) {
	fd := f.found[k]
	if fd == nil {
		fd = &found{s: Split{Func: k.fn, Enter: enter, Lock: e.Obj, First: k.first, Second: k.second}, by: map[trace.GID]bool{}, tests: map[string]bool{}}
		f.found[k] = fd
		f.order = append(f.order, fd)
	}
	fd.by[e.G] = true
	if t := f.g(e.G).test; t != "" {
		fd.tests[t] = true
	}
}

// Finish does nothing.
func (f *Finder) Finish() {}

// Splits returns the splits found, those on a lock other goroutines also
// took first, then those more goroutines showed, then in the order they
// were first seen.
func (f *Finder) Splits() []Split {
	out := make([]Split, 0, len(f.order))
	for _, fd := range f.order {
		s := fd.s
		s.Goroutines = len(fd.by)
		s.Shared = len(f.lockers[s.Lock]) > 1
		s.Tests = slices.Sorted(maps.Keys(fd.tests))
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b Split) int {
		if a.Shared != b.Shared {
			if a.Shared {
				return -1
			}
			return 1
		}
		return b.Goroutines - a.Goroutines
	})
	return out
}
