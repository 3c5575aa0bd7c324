package static

import (
	"fmt"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// FilterNames are the warning filters in the order they are applied: the
// paper's four (section 4.3) with Go readings, then two for Go idioms.
//
//	thread-local  an access to an object its own thread allocated (for the
//	              spawner: allocated after the go statement)
//	large-reps    the two lvalues are not one and the same symbolic lvalue
//	              (aliasing decided by a points-to class or type only,
//	              the paper's representative nodes with k = 1)
//	bootup        one access is in a package initializer's continuation
//	              (Go's boot-up phase)
//	same-entry    both accesses come from the same entry function
//	unpublished   an access to a fresh object before it was published
//	handoff       goroutine and spawner accesses ordered by a channel
//	              handoff or a WaitGroup/channel wait on every path
var FilterNames = []string{"thread-local", "large-reps", "bootup", "same-entry", "unpublished", "handoff"}

// DefaultFilters enables every filter but same-entry, which would remove
// every race between two instances of one goroutine or handler — the
// commonest Go race (a goroutine started in a loop).
func DefaultFilters() map[string]bool {
	m := map[string]bool{}
	for _, n := range FilterNames {
		m[n] = n != "same-entry"
	}
	return m
}

// ParseFilters parses "all", "none" or a comma-separated list of names.
func ParseFilters(s string) (map[string]bool, error) {
	m := map[string]bool{}
	s = strings.TrimSpace(s)
	switch s {
	case "none", "":
		return m, nil
	case "all":
		for _, n := range FilterNames {
			m[n] = true
		}
		return m, nil
	case "default":
		return DefaultFilters(), nil
	}
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		ok := false
		for _, k := range FilterNames {
			if k == n {
				ok = true
			}
		}
		if !ok {
			return nil, fmt.Errorf("unknown filter %q (want all, none, default or %s)", n, strings.Join(FilterNames, ", "))
		}
		m[n] = true
	}
	return m, nil
}

// WarnAccess is one side of a warning.
type WarnAccess struct {
	Site   string   `json:"site"`   // file:line:col of the memory operation
	Kind   string   `json:"kind"`   // "read" or "write"
	Locks  []string `json:"locks"`  // locks surely held, from the thread's start
	Thread string   `json:"thread"` // the thread entry it runs in
	Fn     string   `json:"func"`   // the function containing the operation
	// Via: when the operation is inside the standard library, Site is the
	// user's call that reached it and Via the std frames, innermost first
	// ("func file:line:col", then the std function the user called).
	Via []string `json:"via,omitempty"`
	pos token.Pos
}

// Warning is a potential race (Figure 7): two accesses from threads that
// may run in parallel, to lvalues that may be equal, at least one a write,
// with no common lock.
type Warning struct {
	Pkg     string     `json:"package"`
	Object  string     `json:"object"`
	A       WarnAccess `json:"a"`
	B       WarnAccess `json:"b"`
	Matches []string   `json:"matches,omitempty"` // filters whose pattern this warning matches
	Removed string     `json:"removed,omitempty"` // the first enabled filter that removed it, or ""
}

// Rule is the warning's rule id: write/write or read/write.
func (w *Warning) Rule() string {
	if w.A.Kind == "write" && w.B.Kind == "write" {
		return "RELAY-WW"
	}
	return "RELAY-RW"
}

// Pos returns the position of access A in the analyzed package.
func (w *Warning) Pos() token.Pos { return w.A.pos }

// Message is the one-line diagnostic.
func (w *Warning) Message() string {
	return fmt.Sprintf("potential race on %s: %s at %s%s in %s holding %s, and %s at %s%s in %s holding %s",
		w.Object, w.A.Kind, shortSite(w.A.Site), viaText(w.A.Via), w.A.Thread, lockList(w.A.Locks),
		w.B.Kind, shortSite(w.B.Site), viaText(w.B.Via), w.B.Thread, lockList(w.B.Locks))
}

// viaText names the standard-library frames under a user's call site:
// " (in bytes.(*Buffer).grow at buffer.go:169:5, via bytes.(*Buffer).WriteString)".
func viaText(via []string) string {
	if len(via) == 0 {
		return ""
	}
	fn, site, _ := strings.Cut(via[0], " ")
	s := " (in " + fn + " at " + shortSite(site)
	if len(via) > 1 {
		s += ", via " + strings.Join(via[1:], ", ")
	}
	return s + ")"
}

func lockList(ls []string) string {
	if len(ls) == 0 {
		return "no lock"
	}
	return "{" + strings.Join(ls, ", ") + "}"
}

// thread is a thread entry point with its guarded accesses, expressed in
// the terms of the function that creates it.
type thread struct {
	kind    entryKind
	label   string
	what    string          // its kind in words: "goroutine", "handler", ...
	entries []*ssa.Function // entry functions (the spawner for a continuation)
	boot    bool
	accs    []tacc
	// The channels and WaitGroups the goroutine signals and waits on.
	sigClasses, waitClasses map[int32]bool
}

type tacc struct {
	obj          Lval
	key          string
	held         LockSet
	write        bool
	site, fn     string
	via          []string // the standard-library frames under site (Access.Via)
	pos          token.Pos
	local, unpub bool
	// perInst: rooted at an object each instance of the thread allocates
	// anew (two instances never share it).
	perInst bool
	// handoff: for a goroutine access, before its signal / after its
	// receive; for a spawner access, after a wait / before a send.
	beforeSig, afterRecv bool
	// instLocks: the held locks (by lockBase) each instance of the thread
	// allocates anew (a local var mu sync.Mutex of the goroutine, or one
	// per instance): common to no two instances.
	instLocks map[string]bool
}

// acrossInstances is the lockset x holds as seen from another instance of
// its own thread: without the instance's own locks.
func (x *tacc) acrossInstances() LockSet {
	if len(x.instLocks) == 0 {
		return x.held
	}
	var out LockSet
	for _, l := range x.held {
		if !x.instLocks[lockBase(l.K)] {
			out = append(out, l)
		}
	}
	return out
}

// setInstLocks marks the held locks that are per instance: orig is the
// access's relative lockset in the goroutine, rebound in the spawner.
func (ta *tacc) setInstLocks(orig RelLockset, b *Binding, perInst func(orig, rebound Lval) bool) {
	if orig.Top || orig.Bottom {
		return
	}
	for _, l := range orig.Plus {
		r := l.L.Rebind(b)
		if r.Exact() && perInst(l.L, r) {
			if ta.instLocks == nil {
				ta.instLocks = map[string]bool{}
			}
			ta.instLocks[lockBase(MakeLock(r, l.Read).K)] = true
		}
	}
}

// relName names a function relative to the package (pkg.F for others').
func (ps *pkgState) relName(fn *ssa.Function) string {
	if fn.Pkg != nil && fn.Pkg.Pkg != ps.pass.Pkg {
		return fn.Pkg.Pkg.Name() + "." + fn.RelString(fn.Pkg.Pkg)
	}
	if obj := fn.Object(); fn.Pkg == nil && obj != nil && obj.Pkg() != nil && obj.Pkg() != ps.pass.Pkg {
		return obj.Pkg().Name() + "." + fn.RelString(obj.Pkg())
	}
	return fn.RelString(ps.pass.Pkg)
}

// threads builds the package's thread entry points: go statements (and
// WaitGroup.Go), each paired with the spawner's continuation and, when the
// statement can run more than once, with itself; and net/http handlers,
// each paired with itself. Every two entries are paired too (Figure 7).
func (ps *pkgState) threads() ([]*thread, map[[2]int]bool) {
	var ts []*thread
	pairs := map[[2]int]bool{}
	var entries []int
	goThread := map[*goSite]int{}
	for _, fn := range ps.funcs {
		fr := ps.res[fn]
		if fr == nil {
			continue
		}
		for _, gs := range fr.goSites {
			e := ps.entryThread(fn, fr, gs)
			ei := len(ts)
			goThread[gs] = ei
			ts = append(ts, e)
			entries = append(entries, ei)
			if gs.kind == entryHTTP || ps.multi(fn, fr, gs) {
				pairs[[2]int{ei, ei}] = true
			}
			if gs.kind == entryGo {
				c := ps.contThread(fn, fr, gs, e)
				ci := len(ts)
				ts = append(ts, c)
				pairs[[2]int{ei, ci}] = true
			}
		}
	}
	for i, a := range entries {
		for _, b := range entries[i+1:] {
			pairs[[2]int{a, b}] = true
		}
	}
	// A spawner's caller continues after the call while the goroutines
	// the spawner started run: a constructor that starts a worker, then
	// its caller reads what the worker writes. The goroutine is rebound
	// into the caller's terms through the call (section 3.4's thread
	// roots, one call level up).
	for _, fn := range ps.funcs {
		fr := ps.res[fn]
		if fr == nil {
			continue
		}
		for _, sc := range fr.spawnCalls {
			sr := ps.res[sc.callee]
			if sr == nil {
				continue
			}
			for _, gs := range sr.goSites {
				ei, ok := goThread[gs]
				if !ok || gs.kind != entryGo {
					continue
				}
				// A spawner that waits for the goroutine (on something it
				// signals) before every return has joined it.
				if !sr.cfgOf().exitAvoiding(points(sr.waits, ts[ei].sigClasses))(gs.pp) {
					continue
				}
				e2 := ps.reboundThread(ts[ei], fn, sc)
				ci := len(ts)
				ts = append(ts, e2, ps.callerThread(fn, fr, sc))
				pairs[[2]int{ci, ci + 1}] = true
			}
		}
	}
	return ts, pairs
}

// reboundThread is goroutine e, expressed in the spawner's terms, rebound
// into the caller fn through the call sc.
func (ps *pkgState) reboundThread(e *thread, fn *ssa.Function, sc spawnCall) *thread {
	t := &thread{kind: e.kind, label: e.label, what: e.what, entries: e.entries, sigClasses: map[int32]bool{}, waitClasses: map[int32]bool{}}
	for _, a := range e.accs {
		o := a.obj.Rebind(sc.bind).Qualify(fn.String())
		held := RelLockset{Plus: a.held}.Rebind(sc.bind).Plus
		na := a
		na.obj, na.key, na.held, na.instLocks = o, o.Key(), held, nil
		na.beforeSig, na.afterRecv = false, false
		t.accs = append(t.accs, na)
	}
	return t
}

// callerThread is fn's continuation after its call sc to a spawner.
// The object the spawner returned fresh was published to its goroutine.
func (ps *pkgState) callerThread(fn *ssa.Function, fr *funcResult, sc spawnCall) *thread {
	c := fr.cfgOf()
	t := &thread{kind: entryCont, entries: []*ssa.Function{fn}, boot: isInit(fn)}
	t.label = fmt.Sprintf("%s after the call to %s at %s", ps.relName(fn), ps.relName(sc.callee), shortSite(ps.site(sc.pos)))
	for _, a := range fr.accesses {
		if !c.after(sc.pp, a.pp) {
			continue
		}
		ta := newTacc(a, a.Obj.Qualify(fn.String()), a.L, a.anchor)
		if a.Obj.Root.Kind == RootAlloc {
			if a.Obj.Root.Name == sc.bind.FreshTo {
				ta.unpub = false
			} else if at, ok := fr.allocPP[a.Obj.Root.Name]; ok {
				ta.local = at != sc.pp && c.after(sc.pp, at)
			} else {
				ta.local = true // allocated by a callee during the continuation
			}
		}
		t.accs = append(t.accs, ta)
	}
	return t
}

func (ps *pkgState) entryThread(spawner *ssa.Function, fr *funcResult, gs *goSite) *thread {
	t := &thread{kind: gs.kind, sigClasses: map[int32]bool{}, waitClasses: map[int32]bool{}}
	if gs.viaWG && gs.wgClass >= 0 {
		t.sigClasses[gs.wgClass] = true
	}
	var names []string
	goInLoop := fr.cfgOf().reaches(int(gs.pp.block), int(gs.pp.block))
	perInst := func(orig, rebound Lval) bool {
		if orig.Root.Kind == RootAlloc {
			return true // allocated by the goroutine itself
		}
		if rebound.Root.Kind == RootAlloc && (gs.kind == entryGo || gs.kind == entrySubtest) {
			// Handler instances share what the registration bound; go
			// statement instances from separate calls of the spawner do not.
			if at, ok := fr.allocPP[rebound.Root.Name]; ok {
				return !goInLoop || fr.cfgOf().after(gs.pp, at)
			}
		}
		return false
	}
	for i, target := range gs.targets {
		t.entries = append(t.entries, target)
		names = append(names, ps.relName(target))
		b := gs.binds[i]
		if tr := ps.res[target]; tr != nil {
			c := tr.cfgOf()
			sigs := points(tr.signals, nil)
			free := c.exitAvoiding(sigs)
			beforeSig := func(p progPoint) bool {
				if free(p) {
					return false
				}
				for s := range sigs {
					if c.after(s, p) {
						return false
					}
				}
				return true
			}
			noRecv := c.avoiding(progPoint{0, -1}, points(tr.waits, nil))
			afterRecv := func(p progPoint) bool { return !noRecv(p) }
			addClasses(t.sigClasses, tr.signals)
			addClasses(t.waitClasses, tr.waits)
			parAt, isPar := parallelPoint(target)
			for _, a := range tr.accesses {
				if gs.kind == entrySubtest && isPar && !c.after(parAt, a.pp) {
					continue // before t.Parallel: sequential with the parent
				}
				ta, ok := ps.rebindAccess(a, b, spawner, a.anchor)
				if !ok {
					continue
				}
				ta.local = a.Obj.Root.Kind == RootAlloc
				ta.perInst = perInst(a.Obj, ta.obj)
				ta.setInstLocks(a.L, b, perInst)
				ta.beforeSig = gs.viaWG || len(sigs) > 0 && beforeSig(a.pp)
				ta.afterRecv = len(tr.waits) > 0 && afterRecv(a.pp)
				t.accs = append(t.accs, ta)
			}
			continue
		}
		if s := ps.summaryOf(target); s != nil {
			for _, a := range s.Accesses.Items {
				ta, ok := ps.rebindAccess(a, b, spawner, gs.pos)
				if !ok {
					continue
				}
				ta.local = a.Obj.Root.Kind == RootAlloc
				ta.perInst = perInst(a.Obj, ta.obj)
				ta.setInstLocks(a.L, b, perInst)
				ta.beforeSig = gs.viaWG
				t.accs = append(t.accs, ta)
			}
		}
	}
	what, verb := "goroutine", "started"
	switch gs.kind {
	case entryHTTP:
		what, verb = "handler", "registered"
	case entrySubtest:
		what, verb = "parallel subtest", "run"
	}
	t.what = what
	t.label = fmt.Sprintf("%s %s %s at %s", what, strings.Join(names, "|"), verb, shortSite(ps.site(gs.pos)))
	return t
}

func (ps *pkgState) rebindAccess(a Access, b *Binding, spawner *ssa.Function, pos token.Pos) (tacc, bool) {
	L := a.L.Rebind(b)
	if L.Bottom {
		return tacc{}, false
	}
	if !pos.IsValid() {
		pos = a.anchor
	}
	return newTacc(a, a.Obj.Rebind(b).Qualify(spawner.String()), L, pos), true
}

// newTacc is access a of a thread, on lvalue o with relative lockset L
// (its L₊ is what the thread surely holds; ⊤ holds nothing known).
func newTacc(a Access, o Lval, L RelLockset, pos token.Pos) tacc {
	var held LockSet
	if !L.Top {
		held = L.Plus
	}
	return tacc{obj: o, key: o.Key(), held: held, write: a.Write, site: a.Site, fn: a.Fn, via: a.Via, pos: pos, unpub: a.Unpub}
}

func (fr *funcResult) cfgOf() *cfgInfo {
	if fr.cfg == nil {
		fr.cfg = newCFG(fr.fn)
	}
	return fr.cfg
}

// points returns the synchronization points on one of the classes (all
// points if classes is nil).
func points(m map[progPoint][]int32, classes map[int32]bool) map[progPoint]bool {
	out := map[progPoint]bool{}
	for pp, cs := range m {
		for _, c := range cs {
			if classes == nil || c >= 0 && classes[c] {
				out[pp] = true
			}
		}
	}
	return out
}

func addClasses(set map[int32]bool, m map[progPoint][]int32) {
	for _, cs := range m {
		for _, c := range cs {
			if c >= 0 {
				set[c] = true
			}
		}
	}
}

// contThread is the spawner's continuation after go site gs. Its accesses
// are marked as after a wait on something the goroutine e signals, or
// before a signal on something e waits on, on every path.
func (ps *pkgState) contThread(fn *ssa.Function, fr *funcResult, gs *goSite, e *thread) *thread {
	c := fr.cfgOf()
	t := &thread{kind: entryCont, entries: []*ssa.Function{fn}, boot: isInit(fn)}
	t.label = fmt.Sprintf("%s after the go statement at %s", ps.relName(fn), shortSite(ps.site(gs.pos)))
	noWait := c.avoiding(gs.pp, points(fr.waits, e.sigClasses))
	sends := points(fr.signals, e.waitClasses)
	var sendFree func(progPoint) bool
	if len(sends) > 0 {
		sendFree = c.exitAvoiding(sends)
	}
	for _, a := range fr.accesses {
		if !c.after(gs.pp, a.pp) {
			continue
		}
		ta := newTacc(a, a.Obj.Qualify(fn.String()), a.L, a.anchor)
		if a.Obj.Root.Kind == RootAlloc {
			if at, ok := fr.allocPP[a.Obj.Root.Name]; ok {
				ta.local = c.after(gs.pp, at)
			} else {
				ta.local = true // allocated by a callee during the continuation
			}
		}
		ta.afterRecv = !noWait(a.pp) // after a wait, for the spawner
		if sendFree != nil && !sendFree(a.pp) {
			ta.beforeSig = true // before a send, for the spawner
			for s := range sends {
				if c.after(gs.pp, s) && c.after(s, a.pp) {
					ta.beforeSig = false
					break
				}
			}
		}
		t.accs = append(t.accs, ta)
	}
	return t
}

// isInit reports whether fn runs during package initialization.
func isInit(fn *ssa.Function) bool {
	for fn.Parent() != nil {
		fn = fn.Parent()
	}
	if fn.Synthetic == "package initializer" {
		return true
	}
	obj, _ := fn.Object().(*types.Func)
	return obj != nil && obj.Name() == "init" && obj.Signature().Recv() == nil
}

// multi reports whether a go site may run more than once: it is in a loop,
// or its function may be called more than once.
func (ps *pkgState) multi(fn *ssa.Function, fr *funcResult, gs *goSite) bool {
	if fr.cfgOf().reaches(int(gs.pp.block), int(gs.pp.block)) {
		return true
	}
	return !ps.callOnce(fn, map[*ssa.Function]bool{})
}

// callOnce reports whether fn runs at most once per program run: main,
// init, or an unexported, non-address-taken function with a single call
// site outside loops in a function that itself runs once.
func (ps *pkgState) callOnce(fn *ssa.Function, visiting map[*ssa.Function]bool) bool {
	if visiting[fn] {
		return false
	}
	visiting[fn] = true
	if isInit(fn) && fn.Parent() == nil {
		return true
	}
	if fn.Name() == "main" && fn.Parent() == nil && fn.Pkg != nil && fn.Pkg.Pkg.Name() == "main" {
		return true
	}
	if obj, ok := fn.Object().(*types.Func); ok && (obj.Exported() || obj.Signature().Recv() != nil) {
		return false
	}
	ps.buildCallers()
	if ps.addrTaken[fn] {
		return false
	}
	cs := ps.callers[fn]
	if len(cs) != 1 {
		return false
	}
	c := cs[0]
	cr := ps.res[c.fn]
	if cr == nil || cr.cfgOf().reaches(int(c.pp.block), int(c.pp.block)) {
		return false
	}
	return ps.callOnce(c.fn, visiting)
}

type callerSite struct {
	fn *ssa.Function
	pp progPoint
}

// buildCallers indexes direct call sites and address-taken functions.
func (ps *pkgState) buildCallers() {
	if ps.callers != nil {
		return
	}
	ps.callers = map[*ssa.Function][]callerSite{}
	ps.addrTaken = map[*ssa.Function]bool{}
	var ops []*ssa.Value
	for _, fn := range ps.funcs {
		for _, b := range fn.Blocks {
			for i, instr := range b.Instrs {
				pp := progPoint{int32(b.Index), int32(i)}
				var callee ssa.Value
				if c, ok := instr.(ssa.CallInstruction); ok && !c.Common().IsInvoke() {
					callee = c.Common().Value
					if f := c.Common().StaticCallee(); f != nil {
						ps.callers[f] = append(ps.callers[f], callerSite{fn, pp})
					}
				}
				ops = instr.Operands(ops[:0])
				for _, op := range ops {
					if op == nil || *op == callee {
						continue
					}
					if f, ok := (*op).(*ssa.Function); ok {
						ps.addrTaken[f] = true
					}
				}
				if mc, ok := instr.(*ssa.MakeClosure); ok {
					if f, ok := mc.Fn.(*ssa.Function); ok {
						refs := mc.Referrers()
						if refs != nil {
							for _, r := range *refs {
								c, ok := r.(ssa.CallInstruction)
								if !ok || c.Common().Value != mc || isGoOrDefer(r) {
									ps.addrTaken[f] = true
								}
							}
						}
					}
				}
			}
		}
	}
}

func isGoOrDefer(i ssa.Instruction) bool {
	switch i.(type) {
	case *ssa.Go, *ssa.Defer:
		return true
	}
	return false
}

// warnings generates the warnings of Figure 7 over all thread pairs and
// applies the filters.
func (ps *pkgState) warnings() []Warning {
	ts, pairs := ps.threads()
	ps.stats.Threads = len(ts)
	ps.stats.ThreadPairs = len(pairs)
	if len(pairs) == 0 {
		return nil
	}
	// Only threads in some pair matter.
	inPair := map[int]bool{}
	for p := range pairs {
		inPair[p[0]], inPair[p[1]] = true, true
	}
	type ref struct{ t, i int }
	buckets := map[string][]ref{}
	for ti, t := range ts {
		if !inPair[ti] {
			continue
		}
		for i := range t.accs {
			m := t.accs[i].obj.Mem()
			buckets[m] = append(buckets[m], ref{ti, i})
		}
	}
	mems := make([]string, 0, len(buckets))
	for m := range buckets {
		mems = append(mems, m)
	}
	sort.Strings(mems)
	seen := map[string]bool{}
	var out []Warning
	for _, m := range mems {
		rs := buckets[m]
		for x := range rs {
			for y := x; y < len(rs); y++ {
				ra, rb := rs[x], rs[y]
				ti, tj := ra.t, rb.t
				if ti > tj {
					ti, tj = tj, ti
				}
				if !pairs[[2]int{ti, tj}] {
					continue
				}
				a, b := &ts[ra.t].accs[ra.i], &ts[rb.t].accs[rb.i]
				if !a.write && !b.write {
					continue
				}
				if x == y && ra.t != rb.t {
					continue
				}
				if ra.t == rb.t {
					// Two instances of one thread: a lock each instance
					// allocates is not common to them (section 3.4's
					// thread roots, one lock object per instance).
					if a.acrossInstances().Excludes(b.acrossInstances()) {
						continue
					}
				} else if a.held.Excludes(b.held) {
					continue
				}
				if ra.t == rb.t && a.perInst && b.perInst && a.obj.Root.Kind == RootAlloc &&
					b.obj.Root.Kind == RootAlloc && a.obj.Root.Name == b.obj.Root.Name {
					continue // two instances, two objects
				}
				may, same := ps.mayEqual(a, b)
				if !may {
					continue
				}
				w := ps.makeWarning(ts, ra.t, rb.t, a, b, same)
				// Every thread pair at two sites is a candidate: the
				// filters judge each before deduplication (Dedup).
				k := sitePairKey(w.A.Site, w.B.Site) + "|" + strings.Join(w.Matches, ",")
				if seen[k] {
					continue
				}
				seen[k] = true
				out = append(out, w)
			}
		}
	}
	out = Dedup(out, ps.cfg.Filters)
	ps.stats.Candidates = len(out)
	ps.stats.Reported, ps.stats.Removed = Refilter(out, ps.cfg.Filters)
	sort.SliceStable(out, func(i, j int) bool { return out[i].A.pos < out[j].A.pos })
	return out
}

func sitePairKey(a, b string) string {
	if a > b {
		a, b = b, a
	}
	return a + "|" + b
}

// Dedup keeps one warning per pair of sites. The filters run first, on
// every candidate: a site pair is reported if any of its thread pairs
// survives the enabled filters (a filtered pairing must not hide a real
// race at the same two sites), and then by the first survivor; otherwise
// by its first candidate, with the filter that removed it. The input
// order is kept among the representatives.
func Dedup(ws []Warning, enabled map[string]bool) []Warning {
	Refilter(ws, enabled)
	best := map[string]int{}
	var order []string
	for i := range ws {
		k := sitePairKey(ws[i].A.Site, ws[i].B.Site)
		j, ok := best[k]
		if !ok {
			best[k] = i
			order = append(order, k)
			continue
		}
		if ws[j].Removed != "" && ws[i].Removed == "" {
			best[k] = i
		}
	}
	out := make([]Warning, 0, len(order))
	for _, k := range order {
		out = append(out, ws[best[k]])
	}
	return out
}

// posOf returns the position of a site in one of the package's files, or
// NoPos for a site elsewhere.
func (ps *pkgState) posOf(site string) token.Pos {
	if ps.files == nil {
		ps.files = map[string]*token.File{}
		for _, f := range ps.pass.Files {
			if tf := ps.pass.Fset.File(f.Pos()); tf != nil {
				ps.files[tf.Name()] = tf
			}
		}
	}
	i := strings.LastIndexByte(site, ':')
	if i < 0 {
		return token.NoPos
	}
	j := strings.LastIndexByte(site[:i], ':')
	if j < 0 {
		return token.NoPos
	}
	tf := ps.files[site[:j]]
	line, err1 := strconv.Atoi(site[j+1 : i])
	col, err2 := strconv.Atoi(site[i+1:])
	if tf == nil || err1 != nil || err2 != nil || line < 1 || line > tf.LineCount() {
		return token.NoPos
	}
	p := tf.LineStart(line) + token.Pos(col-1)
	if int(p)-tf.Base() > tf.Size() {
		return token.NoPos
	}
	return p
}

// Refilter sets each warning's Removed to the first enabled filter among
// its Matches (FilterNames order) and returns how many are kept and how
// many each filter removed.
func Refilter(ws []Warning, enabled map[string]bool) (kept int, removed map[string]int) {
	removed = map[string]int{}
	for i := range ws {
		w := &ws[i]
		w.Removed = ""
		for _, f := range w.Matches {
			if enabled[f] {
				w.Removed = f
				removed[f]++
				break
			}
		}
		if w.Removed == "" {
			kept++
		}
	}
	return kept, removed
}

func (ps *pkgState) makeWarning(ts []*thread, ti, tj int, a, b *tacc, same bool) Warning {
	// A is the access that comes first in the package.
	if pa, pb := ps.posOrAnchor(a), ps.posOrAnchor(b); pb < pa || pb == pa && b.write && !a.write {
		a, b = b, a
		ti, tj = tj, ti
	}
	wa := func(x *tacc, t *thread) WarnAccess {
		var locks []string
		for _, l := range x.held {
			locks = append(locks, l.String())
		}
		pos := ps.posOf(x.site)
		if !pos.IsValid() {
			pos = x.pos
		}
		return WarnAccess{Site: x.site, Kind: kindName(x.write), Locks: locks, Thread: t.label, Fn: x.fn, Via: x.via, pos: pos}
	}
	w := Warning{Pkg: ps.pass.Pkg.Path(), Object: a.obj.String(), A: wa(a, ts[ti]), B: wa(b, ts[tj])}
	if ti == tj {
		w.B.Thread = "another instance of the same " + ts[tj].what
	}
	ta, tb := ts[ti], ts[tj]
	// The paper's filters, in order, then Go's.
	if a.local || b.local {
		w.Matches = append(w.Matches, "thread-local")
	}
	if !same {
		w.Matches = append(w.Matches, "large-reps")
	}
	if ta.boot || tb.boot {
		w.Matches = append(w.Matches, "bootup")
	}
	if sameEntry(ta, tb) {
		w.Matches = append(w.Matches, "same-entry")
	}
	if a.unpub || b.unpub {
		w.Matches = append(w.Matches, "unpublished")
	}
	if handoff(ta, tb, a, b) {
		w.Matches = append(w.Matches, "handoff")
	}
	return w
}

func (ps *pkgState) posOrAnchor(a *tacc) token.Pos {
	if p := ps.posOf(a.site); p.IsValid() {
		return p
	}
	return a.pos
}

func kindName(write bool) string {
	if write {
		return "write"
	}
	return "read"
}

func sameEntry(a, b *thread) bool {
	if a == b {
		return true
	}
	if a.kind == entryCont || b.kind == entryCont {
		return false
	}
	for _, x := range a.entries {
		for _, y := range b.entries {
			if x == y {
				return true
			}
		}
	}
	return false
}

// handoff: a goroutine access and a spawner access ordered by the
// goroutine's signal and the spawner's wait, or by the spawner's send and
// the goroutine's receive, on every path.
func handoff(ta, tb *thread, a, b *tacc) bool {
	if ta.kind == entryCont {
		ta, tb, a, b = tb, ta, b, a
	}
	if tb.kind != entryCont || ta.kind == entryCont {
		return false
	}
	// a in the goroutine, b in the spawner's continuation.
	return a.beforeSig && b.afterRecv || b.beforeSig && a.afterRecv
}

// mayEqual is the paper's mayEqual: the same symbolic lvalue, or lvalues of
// the same memory identity whose objects share a points-to class (or
// cannot be placed in one). same reports the first case.
func (ps *pkgState) mayEqual(a, b *tacc) (may, same bool) {
	if a.key == b.key {
		return true, a.obj.Exact()
	}
	if a.obj.Mem() != b.obj.Mem() {
		return false, false
	}
	if !a.obj.Exact() || !b.obj.Exact() {
		return true, false
	}
	// Distinct variables or allocation sites reached without loads are
	// distinct memory.
	if isObjectRoot(a.obj.Root) && isObjectRoot(b.obj.Root) && !hasLoad(a.obj) && !hasLoad(b.obj) {
		return a.obj.Root.Kind == b.obj.Root.Kind && a.obj.Root.Name == b.obj.Root.Name && sameFields(a.obj, b.obj), false
	}
	ca, cb := ps.pta.classOf(a.obj, ps.rootClass), ps.pta.classOf(b.obj, ps.rootClass)
	if ca < 0 || cb < 0 {
		return true, false
	}
	return ca == cb, false
}

func isObjectRoot(r Root) bool { return r.Kind == RootGlobal || r.Kind == RootAlloc }

func hasLoad(l Lval) bool {
	for _, s := range l.Path {
		if s.Kind == SelLoad {
			return true
		}
	}
	return false
}

func sameFields(a, b Lval) bool {
	if len(a.Path) != len(b.Path) {
		return false
	}
	for i := range a.Path {
		if a.Path[i].Kind != b.Path[i].Kind || a.Path[i].Mem != b.Path[i].Mem {
			return false
		}
	}
	return true
}

// rootClass maps a root to its object's points-to class in this package.
func (ps *pkgState) rootClass(r Root) (int32, bool) {
	p := ps.pta
	switch r.Kind {
	case RootParam, RootFreeVar:
		fn := ps.byName[r.Fn]
		if fn == nil {
			return 0, false
		}
		if r.Kind == RootParam && r.Index < len(fn.Params) {
			return p.obj(fn.Params[r.Index]), true
		}
		if r.Kind == RootFreeVar && r.Index < len(fn.FreeVars) {
			return p.obj(fn.FreeVars[r.Index]), true
		}
	case RootGlobal:
		if g := ps.globalByName(r.Name); g != nil {
			return p.obj(g), true
		}
	case RootAlloc:
		if ps.allocVals == nil {
			ps.allocVals = map[string]ssa.Value{}
			for _, fn := range ps.funcs {
				if fr := ps.res[fn]; fr != nil {
					for k, v := range fr.allocVal {
						ps.allocVals[k] = v
					}
				}
			}
		}
		if v, ok := ps.allocVals[r.Name]; ok {
			return p.obj(v), true
		}
	}
	return 0, false
}

func (ps *pkgState) globalByName(name string) *ssa.Global {
	if g, ok := ps.globals[name]; ok {
		return g
	}
	for v := range ps.pta.nodes {
		if g, ok := v.(*ssa.Global); ok {
			ps.globals[globalName(g)] = g
		}
	}
	g := ps.globals[name]
	if g == nil {
		ps.globals[name] = nil
	}
	return g
}
