package analyze

import (
	"slices"
	"sort"
	"strings"

	"github.com/racekit/racekit/detect/alloc"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// frame is one entry of a goroutine's shadow call stack, rebuilt from
// FuncEnter/FuncExit: the function (its declaration's site), the site of
// the last event the frame executed, and the frame as a node of the
// goroutine's stack history.
type frame struct {
	fn, cur trace.SiteID
	node    *snode
	inline  bool // an inline function's frame, put back (inlinePath)
}

// snode is a frame of a stack as it was when the frame was entered: its
// function, the site its caller had reached (the call's line, as far as
// the trace knows it: the caller's last event) and the caller's node. A
// stack at any past moment is its innermost node; nodes are shared and
// never change, so keeping one costs nothing more than the node.
type snode struct {
	fn, call trace.SiteID
	parent   *snode
}

// histEntry says that from event seq on the goroutine's innermost frame
// was top (nil: no frame).
type histEntry struct {
	seq uint64
	top *snode
}

// histMax bounds the stack history kept per goroutine (as Go's race
// detector's history_size): a previous access older than the history's
// last histMax stack changes of its goroutine is shown at its site only.
const histMax = 1 << 13

// The stack histories of goroutines that ended stay for the races their
// accesses may yet be the previous access of, up to endedBudget entries
// for all of them together; past it, the oldest ended goroutines keep
// their last histEnded entries only (as Go's race detector recycles the
// trace parts of the threads that finished first). Thousands of
// short-lived goroutines, each with a full history, took the analysis of
// prometheus/client_golang's tests past 8 GB.
var endedBudget = 1 << 23 // a variable for the tests

const histEnded = 64

// gstack is one goroutine's shadow stack, stack history and test.
type gstack struct {
	frames  []frame
	hist    []histEntry
	trimmed bool   // entries were dropped from hist
	test    string // the test the goroutine runs (or was created by)
}

// creation is where a goroutine was created: its parent's stack then.
type creation struct {
	top  *snode
	site trace.SiteID
}

// TestMarkFile is the file of the sites rt/rttest records a test's name
// at (rttest.markFile): a release of a fresh object, by the test's
// goroutine, at a site whose function is the test's name.
const TestMarkFile = "racekit:test"

// TestActiveFile and TestInactiveFile are the files of the sites rt/rttest
// marks a test's running at (rttest.activeFile, inactiveFile): active
// when it starts and when it resumes after t.Parallel, inactive when it
// pauses in t.Parallel and when it ends, the points at which package
// testing resets and checks its count of race reports. go test -race
// fails every test active when a race is reported, not only the one that
// made the access (testing's checkRaces).
const (
	TestActiveFile   = "racekit:test-active"
	TestInactiveFile = "racekit:test-inactive"
)

// Stacks tracks every goroutine's shadow stack while a trace is read. It is
// a detect.Detector placed before the real detectors, so that a race they
// report sees the stack as of its current access; the stack history gives
// the previous access's, and each fork the child's creation stack. It
// also opens the reporting gate at the first entry into startFunc (""
// opens it at once).
type Stacks struct {
	m         map[trace.GID]*gstack
	lastG     trace.GID // the goroutine of the last event, and its stack:
	last      *gstack   // most events follow one of the same goroutine
	created   map[trace.GID]creation
	meta      *trace.Meta
	startFunc string
	started   bool
	startSeq  uint64 // the seq of startFunc's entry

	// The calls of the trace's sites (trace.Site.Call), by their
	// function's file and name, in site order; indexed the first nsites
	// sites of meta.
	calls  map[[2]string][]trace.SiteID
	nsites int
	// callsOf caches candidates: per (caller, callee) function sites.
	callsOf map[[2]trace.SiteID][]trace.SiteID
	// inlines are the sites of inline functions (trace.Site.Inline) by
	// name; inlineOf caches inlinePath per (caller, callee).
	inlines  map[string]trace.SiteID
	inlineOf map[[2]trace.SiteID][]trace.SiteID

	// ended lists the goroutines that ended with more than histEnded
	// entries of history, oldest first; endedHist counts their entries.
	ended     []endedStack
	endedHist int

	// active are the tests active now (TestActiveFile): those go test
	// -race fails if a race is reported now. windowed are the tests
	// that have been active (examples and benchmarks have no marks).
	active   map[string]bool
	windowed map[string]bool

	// resets are the report rules told of each allocation
	// (suppressor.allocated), and allocs keeps the allocations for the
	// races' heap blocks (report.LocateHeap): Stacks sees every event
	// before the detectors, so it hands them on rather than stages of
	// their own (a detector's call per event cost the analysis 3%).
	resets []*suppressor
	allocs *alloc.Log
}

// NewStacks returns a Stacks for a trace whose metadata is meta, its
// reporting gate opening at the first entry into startFunc ("": at once).
// Run it before the detectors that ask it for stacks.
func NewStacks(meta *trace.Meta, startFunc string) *Stacks {
	return &Stacks{m: map[trace.GID]*gstack{}, created: map[trace.GID]creation{}, meta: meta, startFunc: startFunc, started: startFunc == "", active: map[string]bool{}, windowed: map[string]bool{}}
}

// Finish does nothing: the stacks stay readable after the trace's end.
func (s *Stacks) Finish() {}

func (s *Stacks) g(id trace.GID) *gstack {
	if s.last != nil && id == s.lastG {
		return s.last
	}
	st := s.m[id]
	if st == nil {
		st = &gstack{}
		s.m[id] = st
	}
	s.lastG, s.last = id, st
	return st
}

func (st *gstack) top() *snode {
	if len(st.frames) == 0 {
		return nil
	}
	return st.frames[len(st.frames)-1].node
}

// changed records that the stack changed at event seq.
func (st *gstack) changed(seq uint64) {
	if len(st.hist) >= 2*histMax {
		st.hist = append(st.hist[:0], st.hist[len(st.hist)-histMax:]...)
		st.trimmed = true
	}
	st.hist = append(st.hist, histEntry{seq, st.top()})
}

// Handle updates the stack of e's goroutine: frames from FuncEnter and
// FuncExit, creations from forks, tests from rttest's marks, and each
// frame's current site from every other event.
func (s *Stacks) Handle(e *trace.Event) {
	if !s.started && e.Op == trace.OpFuncEnter && s.meta.Site(e.Site).Func == s.startFunc {
		s.started, s.startSeq = true, e.Seq
	}
	st := s.g(e.G)
	switch e.Op {
	case trace.OpFuncEnter:
		call := trace.NoSite
		if len(st.frames) > 0 {
			for _, in := range s.inlinePath(st.frames[len(st.frames)-1].fn, e.Site) {
				f := &st.frames[len(st.frames)-1]
				f.cur = s.callSite(f, in)
				st.frames = append(st.frames, frame{fn: in, cur: in, inline: true, node: &snode{fn: in, call: f.cur, parent: st.top()}})
			}
			f := &st.frames[len(st.frames)-1]
			f.cur = s.callSite(f, e.Site)
			call = f.cur
		}
		st.frames = append(st.frames, frame{fn: e.Site, cur: e.Site, node: &snode{fn: e.Site, call: call, parent: st.top()}})
		st.changed(e.Seq)
	case trace.OpFuncExit:
		// Pop to the frame of this function (a frame left by a panic
		// that was recovered further up goes with it), and the inline
		// frames put back under it, which returned with it.
		for i := len(st.frames) - 1; i >= 0; i-- {
			if st.frames[i].fn == e.Site {
				for i > 0 && st.frames[i-1].inline {
					i--
				}
				clear(st.frames[i:])
				st.frames = st.frames[:i]
				break
			}
		}
		st.changed(e.Seq)
	case trace.OpEnd:
		s.end(st)
	case trace.OpFork:
		child := trace.GID(e.Obj)
		s.created[child] = creation{top: st.top(), site: e.Site}
		if st.test != "" {
			s.g(child).test = st.test
		}
	case trace.OpAlloc:
		if lo, hi, ok := e.AllocRange(); ok {
			for _, r := range s.resets {
				r.allocated(lo, hi)
			}
		}
		if s.allocs != nil {
			s.allocs.Handle(e)
		}
	case trace.OpSyncRelease:
		switch site := s.meta.Site(e.Site); site.File {
		case TestMarkFile:
			st.test = site.Func
			return
		case TestActiveFile:
			s.active[site.Func] = true
			s.windowed[site.Func] = true
			return
		case TestInactiveFile:
			delete(s.active, site.Func)
			return
		}
	}
	if e.Op != trace.OpFuncEnter && e.Op != trace.OpFuncExit && len(st.frames) > 0 && e.Site != trace.NoSite {
		st.frames[len(st.frames)-1].cur = e.Site
	}
}

// end keeps the history of st, a goroutine that ended, within
// endedBudget with the others', trimming the oldest.
func (s *Stacks) end(st *gstack) {
	if len(st.hist) <= histEnded {
		return
	}
	s.ended = append(s.ended, endedStack{st, len(st.hist)})
	s.endedHist += len(st.hist)
	for s.endedHist > endedBudget {
		old := s.ended[0]
		s.ended[0] = endedStack{}
		s.ended = s.ended[1:]
		s.endedHist -= old.n
		if h := old.st.hist; len(h) > histEnded { // one that ended twice (ill-formed) may be trimmed already
			old.st.hist = append([]histEntry(nil), h[len(h)-histEnded:]...)
			old.st.trimmed = true
		}
	}
}

// endedStack is a goroutine that ended, with the entries of history it
// had then.
type endedStack struct {
	st *gstack
	n  int
}

// callSite returns the site of the call in frame f that entered function
// callee: of the calls of f's function that call it (by name; else those
// of an interface method of its name; else those whose callee is not known
// statically), the first whose arguments end
// after f's last event, or the first (a loop's next turn). With no
// candidate it is f's last event, the best the trace knows.
func (s *Stacks) callSite(f *frame, callee trace.SiteID) trace.SiteID {
	if s.indexCalls(); s.calls == nil {
		return f.cur // a trace without calls (older than .rkt version 6)
	}
	cands := s.callCandidates(f.fn, callee)
	if len(cands) == 0 {
		return f.cur
	}
	line, col := 0, 0
	if f.cur != f.fn && int(f.cur) < len(s.meta.Sites) {
		cur := &s.meta.Sites[f.cur]
		line, col = cur.Line, cur.Col
		if !cur.Call.IsZero() {
			line, col = cur.Call.EndLine, cur.Call.EndCol // f's last call: past it
		}
		if cur.File != s.meta.Sites[cands[0]].File {
			line, col = 0, 0
		}
	}
	for _, c := range cands {
		if k := &s.meta.Sites[c].Call; k.EndLine > line || k.EndLine == line && k.EndCol > col {
			return c
		}
	}
	return cands[0]
}

// inlinePath returns the inline functions (trace.Site.Inline: no frame
// of their own) through which function caller entered function callee,
// outermost first: none when caller calls callee by name; else the
// shortest chain of named calls through inline functions (at most
// three) that ends in a named call of callee. A call of callee not known
// statically (a func value, an interface method) that may have been the
// one is not weighed against the chain: inline functions are small
// wrappers whose calls are all static, so a chain that exists is taken.
func (s *Stacks) inlinePath(caller, callee trace.SiteID) []trace.SiteID {
	if s.indexCalls(); len(s.inlines) == 0 {
		return nil
	}
	key := [2]trace.SiteID{caller, callee}
	if p, ok := s.inlineOf[key]; ok {
		return p
	}
	var path []trace.SiteID
	if int(caller) < len(s.meta.Sites) && int(callee) < len(s.meta.Sites) {
		name := s.meta.Sites[callee].Func
		if !s.callsByName(caller, name) {
			// Breadth first over the inline functions caller calls.
			type step struct {
				fn          trace.SiteID
				prev, depth int
			}
			steps := []step{{caller, -1, 0}}
			for i := 0; i < len(steps) && path == nil; i++ {
				if steps[i].depth == 3 {
					break
				}
				fn := &s.meta.Sites[steps[i].fn]
				for _, c := range s.calls[[2]string{fn.File, fn.Func}] {
					in, ok := s.inlines[s.meta.Sites[c].Call.Func]
					if !ok || in == caller || in == callee {
						continue
					}
					steps = append(steps, step{in, i, steps[i].depth + 1})
					if s.callsByName(in, name) {
						for j := len(steps) - 1; j > 0; j = steps[j].prev {
							path = append(path, steps[j].fn)
						}
						slices.Reverse(path)
						break
					}
				}
			}
		}
	}
	if s.inlineOf == nil {
		s.inlineOf = map[[2]trace.SiteID][]trace.SiteID{}
	}
	s.inlineOf[key] = path
	return path
}

// callsByName reports whether function fn (its declaration's site) has a
// call of the traced function name.
func (s *Stacks) callsByName(fn trace.SiteID, name string) bool {
	f := &s.meta.Sites[fn]
	for _, c := range s.calls[[2]string{f.File, f.Func}] {
		if s.meta.Sites[c].Call.Func == name {
			return true
		}
	}
	return false
}

// callCandidates returns the calls of function caller that may have
// entered function callee, by their arguments' end: the calls of callee
// by name, else those of an interface method of callee's method name,
// else those whose callee is not known statically. The calls are indexed
// (callSite).
func (s *Stacks) callCandidates(caller, callee trace.SiteID) []trace.SiteID {
	key := [2]trace.SiteID{caller, callee}
	if l, ok := s.callsOf[key]; ok {
		return l
	}
	if int(caller) >= len(s.meta.Sites) || int(callee) >= len(s.meta.Sites) {
		return nil
	}
	fn, name := &s.meta.Sites[caller], s.meta.Sites[callee].Func
	method := trace.MethodName(name)
	var named, methods, unknown []trace.SiteID
	for _, c := range s.calls[[2]string{fn.File, fn.Func}] {
		call := s.meta.Sites[c].Call
		switch m, isMethod := call.MethodCall(); {
		case call.Func == name:
			named = append(named, c)
		case isMethod && m == method:
			methods = append(methods, c)
		case call.Func == "":
			unknown = append(unknown, c)
		}
	}
	l := named
	if len(l) == 0 {
		l = methods
	}
	if len(l) == 0 {
		l = unknown
	}
	sort.Slice(l, func(i, j int) bool {
		a, b := &s.meta.Sites[l[i]].Call, &s.meta.Sites[l[j]].Call
		return a.EndLine < b.EndLine || a.EndLine == b.EndLine && a.EndCol < b.EndCol
	})
	if s.callsOf == nil {
		s.callsOf = map[[2]trace.SiteID][]trace.SiteID{}
	}
	s.callsOf[key] = l
	return l
}

// indexCalls indexes the calls among the sites defined since the last
// call; new calls drop the cached candidates.
func (s *Stacks) indexCalls() {
	if s.nsites == len(s.meta.Sites) {
		return
	}
	for ; s.nsites < len(s.meta.Sites); s.nsites++ {
		site := &s.meta.Sites[s.nsites]
		if site.Inline && site.Func != "" {
			if s.inlines == nil {
				s.inlines = map[string]trace.SiteID{}
			}
			s.inlines[site.Func] = trace.SiteID(s.nsites)
			clear(s.inlineOf)
		}
		if site.Call.IsZero() {
			continue
		}
		if s.calls == nil {
			s.calls = map[[2]string][]trace.SiteID{}
		}
		k := [2]string{site.File, site.Func}
		s.calls[k] = append(s.calls[k], trace.SiteID(s.nsites))
		clear(s.callsOf)
		clear(s.inlineOf)
	}
}

// HandleRange is Handle of a range event (detect.RangeHandler): its words
// share its goroutine and site, which is all Handle reads of an access.
func (s *Stacks) HandleRange(e *trace.Event) { s.Handle(e) }

// HandleGoAtomic is Handle of an atomic operation with trace.FlagGoAtomic
// (detect.GoAtomicHandler): its four events share its goroutine and site,
// and none is a function boundary, fork or test mark.
func (s *Stacks) HandleGoAtomic(e *trace.Event) { s.Handle(e) }

// Stack returns g's stack, innermost first: each frame at the last site it
// executed, named by its function.
func (s *Stacks) Stack(m *trace.Meta, g trace.GID) []trace.Site {
	st := s.m[g]
	if st == nil {
		return nil
	}
	if len(st.frames) == 0 {
		return []trace.Site{}
	}
	top := st.frames[len(st.frames)-1]
	out := innerFrames(m, top.fn, top.cur) // at the current event
	for i := len(st.frames) - 2; i >= 0; i-- {
		out = append(out, frameSite(m, st.frames[i].fn, st.frames[i].cur))
	}
	return out
}

// testOf names the test whose goroutine made the race's current access,
// else its previous one; "" when neither is known to be a test's.
func (s *Stacks) testOf(r *finding.Race) string {
	if g := s.m[r.Cur.G]; g != nil && g.test != "" {
		return g.test
	}
	if g := s.m[r.Prev.G]; g != nil && g.test != "" {
		return g.test
	}
	return ""
}

// reportedIn is the test an observed race reported now is the race of, as
// go test -race attributes it: test, the test of the goroutine that made
// the access, while it or a subtest of it is active; once it is paused in
// t.Parallel or has ended, the first test active now, or "" when none is
// (the race then fails the package alone). Package testing counts the
// race reports made in each test's active windows (checkRaces), so a
// goroutine a test left running fails whatever test runs when it races,
// or none when the tests are done (a binary built with -race waits at exit
// while such goroutines run on). A test without marks (an example, a
// benchmark) keeps its races.
func (s *Stacks) reportedIn(test string) string {
	if test == "" || !s.windowed[test] || s.active[test] {
		return test
	}
	for name := range s.active {
		if strings.HasPrefix(name, test+"/") {
			return test
		}
	}
	if now := s.activeBesides(""); len(now) > 0 {
		return now[0]
	}
	return ""
}

// activeBesides returns, sorted, the tests active now (go test -race fails
// each when a race is reported) other than test and its ancestors, leaving
// out a test whose subtest is among them (it fails with its subtest, as
// testing's checkRaces counts the race once up the tree).
func (s *Stacks) activeBesides(test string) []string {
	var out []string
	for name := range s.active {
		if name == test || strings.HasPrefix(test, name+"/") {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	var kept []string
	for _, name := range out {
		if !slices.ContainsFunc(out, func(o string) bool { return strings.HasPrefix(o, name+"/") }) {
			kept = append(kept, name)
		}
	}
	return kept
}

// stackAt returns the stack of access a as it was when a was made, from
// its goroutine's stack history; nil when the history no longer reaches
// back to it.
func (s *Stacks) stackAt(m *trace.Meta, a finding.Access) []trace.Site {
	st := s.m[a.G]
	if st == nil {
		return nil
	}
	i := sort.Search(len(st.hist), func(i int) bool { return st.hist[i].seq > a.Seq })
	if i == 0 {
		if st.trimmed {
			return nil
		}
		return m.Site(a.Site).Frames()
	}
	return nodeStack(m, st.hist[i-1].top, a.Site)
}

// nodeStack is the stack whose innermost frame is top, at site: below the
// site's callee's frame, if it has one.
func nodeStack(m *trace.Meta, top *snode, site trace.SiteID) []trace.Site {
	if top == nil {
		return m.Site(site).Frames()
	}
	out := innerFrames(m, top.fn, site)
	for n := top; n.parent != nil; n = n.parent {
		out = append(out, frameSite(m, n.parent.fn, n.call))
	}
	return out
}

// innerFrames is the innermost frame of a stack, function fn at site cur,
// below the frame of cur's callee if it has one (an access a std call's
// interceptor recorded).
func innerFrames(m *trace.Meta, fn, cur trace.SiteID) []trace.Site {
	f := frameSite(m, fn, cur)
	f.Callee = m.Site(cur).Callee
	return f.Frames()
}

// frameSite is a frame of function fn at site cur (the function's own
// site when cur is unknown).
func frameSite(m *trace.Meta, fn, cur trace.SiteID) trace.Site {
	if cur == trace.NoSite {
		cur = fn
	}
	site := m.Site(cur)
	site.Func = m.Site(fn).Func
	site.Callee = trace.Frame{} // an outer frame: the call, not the callee
	site.Call = trace.Call{}
	return site
}

// CreationStacks returns the creation stacks of the goroutines in gids
// (those of the findings to report) that the trace saw created: each
// parent's stack at the fork.
func (s *Stacks) CreationStacks(m *trace.Meta, gids map[trace.GID]bool) map[trace.GID][]trace.Site {
	out := map[trace.GID][]trace.Site{}
	for g := range gids {
		if c, ok := s.created[g]; ok {
			out[g] = nodeStack(m, c.top, c.site)
		}
	}
	return out
}
