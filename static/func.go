package static

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// progPoint is an instruction of a function: block index, instruction index.
type progPoint struct{ block, index int32 }

// goSite is a thread creation site in a function: a go statement, a
// WaitGroup.Go call, or a net/http handler registration.
type goSite struct {
	pp      progPoint
	pos     token.Pos
	targets []*ssa.Function
	binds   []*Binding
	kind    entryKind
	viaWG   bool  // wg.Go: the goroutine calls wg.Done at its end
	wgClass int32 // that WaitGroup's points-to class
}

type entryKind uint8

const (
	entryGo entryKind = iota + 1
	entryHTTP
	entryCont
	// entrySubtest: a t.Run whose function calls t.Parallel. It runs after
	// the parent's function returns (so not beside the spawner's
	// continuation), beside the other parallel subtests, from its
	// t.Parallel call on.
	entrySubtest
)

// funcResult is what the analysis of one function keeps beyond its
// summary, for warning generation in the same package.
type funcResult struct {
	fn       *ssa.Function
	accesses []Access // accessible accesses, with program points and anchors
	goSites  []*goSite
	allocPP  map[string]progPoint // allocation site → where (incl. calls returning fresh objects)
	allocVal map[string]ssa.Value
	// Synchronization points with the points-to classes of the channels or
	// WaitGroups they use (-1: unknown).
	waits   map[progPoint][]int32 // receives, blocking selects, WaitGroup.Wait, Cond.Wait
	signals map[progPoint][]int32 // sends, close, WaitGroup.Done
	cfg     *cfgInfo
	// spawnCalls are this function's calls to functions of the package
	// that start goroutines, with the call's binding (issue 29.3).
	spawnCalls []spawnCall
	// doubles: locks taken while surely held (doublelock.go).
	doubles []DoubleLock
}

// spawnCall is a call to a spawner: the caller's accesses after it run in
// parallel with the goroutines the spawner started.
type spawnCall struct {
	pp     progPoint
	pos    token.Pos
	callee *ssa.Function
	bind   *Binding
}

// funcAnalysis analyzes one function: the relative lockset dataflow
// (section 3.2, Figure 4) and the guarded accesses (section 3.3, Figure 6).
type funcAnalysis struct {
	ps     *pkgState
	fn     *ssa.Function
	sym    *symEval
	res    *funcResult
	defers []*ssa.Defer
	exit   RelLockset
	result ReturnVal
	signal bool
	emit   bool
	keep   bool          // keep every access with its program point (thread entries and spawners)
	access accessBuilder // summary accesses
	pubs   map[ssa.Value][]progPoint
	acc    map[int32]bool // classes accessible from formals, free variables, results, globals
	// acquires: the locks the function may take that it had not released
	// (Summary.Acquires, doublelock.go).
	acquires []Acquire
	// captured: the roots of what the function's closures and method
	// values capture (handedOff), computed once.
	captured map[Root]bool
}

func (ps *pkgState) analyzeFunc(fn *ssa.Function) (*Summary, *funcResult) {
	fa := &funcAnalysis{ps: ps, fn: fn, exit: BottomLockset(), keep: ps.threadFuncs[fn]}
	fa.sym = &symEval{fa: fa, memo: make(map[ssa.Value]*Lval)}
	fa.res = &funcResult{
		fn:       fn,
		allocPP:  map[string]progPoint{},
		allocVal: map[string]ssa.Value{},
		waits:    map[progPoint][]int32{},
		signals:  map[progPoint][]int32{},
	}
	for _, b := range fn.Blocks {
		for i, instr := range b.Instrs {
			switch in := instr.(type) {
			case *ssa.Defer:
				fa.defers = append(fa.defers, in)
			case *ssa.Alloc, *ssa.MakeMap, *ssa.MakeSlice, *ssa.MakeChan:
				// Allocation sites, before any access to them is seen.
				s := ps.site(in.Pos())
				fa.res.allocPP[s] = progPoint{int32(b.Index), int32(i)}
				fa.res.allocVal[s] = in.(ssa.Value)
			}
		}
	}

	// Relative lockset dataflow to a fixpoint.
	n := len(fn.Blocks)
	in := make([]RelLockset, n)
	for i := range in {
		in[i] = BottomLockset()
	}
	if n > 0 {
		in[0] = EmptyLockset()
	}
	work := make([]bool, n)
	queue := []int{}
	push := func(i int) {
		if !work[i] {
			work[i] = true
			queue = append(queue, i)
		}
	}
	if n > 0 {
		push(0)
	}
	steps := 0
	for len(queue) > 0 {
		bi := queue[0]
		queue = queue[1:]
		work[bi] = false
		steps++
		if steps > 50*n+1000 {
			// A lattice of finite height guarantees termination; this
			// bound only protects against a non-monotone summary.
			break
		}
		b := fn.Blocks[bi]
		out := fa.block(b, in[bi])
		fa.propagate(b, out, func(s *ssa.BasicBlock, l RelLockset) {
			nl := in[s.Index].Join(l)
			if !nl.Equal(in[s.Index]) {
				in[s.Index] = nl
				push(s.Index)
			}
		})
	}

	// Guarded accesses, with the fixpoint's locksets.
	fa.emit = true
	for _, b := range fn.Blocks {
		if !in[b.Index].Bottom {
			fa.block(b, in[b.Index])
		}
	}

	sum := &Summary{
		Fn:       fn.String(),
		Lock:     fa.exit,
		Accesses: fa.access.set(),
		Return:   fa.result,
		Signals:  fa.signal,
		Acquires: fa.acquires,
	}
	for _, p := range fn.Params {
		sum.Params = append(sum.Params, p.Name())
	}
	return sum, fa.res
}

// propagate sends a block's out-state to its successors; a branch on the
// result of TryLock adds the lock on the success edge only.
func (fa *funcAnalysis) propagate(b *ssa.BasicBlock, out RelLockset, send func(*ssa.BasicBlock, RelLockset)) {
	if len(b.Instrs) > 0 && len(b.Succs) == 2 {
		if iff, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If); ok {
			if lk, neg, ok := fa.tryLockCond(iff.Cond); ok {
				t, f := b.Succs[0], b.Succs[1]
				if neg {
					t, f = f, t
				}
				send(t, LockUpdate(out, RelLockset{Plus: NewLockSet(lk)}))
				send(f, out)
				return
			}
		}
	}
	for _, s := range b.Succs {
		send(s, out)
	}
}

// tryLockCond recognizes `if mu.TryLock()` and `if !mu.TryLock()`.
func (fa *funcAnalysis) tryLockCond(v ssa.Value) (Lock, bool, bool) {
	neg := false
	if u, ok := v.(*ssa.UnOp); ok && u.Op == token.NOT {
		v, neg = u.X, true
	}
	call, ok := v.(*ssa.Call)
	if !ok {
		return Lock{}, false, false
	}
	callee := call.Common().StaticCallee()
	if callee == nil {
		return Lock{}, false, false
	}
	op := syncModel(callee)
	if op != opTryLock && op != opTryRLock {
		return Lock{}, false, false
	}
	l := fa.sym.eval(call.Common().Args[0])
	if l == nil || !l.Exact() {
		return Lock{}, false, false
	}
	return MakeLock(*l, op == opTryRLock), neg, true
}

// block runs the flow function over one block and returns the out-state.
func (fa *funcAnalysis) block(b *ssa.BasicBlock, L RelLockset) RelLockset {
	for i, instr := range b.Instrs {
		if L.Bottom {
			return L
		}
		pp := progPoint{int32(b.Index), int32(i)}
		switch in := instr.(type) {
		case *ssa.Call:
			L = fa.call(in, in.Common(), L, pp, in.Pos())
		case *ssa.RunDefers:
			L = fa.runDefers(b, L, pp)
		case *ssa.Go:
			if fa.emit {
				fa.goStmt(in, pp)
			}
		case *ssa.Return:
			if fa.emit {
				fa.exit = fa.exit.Join(L)
				fa.returned(in)
			}
		case *ssa.UnOp:
			switch in.Op {
			case token.MUL:
				fa.load(in.X, false, in.Pos(), L, pp)
			case token.ARROW:
				fa.mark(pp, true, in.X)
			}
		case *ssa.Store:
			fa.load(in.Addr, true, in.Pos(), L, pp)
		case *ssa.MapUpdate:
			fa.mapAccess(in.Map, true, in.Pos(), L, pp)
		case *ssa.Lookup:
			if _, ok := in.X.Type().Underlying().(*types.Map); ok {
				fa.mapAccess(in.X, false, in.Pos(), L, pp)
			}
		case *ssa.Next:
			if !in.IsString {
				if r, ok := in.Iter.(*ssa.Range); ok {
					fa.mapAccess(r.X, false, in.Pos(), L, pp)
				}
			}
		case *ssa.Send:
			fa.mark(pp, false, in.Chan)
		case *ssa.Select:
			// A case's send or receive happens only on its branch: the
			// timeout branch of select { case <-done: case <-t.C: } has
			// not received from done (selecttimeout's st-partial race was
			// removed by handoff when the whole select was a wait on done).
			for i, st := range in.States {
				at, ok := selectCase(in, i)
				if !ok {
					if len(in.States) > 1 || !in.Blocking {
						continue // no branch found: neither a wait nor a signal
					}
					at = pp
				}
				fa.mark(at, st.Dir != types.SendOnly, st.Chan)
			}
		}
	}
	return L
}

// selectCase is the program point where case i of sel is known to have
// been chosen: the entry (index -1) of the block the select's index test
// for i branches to (go/ssa lowers a select to index == 0, index == 1, ...).
func selectCase(sel *ssa.Select, i int) (progPoint, bool) {
	refs := sel.Referrers()
	if refs == nil {
		return progPoint{}, false
	}
	for _, r := range *refs {
		ex, ok := r.(*ssa.Extract)
		if !ok || ex.Index != 0 || ex.Referrers() == nil {
			continue
		}
		for _, r2 := range *ex.Referrers() {
			cmp, ok := r2.(*ssa.BinOp)
			if !ok || cmp.Op != token.EQL || cmp.Referrers() == nil {
				continue
			}
			c, ok := cmp.Y.(*ssa.Const)
			if !ok || c.Value == nil || c.Int64() != int64(i) {
				continue
			}
			for _, r3 := range *cmp.Referrers() {
				if iff, ok := r3.(*ssa.If); ok {
					return progPoint{int32(iff.Block().Succs[0].Index), -1}, true
				}
			}
		}
	}
	return progPoint{}, false
}

// mark records a synchronization point on the channel or WaitGroup obj:
// a wait (receive, Wait) or a signal (send, close, Done).
func (fa *funcAnalysis) mark(pp progPoint, wait bool, obj ssa.Value) {
	if !fa.emit {
		return
	}
	c := int32(-1)
	if obj != nil {
		p := fa.ps.pta
		c = p.find(p.obj(obj))
	}
	if wait {
		fa.res.waits[pp] = append(fa.res.waits[pp], c)
	} else {
		fa.res.signals[pp] = append(fa.res.signals[pp], c)
		fa.signal = true
	}
}

func (fa *funcAnalysis) returned(r *ssa.Return) {
	// The first result only (v, ok := m.Get(k) names v); a nil returned
	// on some path adds nothing, as in a phi.
	res := fa.fn.Signature.Results()
	if res.Len() == 0 || !addressLike(res.At(0).Type()) {
		fa.result = ReturnVal{Kind: ResultTop}
		return
	}
	v := r.Results[0]
	if c, ok := v.(*ssa.Const); ok && c.IsNil() {
		return
	}
	l := fa.sym.eval(v)
	var rr ReturnVal
	switch {
	case l == nil:
		rr = ReturnVal{Kind: ResultTop}
	case l.Root.Kind == RootAlloc && len(l.Path) == 0 && fa.res.allocPP[l.Root.Name] != (progPoint{}) || l.Root.Kind == RootAlloc && len(l.Path) == 0 && isFreshValue(v):
		rr = ReturnVal{Kind: ResultFresh, L: *l}
	case l.Root.Kind == RootParam || l.Root.Kind == RootGlobal || l.Root.Kind == RootFreeVar:
		rr = ReturnVal{Kind: ResultLval, L: *l}
	default:
		rr = ReturnVal{Kind: ResultTop}
	}
	fa.result = fa.result.Join(rr)
}

func isFreshValue(v ssa.Value) bool {
	switch v.(type) {
	case *ssa.Alloc, *ssa.MakeMap, *ssa.MakeSlice, *ssa.MakeChan, *ssa.Call:
		return true
	}
	return false
}

// callResult evaluates the result of a call from its callees' summaries.
func (fa *funcAnalysis) callResult(call *ssa.Call) *Lval {
	c := call.Common()
	if _, ok := c.Value.(*ssa.Builtin); ok {
		if len(c.Args) > 0 && (c.Value.Name() == "append") {
			return fa.sym.eval(c.Args[0])
		}
		return nil
	}
	targets := fa.ps.targets(call)
	if len(targets) != 1 {
		return nil
	}
	s := fa.ps.summaryOf(targets[0])
	if s == nil {
		return nil
	}
	switch s.Return.Kind {
	case ResultLval:
		l := s.Return.L.Rebind(fa.binding(call, c, targets[0], s))
		return &l
	case ResultFresh:
		site := fa.ps.site(call.Pos())
		fa.res.allocPP[site] = fa.ppOf(call)
		fa.res.allocVal[site] = call
		return &Lval{Root: Root{Kind: RootAlloc, Name: site, Mem: s.Return.L.Root.Mem}}
	}
	return nil
}

func (fa *funcAnalysis) ppOf(instr ssa.Instruction) progPoint {
	b := instr.Block()
	for i, x := range b.Instrs {
		if x == instr {
			return progPoint{int32(b.Index), int32(i)}
		}
	}
	return progPoint{int32(b.Index), 0}
}

// binding evaluates the actuals of a call to callee in the caller.
func (fa *funcAnalysis) binding(site ssa.CallInstruction, c *ssa.CallCommon, callee *ssa.Function, s *Summary) *Binding {
	b := &Binding{}
	args := c.Args
	if c.IsInvoke() {
		b.Params = append(b.Params, fa.sym.eval(c.Value))
	}
	for _, a := range args {
		b.Params = append(b.Params, fa.sym.eval(a))
	}
	if mc, ok := c.Value.(*ssa.MakeClosure); ok && !c.IsInvoke() {
		fa.bindClosure(b, mc)
	}
	if s != nil && s.Return.Kind == ResultFresh {
		b.FreshFrom = s.Return.L.Root.Name
		b.FreshTo = fa.ps.site(site.Pos())
	}
	return b
}

// bindClosure binds a closure's free variables to the captured values,
// and, for captured variables written once before, their contents.
func (fa *funcAnalysis) bindClosure(b *Binding, mc *ssa.MakeClosure) {
	for _, v := range mc.Bindings {
		b.FreeVars = append(b.FreeVars, fa.sym.eval(v))
		var val *Lval
		if a, ok := v.(*ssa.Alloc); ok {
			if st := singleStore(a); st != nil && dominates(st, mc) {
				val = named(fa.sym.eval(st.Val), a.Comment)
			}
		}
		b.FreeVarVals = append(b.FreeVarVals, val)
	}
}

// load records a read or write of *addr.
func (fa *funcAnalysis) load(addr ssa.Value, write bool, pos token.Pos, L RelLockset, pp progPoint) {
	if !fa.emit {
		return
	}
	l := fa.sym.eval(addr)
	if l == nil {
		return
	}
	acc, ok := fa.visible(addr, l)
	if !ok {
		return
	}
	fa.add(Access{Obj: *l, L: L, Write: write, Site: fa.ps.site(pos), Fn: fa.fn.String(), anchor: pos, pp: pp}, acc)
}

func (fa *funcAnalysis) mapAccess(m ssa.Value, write bool, pos token.Pos, L RelLockset, pp progPoint) {
	if !fa.emit {
		return
	}
	l := fa.sym.eval(m)
	if l == nil {
		return
	}
	acc, ok := fa.visible(m, l)
	if !ok {
		return
	}
	el := l.With(Sel{Kind: SelElem, Mem: fa.ps.mapMem(m.Type())})
	fa.add(Access{Obj: el, L: L, Write: write, Site: fa.ps.site(pos), Fn: fa.fn.String(), anchor: pos, pp: pp}, acc)
}

func (fa *funcAnalysis) elems(s ssa.Value, write bool, pos token.Pos, L RelLockset, pp progPoint) {
	if !fa.emit {
		return
	}
	l := fa.sym.eval(s)
	if l == nil {
		return
	}
	acc, ok := fa.visible(s, l)
	mem := fa.ps.elemMemOfSlice(s.Type())
	if !ok || mem == "" {
		return
	}
	el := l.With(Sel{Kind: SelElem, Mem: mem})
	fa.add(Access{Obj: el, L: L, Write: write, Site: fa.ps.site(pos), Fn: fa.fn.String(), anchor: pos, pp: pp}, acc)
}

// visible reports whether an access through v is accessible to callers
// (acc) and whether it is to be recorded at all (ok: accessible, or shared
// with a goroutine this function starts).
func (fa *funcAnalysis) visible(v ssa.Value, l *Lval) (acc, ok bool) {
	if fa.accessibleValue(v, l) {
		return true, true
	}
	p := fa.ps.pta
	return false, p.sharedReach[p.find(p.obj(v))]
}

// add records an access in the function's list and, if it is accessible
// to callers, in its summary.
func (fa *funcAnalysis) add(a Access, toSummary bool) {
	if a.L.Bottom {
		return
	}
	if a.Obj.Root.Kind == RootAlloc {
		if v, ok := fa.res.allocVal[a.Obj.Root.Name]; ok {
			if fa.unpublished(v, a.pp) {
				a.Unpub = true
			}
		}
	}
	if fa.keep {
		fa.res.accesses = append(fa.res.accesses, a)
	}
	if toSummary {
		fa.access.add(a)
	}
}

// accessibleValue is isAccessible of section 3.3 for an access through an
// SSA value: formals, free variables and globals are; an object allocated
// here or of unknown origin is if the points-to graph reaches it from
// them, from a result, or from what the function shares with goroutines.
func (fa *funcAnalysis) accessibleValue(v ssa.Value, l *Lval) bool {
	switch l.Root.Kind {
	case RootParam, RootFreeVar, RootGlobal:
		return true
	}
	return fa.accessibleClass(fa.ps.pta.obj(v))
}

func (fa *funcAnalysis) accessibleClass(c int32) bool {
	p := fa.ps.pta
	c = p.find(c)
	if p.globalReach[c] {
		return true
	}
	if fa.acc == nil {
		fa.acc = map[int32]bool{}
		for _, x := range fa.fn.Params {
			p.chain(p.obj(x), fa.acc)
		}
		for _, x := range fa.fn.FreeVars {
			p.chain(p.obj(x), fa.acc)
		}
		p.chain(p.deref(p.ret(fa.fn)), fa.acc)
	}
	return fa.acc[c]
}

// accessibleLval is isAccessible for an lvalue rebound from a callee, and
// whether it is shared with a goroutine.
func (fa *funcAnalysis) accessibleLval(l Lval) (acc, shared bool) {
	if l.Root.Kind == RootAlloc {
		if v, ok := fa.res.allocVal[l.Root.Name]; ok {
			p := fa.ps.pta
			c := p.obj(v)
			if fa.accessibleClass(c) {
				return true, true
			}
			return false, p.sharedReach[p.find(c)]
		}
	}
	// Formals, globals, unknown values, and objects allocated in a callee
	// and reachable from it.
	return true, true
}

// call is the flow function of Figure 4 and the call case of Figure 6: for
// each possible callee, rebind its summaries to the actuals, apply
// lockUpdate, and copy its accessible guarded accesses.
func (fa *funcAnalysis) call(site ssa.CallInstruction, c *ssa.CallCommon, L RelLockset, pp progPoint, anchor token.Pos) RelLockset {
	ps := fa.ps
	if b, ok := c.Value.(*ssa.Builtin); ok {
		fa.builtin(b, c, L, pp, site.Pos())
		return L
	}
	if fa.emit {
		ps.stats.CallSites++
	}
	if c.IsInvoke() {
		if op := lockerModel(c.Method); op != opNone {
			return fa.model(op, site, c, L, pp)
		}
	}
	targets := ps.targets(site)
	if fa.emit {
		if c.StaticCallee() == nil {
			ps.stats.DynamicCalls++
			if len(targets) == 0 {
				ps.stats.Unresolved++
			}
		}
	}
	if len(targets) == 0 {
		return fa.unresolved(c, L)
	}
	out := BottomLockset()
	for _, t := range targets {
		if op := syncModel(t); op != opNone {
			out = out.Join(fa.model(op, site, c, L, pp))
			continue
		}
		if httpRegistration(t) {
			if fa.emit {
				fa.httpHandler(site, c, pp)
			}
			out = out.Join(L)
			continue
		}
		if parallelSubtest(t, c) {
			if fa.emit {
				fa.spawn(site, c.Args[len(c.Args)-1], nil, pp, entrySubtest, false)
			}
			out = out.Join(L)
			continue
		}
		if timerCallback(t) {
			if fa.emit && len(c.Args) > 0 {
				fa.spawn(site, c.Args[len(c.Args)-1], nil, pp, entryGo, false)
			}
			out = out.Join(L)
			continue
		}
		if noAccessPackage(t) {
			out = out.Join(L)
			continue
		}
		s := ps.summaryOf(t)
		if s == nil {
			if fa.emit {
				ps.stats.NoSummary++
			}
			out = out.Join(L)
			continue
		}
		b := fa.binding(site, c, t, s)
		out = out.Join(LockUpdate(L, s.Lock.Rebind(b)))
		if !fa.emit {
			continue
		}
		for _, a := range s.Acquires {
			if r := a.Lock.L.Rebind(b); r.Exact() {
				via := append([]string{fa.ps.site(site.Pos()) + " " + t.Name()}, a.Via...)
				fa.acquire(MakeLock(r, a.Lock.Read), L, a.Site, via, site.Pos())
			}
		}
		if fa.keep && ps.spawners[t] {
			if _, isGo := site.(*ssa.Go); !isGo {
				fa.res.spawnCalls = append(fa.res.spawnCalls, spawnCall{pp: pp, pos: site.Pos(), callee: t, bind: b})
			}
		}
		memo := map[lsID]RelLockset{}
		for _, a := range s.Accesses.Items {
			o := a.Obj.Rebind(b)
			acc, vis := fa.accessibleLval(o)
			if !vis {
				continue
			}
			id := a.L.id()
			la, ok := memo[id]
			if !ok {
				la = LockUpdate(L, a.L.Rebind(b))
				memo[id] = la
			}
			na := Access{Obj: o, L: la, Write: a.Write, Site: a.Site, Fn: a.Fn, Via: a.Via, anchor: anchor, pp: pp}
			if !ps.std && inGoroot(a.Site) {
				na.Site, na.Fn, na.Via = fa.ps.site(site.Pos()), fa.fn.String(), stdFrames(a, t)
			}
			// Still unpublished if the callee had not published it and
			// the object is the callee's own (or the caller's, unpublished
			// at this call).
			na.Unpub = a.Unpub && (a.Obj.Root.Kind == RootAlloc)
			fa.add(na, acc)
		}
	}
	return out
}

// unresolved is the effect of a call with no known callee: it may release
// any held lock that the points-to graph reaches from its operands (a
// callee can unlock only what it can reach; package-level locks are
// assumed untouched, an optimistic choice like RELAY's for function
// pointers). It adds no accesses: the count of such calls says how much is
// unseen.
func (fa *funcAnalysis) unresolved(c *ssa.CallCommon, L RelLockset) RelLockset {
	if L.Bottom || L.Top || len(L.Plus) == 0 {
		return L
	}
	p := fa.ps.pta
	reach := map[int32]bool{}
	ops := append([]ssa.Value{c.Value}, c.Args...)
	for _, a := range ops {
		if mayPoint(a.Type()) {
			p.chain(p.obj(a), reach)
		}
	}
	var rel []Lock
	for _, l := range L.Plus {
		if cl := p.classOf(l.L, fa.rootClass); cl >= 0 && reach[p.find(cl)] {
			rel = append(rel, l)
		}
	}
	if len(rel) == 0 {
		return L
	}
	return L.Join(LockUpdate(L, RelLockset{Minus: NewLockSet(rel...)}))
}

// rootClass maps a root of this function's lvalues to its object's
// points-to class.
func (fa *funcAnalysis) rootClass(r Root) (int32, bool) {
	p := fa.ps.pta
	switch r.Kind {
	case RootParam:
		if r.Index < len(fa.fn.Params) {
			return p.obj(fa.fn.Params[r.Index]), true
		}
	case RootFreeVar:
		if r.Index < len(fa.fn.FreeVars) {
			return p.obj(fa.fn.FreeVars[r.Index]), true
		}
	case RootGlobal:
		if g := fa.ps.globalByName(r.Name); g != nil {
			return p.obj(g), true
		}
	case RootAlloc:
		if v, ok := fa.res.allocVal[r.Name]; ok {
			return p.obj(v), true
		}
	}
	return 0, false
}

// model applies the effect of a modeled sync operation.
func (fa *funcAnalysis) model(op modelOp, site ssa.CallInstruction, c *ssa.CallCommon, L RelLockset, pp progPoint) RelLockset {
	var recv ssa.Value
	if c.IsInvoke() {
		recv = c.Value
	} else if len(c.Args) > 0 {
		recv = c.Args[0]
	}
	lock := func(read bool) (Lock, bool) {
		if recv == nil {
			return Lock{}, false
		}
		l := fa.sym.eval(recv)
		if l == nil {
			return Lock{}, false
		}
		return MakeLock(*l, read), true
	}
	switch op {
	case opLock, opRLock:
		if k, ok := lock(op == opRLock); ok && k.L.Exact() {
			fa.acquire(k, L, fa.ps.site(site.Pos()), nil, site.Pos())
			return LockUpdate(L, RelLockset{Plus: NewLockSet(k)})
		}
	case opUnlock, opRUnlock:
		if k, ok := lock(op == opRUnlock); ok {
			return LockUpdate(L, RelLockset{Minus: NewLockSet(k)})
		}
	case opWait:
		fa.mark(pp, true, recv)
	case opDone:
		fa.mark(pp, false, recv)
	case opWGGo:
		if fa.emit && len(c.Args) == 2 {
			fa.spawn(site, c.Args[1], c.Args[0], pp, entryGo, true)
		}
	}
	return L
}

func (fa *funcAnalysis) builtin(b *ssa.Builtin, c *ssa.CallCommon, L RelLockset, pp progPoint, pos token.Pos) {
	switch b.Name() {
	case "append":
		if len(c.Args) == 2 {
			fa.elems(c.Args[0], true, pos, L, pp)
			fa.elems(c.Args[1], false, pos, L, pp)
		}
	case "copy":
		if len(c.Args) == 2 {
			fa.elems(c.Args[0], true, pos, L, pp)
			if _, ok := c.Args[1].Type().Underlying().(*types.Slice); ok {
				fa.elems(c.Args[1], false, pos, L, pp)
			}
		}
	case "delete":
		if len(c.Args) >= 1 {
			fa.mapAccess(c.Args[0], true, pos, L, pp)
		}
	case "clear":
		if len(c.Args) == 1 {
			if _, ok := c.Args[0].Type().Underlying().(*types.Map); ok {
				fa.mapAccess(c.Args[0], true, pos, L, pp)
			} else {
				fa.elems(c.Args[0], true, pos, L, pp)
			}
		}
	case "close":
		if len(c.Args) == 1 {
			fa.mark(pp, false, c.Args[0])
		}
	}
}

// runDefers applies the deferred calls at a return, last deferred first.
// A defer whose block dominates the return surely ran; any other may have,
// so its effect is joined with not running it.
func (fa *funcAnalysis) runDefers(b *ssa.BasicBlock, L RelLockset, pp progPoint) RelLockset {
	for i := len(fa.defers) - 1; i >= 0; i-- {
		d := fa.defers[i]
		after := fa.call(d, d.Common(), L, pp, d.Pos())
		if d.Block().Dominates(b) && d.DeferStack == nil && !fa.inLoop(d.Block()) {
			L = after
		} else {
			L = L.Join(after)
		}
	}
	return L
}

func (fa *funcAnalysis) inLoop(b *ssa.BasicBlock) bool {
	return fa.cfg().reaches(b.Index, b.Index)
}

func (fa *funcAnalysis) cfg() *cfgInfo {
	if fa.res.cfg == nil {
		fa.res.cfg = newCFG(fa.fn)
	}
	return fa.res.cfg
}

func (fa *funcAnalysis) goStmt(g *ssa.Go, pp progPoint) {
	c := g.Common()
	targets := fa.ps.targets(g)
	gs := &goSite{pp: pp, pos: g.Pos(), kind: entryGo}
	for _, t := range targets {
		gs.targets = append(gs.targets, t)
		gs.binds = append(gs.binds, fa.binding(g, c, t, fa.ps.summaryOf(t)))
	}
	fa.ps.stats.GoSites++
	if len(targets) == 0 {
		fa.ps.stats.UnresolvedGo++
	}
	fa.res.goSites = append(fa.res.goSites, gs)
}

// spawn records a thread entry whose function is the value fv (a function,
// closure or method value), called with the given arguments.
func (fa *funcAnalysis) spawn(site ssa.CallInstruction, fv ssa.Value, wg ssa.Value, pp progPoint, kind entryKind, viaWG bool) {
	gs := &goSite{pp: pp, pos: site.Pos(), kind: kind, viaWG: viaWG, wgClass: -1}
	if wg != nil {
		p := fa.ps.pta
		gs.wgClass = p.find(p.obj(wg))
	}
	for fv != nil {
		switch v := fv.(type) {
		case *ssa.ChangeType:
			fv = v.X
			continue
		case *ssa.MakeInterface:
			fv = v.X
			continue
		}
		break
	}
	switch v := fv.(type) {
	case *ssa.Function:
		gs.targets = append(gs.targets, v)
		gs.binds = append(gs.binds, &Binding{})
	case *ssa.MakeClosure:
		if f, ok := v.Fn.(*ssa.Function); ok {
			b := &Binding{}
			fa.bindClosure(b, v)
			gs.targets = append(gs.targets, f)
			gs.binds = append(gs.binds, b)
		}
	}
	if kind == entryHTTP {
		fa.ps.stats.HTTPHandlers++
	} else {
		fa.ps.stats.GoSites++
	}
	if len(gs.targets) == 0 {
		fa.ps.stats.UnresolvedGo++
		return
	}
	fa.res.goSites = append(fa.res.goSites, gs)
}

// httpHandler records a handler registered with net/http: each handler
// runs on its own goroutine per request, so it races with itself.
func (fa *funcAnalysis) httpHandler(site ssa.CallInstruction, c *ssa.CallCommon, pp progPoint) {
	if len(c.Args) == 0 {
		return
	}
	h := c.Args[len(c.Args)-1]
	// A Handler interface: its dynamic type's ServeHTTP.
	if mi, ok := h.(*ssa.MakeInterface); ok {
		x := mi.X
		if _, isFunc := x.Type().Underlying().(*types.Signature); !isFunc {
			ms := fa.fn.Prog.MethodSets.MethodSet(x.Type())
			for i := 0; i < ms.Len(); i++ {
				sel := ms.At(i)
				if sel.Obj().Name() == "ServeHTTP" {
					if m := fa.fn.Prog.MethodValue(sel); m != nil {
						gs := &goSite{pp: pp, pos: site.Pos(), kind: entryHTTP,
							targets: []*ssa.Function{m},
							binds:   []*Binding{{Params: []*Lval{fa.sym.eval(x)}}}}
						fa.ps.addFunc(m)
						fa.ps.stats.HTTPHandlers++
						fa.res.goSites = append(fa.res.goSites, gs)
					}
				}
			}
			return
		}
	}
	fa.spawn(site, h, nil, pp, entryHTTP, false)
}
