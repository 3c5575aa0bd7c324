// Package modref computes what functions read and write of the objects
// their parameters point to, and whether they synchronize on them: the
// interceptor summaries of standard-library functions that racekit does not
// trace (instrument's stdcalls.go applies them at the user's call).
//
// The Go race detector instruments the standard library, so a race inside
// its code (two goroutines calling Read on one strings.Reader, a
// url.Values.Add beside a Get) is reported. racekit traces only the user's
// packages; at a call into the standard library it records the accesses the
// callee makes to its operands, as ThreadSanitizer's libc interceptors do.
// A hand-written table covers the common types; this analysis derives the
// same summaries for every other function from its SSA.
//
// A parameter's object is what one event at the call can stand for: the
// struct a pointer points to (its fields reached by FieldAddr, an array's
// elements by IndexAddr), a slice's elements, a map. Loading a pointer out
// of that object leads to another object, which the summary does not
// describe (level 1 only), except for synchronization: a parameter whose
// memory, at any depth, is locked, used atomically, sent on, received from
// or handed to code the analysis cannot see (assembly, the runtime, a
// function value, a goroutine) gets Sync, and the caller records nothing for
// it, since those accesses may be ordered by what the trace cannot see;
// but a Mutex or RWMutex field of the parameter's own struct is kept in
// Locks instead, so that the caller can record the accesses as that
// mutex's critical section. A
// function that locks a package-level mutex, directly or through a call,
// gets GlobalLock: such a lock may guard anything, so nothing it does is
// recorded.
//
// The analysis is a least fixed point over the call graph of static calls:
// a callee's effects on its parameter reach the caller's parameter when the
// caller passes (a pointer into) the same object. Calls through interfaces
// reach code the analysis does not follow (often the user's own, traced);
// what they do is not part of the summary.
package modref

import (
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Effect is what a function may do to one parameter's object.
type Effect uint8

const (
	Read  Effect = 1 << iota // loads from the object (a map lookup or range)
	Write                    // stores to it (a map update, copy, clear, delete)
	Sync                     // synchronizes on memory reachable from it, or hands it to unseen code
	// Lazy (Fields only): a Write on some paths, not all: a lazy
	// initializer's "if r.m == nil { r.m = ... }", which writes at the
	// first call only; the caller records a write while the field is
	// still zero, a read after (rt.Fields), since a write at each call
	// would make two later calls a false race.
	Lazy
)

// Summary is one function's effects, per SSA parameter (the receiver
// first).
type Summary struct {
	Params []Effect
	// Fields: per parameter that points to a struct, the Read and Write of
	// each field it reaches through the pointer, by field path (field
	// indices joined by ".", a nested struct's field "3.1"; "" the struct
	// loaded or stored whole); an array field's elements count as the
	// field. Whole: the Read and Write of
	// the parameter's object not through a field path (the object loaded or
	// stored whole, a slice's elements, a map). Params holds both.
	Fields []Paths
	Whole  []Effect
	// Locks: per parameter, the Mutex and RWMutex fields of its own
	// struct (level 1) the function locks, Read for RLock, Write for Lock.
	// Such a lock is not Sync: a caller can record the function's accesses
	// to the object as that lock's critical section (crypto/tls's
	// Config.Clone reads every field under c.mutex.RLock).
	Locks []Paths
	// Deref: per parameter, the Read and Write of the objects its
	// struct's pointer and map fields lead to (level 2), by the field's
	// path: the object as a whole, as Params is (csv.Writer.Write writes
	// the bufio.Writer in its field w).
	Deref      []Paths
	GlobalLock bool
}

// Paths maps a field path to an effect.
type Paths map[string]Effect

// add ORs e into p[path], making p if needed, and reports whether p changed.
func (p *Paths) add(path string, e Effect) bool {
	if e == 0 || (*p)[path]|e == (*p)[path] {
		return false
	}
	if *p == nil {
		*p = Paths{}
	}
	(*p)[path] |= e
	return true
}

// Results maps each function to its summary.
type Results map[*ssa.Function]*Summary

// maxParams bounds the parameters tracked (bit masks of a uint64).
const maxParams = 64

type mask uint64

// call is one call of a function body: its callee and, per argument,
// the parameters whose object the argument is (same) or leads to (reach),
// and the parameter and field path it is a pointer to, if it is one (path).
type call struct {
	callee      *ssa.Function
	same, reach []mask
	path        []fieldRef
	must        bool // every return of the caller passes the call
}

// fieldRef is a value that is a parameter (path "") or a pointer to a
// field of the struct a parameter points to; with deref, the value a
// pointer or map field of it holds, or an address inside what that points
// to (derefOf).
type fieldRef struct {
	param int
	path  string
	ok    bool
	deref bool
}

// local is what a function's own instructions do, before calls.
type local struct {
	fn         *ssa.Function
	eff        []Effect
	fields     []Paths
	whole      []Effect
	locks      []Paths
	deref      []Paths
	globalLock bool
	calls      []call
}

// Analyze computes the summaries of fns (functions without bodies, and
// calls to functions not in fns, count as unseen code).
func Analyze(fns []*ssa.Function) Results {
	res := Results{}
	var locals []*local
	for _, fn := range fns {
		if len(fn.Blocks) == 0 {
			continue
		}
		l := analyzeLocal(fn)
		locals = append(locals, l)
		s := &Summary{Params: append([]Effect(nil), l.eff...), GlobalLock: l.globalLock,
			Whole: append([]Effect(nil), l.whole...), Fields: make([]Paths, len(l.eff)), Locks: make([]Paths, len(l.eff)),
			Deref: make([]Paths, len(l.eff))}
		for i := range l.eff {
			s.Fields[i], s.Locks[i], s.Deref[i] = clonePaths(l.fields[i]), clonePaths(l.locks[i]), clonePaths(l.deref[i])
		}
		res[fn] = s
	}
	for changed := true; changed; {
		changed = false
		for _, l := range locals {
			s := res[l.fn]
			for _, c := range l.calls {
				cs := res[c.callee]
				if cs == nil {
					if !syncName(c.callee.Name()) {
						continue // assembly or the runtime's plain helpers
					}
					// A runtime function that blocks, wakes or is atomic:
					// every parameter it gets may be synchronized on.
					for j := range c.same {
						changed = s.add(c.same[j]|c.reach[j], Sync) || changed
					}
					continue
				}
				if cs.GlobalLock && !s.GlobalLock {
					s.GlobalLock, changed = true, true
				}
				for j := range c.same {
					if j >= len(cs.Params) {
						break
					}
					e := cs.Params[j]
					changed = s.add(c.same[j], e) || changed
					changed = s.add(c.reach[j]&^c.same[j], e&Sync) || changed
					changed = s.addCallee(c, j, cs) || changed
				}
			}
		}
	}
	return res
}

// addCallee carries the callee's field effects and own locks on its
// parameter j to the caller's parameter that argument j points into, at
// that argument's path; an argument that is no such pointer makes them
// Whole effects (and its locks Sync) of the parameters whose object it is.
func (s *Summary) addCallee(c call, j int, cs *Summary) bool {
	changed := false
	ref := c.path[j]
	if ref.deref {
		// The callee's object is the one a field of ours points to: all it
		// reads and writes there is Deref (its own level 2 is ours 3), as
		// a call of the callee on that object records it (R, W).
		changed = s.Deref[ref.param].add(ref.path, cs.Params[j]&(Read|Write))
		if len(cs.Locks[j]) > 0 {
			changed = s.add(c.same[j]|c.reach[j], Sync) || changed
		}
		return changed
	}
	whole := cs.Whole[j]
	for fp, e := range cs.Fields[j] {
		if !c.must && e&Write != 0 {
			e = e&^Write | Read | Lazy // a Write the caller may skip (access)
		}
		if ref.ok {
			changed = s.Fields[ref.param].add(joinPath(ref.path, fp), e) || changed
		} else {
			whole |= e
		}
	}
	switch {
	case !ref.ok:
		changed = s.addWhole(c.same[j], whole) || changed
	case ref.path == "":
		changed = s.addWhole(1<<ref.param, whole) || changed
	default:
		changed = s.Fields[ref.param].add(ref.path, whole) || changed
	}
	for lp, e := range cs.Locks[j] {
		if ref.ok {
			changed = s.Locks[ref.param].add(joinPath(ref.path, lp), e) || changed
		} else {
			changed = s.add(c.same[j]|c.reach[j], Sync) || changed
		}
	}
	return changed
}

// addWhole ORs the Read and Write of e into Whole of the parameters of m.
func (s *Summary) addWhole(m mask, e Effect) bool { return orInto(s.Whole, m, e&(Read|Write)) }

func joinPath(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

func clonePaths(p Paths) Paths {
	if p == nil {
		return nil
	}
	out := make(Paths, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

// add ORs e into the parameters of m and reports whether anything changed.
func (s *Summary) add(m mask, e Effect) bool { return orInto(s.Params, m, e) }

// orInto ORs e into the entries of effs that m selects and reports whether
// any changed.
func orInto(effs []Effect, m mask, e Effect) bool {
	if e == 0 || m == 0 {
		return false
	}
	changed := false
	for i := range effs {
		if m&(1<<i) != 0 && effs[i]|e != effs[i] {
			effs[i] |= e
			changed = true
		}
	}
	return changed
}

// flow is what a value is, relative to the parameters.
type flow struct{ same, reach mask }

func analyzeLocal(fn *ssa.Function) *local {
	n := len(fn.Params)
	if n > maxParams {
		n = maxParams
	}
	l := &local{fn: fn, eff: make([]Effect, len(fn.Params)), whole: make([]Effect, len(fn.Params)),
		fields: make([]Paths, len(fn.Params)), locks: make([]Paths, len(fn.Params)), deref: make([]Paths, len(fn.Params))}
	fl := map[ssa.Value]flow{}
	for i, p := range fn.Params[:n] {
		fl[p] = flow{1 << i, 1 << i}
	}
	get := func(v ssa.Value) flow { return fl[v] }
	// Values first, to a fixed point (phis close cycles).
	for changed := true; changed; {
		changed = false
		for _, b := range fn.Blocks {
			for _, ins := range b.Instrs {
				v, ok := ins.(ssa.Value)
				if !ok {
					continue
				}
				f := valueFlow(v, get)
				if old := fl[v]; f.same|old.same != old.same || f.reach|old.reach != old.reach {
					fl[v] = flow{old.same | f.same, old.reach | f.reach}
					changed = true
				}
			}
		}
	}
	// eff records e on the objects of the parameters of m: a Read or
	// Write not through a field path is Whole.
	eff := func(m mask, e Effect) {
		for i := range l.eff {
			if m&(1<<i) != 0 {
				l.eff[i] |= e
				l.whole[i] |= e & (Read | Write)
			}
		}
	}
	must := mustBlocks(fn)
	// stores: per parameter and field path, the blocks that store to it;
	// a field is written (Write) when every path to a return passes one,
	// else Lazy (storesCover).
	stores := map[fieldRef]map[*ssa.BasicBlock]bool{}
	// access records a load or store through the pointer addr.
	access := func(addr ssa.Value, e Effect, b *ssa.BasicBlock) {
		f := get(addr)
		// The path "" is the struct itself, loaded or stored whole (a
		// shallow copy: every field).
		if ref := fieldOf(addr, n); ref.ok && f.same == 1<<ref.param {
			l.eff[ref.param] |= e
			if e == Write {
				if stores[ref] == nil {
					stores[ref] = map[*ssa.BasicBlock]bool{}
				}
				stores[ref][b] = true
				return
			}
			l.fields[ref.param].add(ref.path, e)
			return
		}
		if ref := derefOf(addr, n); ref.ok {
			l.deref[ref.param].add(ref.path, e)
		}
		eff(f.same, e)
	}
	// mapAccess is access for a map operation on m.
	mapAccess := func(m ssa.Value, e Effect) {
		if ref := derefOf(m, n); ref.ok {
			l.deref[ref.param].add(ref.path, e)
		}
		eff(get(m).same, e)
	}
	for _, b := range fn.Blocks {
		for _, ins := range b.Instrs {
			switch x := ins.(type) {
			case *ssa.Store:
				access(x.Addr, Write, b)
			case *ssa.UnOp:
				switch x.Op.String() {
				case "*":
					access(x.X, Read, b)
				case "<-":
					eff(get(x.X).reach, Sync)
				}
			case *ssa.Send:
				eff(get(x.Chan).reach|get(x.X).reach, Sync)
			case *ssa.Select:
				for _, st := range x.States {
					eff(get(st.Chan).reach, Sync)
					if st.Send != nil {
						eff(get(st.Send).reach, Sync)
					}
				}
			case *ssa.Convert:
				if isString(x.Type()) && !isString(x.X.Type()) {
					eff(get(x.X).same, Read) // string(b) copies b's elements
				}
			case *ssa.MapUpdate:
				mapAccess(x.Map, Write)
			case *ssa.Lookup:
				if _, isMap := x.X.Type().Underlying().(*types.Map); isMap {
					mapAccess(x.X, Read)
				}
			case *ssa.Range:
				if _, isMap := x.X.Type().Underlying().(*types.Map); isMap {
					mapAccess(x.X, Read)
				}
			case *ssa.Go:
				for _, a := range x.Call.Args {
					eff(get(a).reach, Sync)
				}
				if x.Call.IsInvoke() {
					eff(get(x.Call.Value).reach, Sync)
				}
			case ssa.CallInstruction: // Call, Defer
				l.callInstr(x.Common(), get, eff, must[b])
			}
		}
	}
	for ref, blocks := range stores {
		e := Write
		if !storesCover(fn, blocks) {
			e = Read | Lazy
		}
		l.fields[ref.param].add(ref.path, e)
	}
	return l
}

// storesCover reports whether every path from fn's entry to a return
// passes one of the blocks (a field set in both branches of an if is
// written at each call; one set in a branch only, Lazy). A function
// without a reachable return stores nothing for sure.
func storesCover(fn *ssa.Function, blocks map[*ssa.BasicBlock]bool) bool {
	if len(fn.Blocks) == 0 {
		return false
	}
	seen := map[*ssa.BasicBlock]bool{}
	stack := []*ssa.BasicBlock{fn.Blocks[0]}
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[b] || blocks[b] {
			continue
		}
		seen[b] = true
		if _, ret := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ret {
			return false
		}
		stack = append(stack, b.Succs...)
	}
	for _, b := range fn.Blocks {
		if _, ret := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ret {
			return true
		}
	}
	return false
}

func (l *local) callInstr(c *ssa.CallCommon, get func(ssa.Value) flow, eff func(mask, Effect), must bool) {
	if b, ok := c.Value.(*ssa.Builtin); ok {
		switch b.Name() {
		case "copy":
			eff(get(c.Args[0]).same, Write)
			eff(get(c.Args[1]).same, Read)
		case "clear", "delete":
			eff(get(c.Args[0]).same, Write)
		}
		return
	}
	callee := c.StaticCallee()
	if callee == nil {
		// A function value or an interface method: the object handed to
		// it may be synchronized on there.
		for _, a := range c.Args {
			eff(get(a).same, Sync)
		}
		if c.IsInvoke() {
			eff(get(c.Value).same, Sync)
		}
		return
	}
	if callee.Origin() != nil {
		callee = callee.Origin()
	}
	if syncPkg(callee) {
		if mode := ownLockCall(callee); mode != 0 && len(c.Args) == 1 {
			if ref := fieldOf(c.Args[0], len(l.eff)); ref.ok && ref.path != "" && get(c.Args[0]).same == 1<<ref.param {
				l.locks[ref.param].add(ref.path, mode)
				return
			}
		}
		for _, a := range c.Args {
			eff(get(a).reach, Sync)
		}
		if globalLockCall(callee) && len(c.Args) > 0 && fromGlobal(c.Args[0]) {
			l.globalLock = true
		}
		return
	}
	cl := call{callee: callee, same: make([]mask, len(c.Args)), reach: make([]mask, len(c.Args)), path: make([]fieldRef, len(c.Args)), must: must}
	any := false
	for j, a := range c.Args {
		f := get(a)
		cl.same[j], cl.reach[j] = f.same, f.reach
		if ref := fieldOf(a, len(l.eff)); ref.ok && f.same == 1<<ref.param {
			cl.path[j] = ref
		} else if ref := derefOf(a, len(l.eff)); ref.ok && f.same == 0 {
			cl.path[j] = ref
		}
		any = any || f.reach != 0
	}
	// A callee without parameters of ours still matters for GlobalLock.
	if any || len(callee.Blocks) > 0 {
		l.calls = append(l.calls, cl)
	}
}

// mustBlocks returns the blocks that every return of fn passes: those
// that dominate each block ending in a return.
func mustBlocks(fn *ssa.Function) map[*ssa.BasicBlock]bool {
	var rets []*ssa.BasicBlock
	for _, b := range fn.Blocks {
		if len(b.Instrs) > 0 {
			if _, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
				rets = append(rets, b)
			}
		}
	}
	must := map[*ssa.BasicBlock]bool{}
	if len(rets) == 0 {
		return must
	}
	for _, b := range fn.Blocks {
		all := true
		for _, r := range rets {
			if !b.Dominates(r) {
				all = false
				break
			}
		}
		must[b] = all
	}
	return must
}

// fieldOf returns the parameter (of the first n) and field path v points
// to: the parameter itself, a chain of FieldAddrs from it (the struct it
// points to, and structs nested in it by value), or an element of an array
// field (which stands for the field).
func fieldOf(v ssa.Value, n int) fieldRef {
	var path []string
	for depth := 0; depth < 16; depth++ {
		switch x := v.(type) {
		case *ssa.Parameter:
			for i, p := range x.Parent().Params[:min(n, len(x.Parent().Params))] {
				if p == x {
					if _, isPtr := x.Type().Underlying().(*types.Pointer); !isPtr {
						return fieldRef{}
					}
					slices.Reverse(path)
					return fieldRef{param: i, path: strings.Join(path, "."), ok: true}
				}
			}
			return fieldRef{}
		case *ssa.FieldAddr:
			path = append(path, strconv.Itoa(x.Field))
			v = x.X
		case *ssa.IndexAddr:
			if _, isArr := x.X.Type().Underlying().(*types.Pointer); !isArr || len(path) > 0 {
				return fieldRef{} // a slice's element, or a field of an element
			}
			if _, isField := x.X.(*ssa.FieldAddr); !isField {
				return fieldRef{} // an element of an array the parameter points to
			}
			v = x.X
		case *ssa.ChangeType:
			v = x.X
		default:
			return fieldRef{}
		}
	}
	return fieldRef{}
}

// derefOf returns the parameter and field path of the pointer or map field
// whose value v is (a load of it), or an address inside what that value
// points to (field and element addresses from it): level 2.
func derefOf(v ssa.Value, n int) fieldRef {
	for depth := 0; depth < 16; depth++ {
		switch x := v.(type) {
		case *ssa.FieldAddr:
			v = x.X
		case *ssa.IndexAddr:
			if _, isPtr := x.X.Type().Underlying().(*types.Pointer); !isPtr {
				return fieldRef{} // a slice's element: not the object a field points to
			}
			v = x.X
		case *ssa.ChangeType:
			v = x.X
		case *ssa.UnOp:
			if x.Op != token.MUL {
				return fieldRef{}
			}
			switch x.Type().Underlying().(type) {
			case *types.Pointer, *types.Map:
			default:
				return fieldRef{}
			}
			ref := fieldOf(x.X, n)
			if !ref.ok || ref.path == "" {
				return fieldRef{}
			}
			ref.deref = true
			return ref
		default:
			return fieldRef{}
		}
	}
	return fieldRef{}
}

// ownLockCall returns the mode in which fn, a method of sync's Mutex or
// RWMutex, locks or unlocks: Read for RLock and RUnlock, Write for Lock
// and Unlock, 0 for anything else (TryLock may not lock).
func ownLockCall(fn *ssa.Function) Effect {
	recv := fn.Signature.Recv()
	if recv == nil || fn.Pkg == nil || fn.Pkg.Pkg.Path() != "sync" {
		return 0
	}
	p, ok := recv.Type().(*types.Pointer)
	if !ok {
		return 0
	}
	n, ok := p.Elem().(*types.Named)
	if !ok {
		return 0
	}
	switch n.Obj().Name() + "." + fn.Name() {
	case "Mutex.Lock", "Mutex.Unlock", "RWMutex.Lock", "RWMutex.Unlock":
		return Write
	case "RWMutex.RLock", "RWMutex.RUnlock":
		return Read
	}
	return 0
}

// deeper is the flow of a value read out of (or computed from) one of
// flow f: another object, reached from the same parameters. (A flow's
// reach always holds its same: both start at the parameter, and every
// rule carries them together.)
func deeper(f flow) flow { return flow{reach: f.reach} }

// valueFlow is the flow of an instruction's value from its operands'.
func valueFlow(v ssa.Value, get func(ssa.Value) flow) flow {
	switch x := v.(type) {
	case *ssa.FieldAddr:
		return get(x.X)
	case *ssa.IndexAddr:
		return get(x.X) // an element of the same array or slice
	case *ssa.Slice:
		if isString(x.X.Type()) {
			return flow{}
		}
		return get(x.X)
	case *ssa.ChangeType:
		return get(x.X)
	case *ssa.Convert:
		if isString(x.X.Type()) || isString(x.Type()) {
			return flow{} // a conversion to or from string copies
		}
		return get(x.X)
	case *ssa.MultiConvert:
		return flow{reach: get(x.X).reach}
	case *ssa.SliceToArrayPointer:
		return get(x.X)
	case *ssa.MakeInterface:
		return get(x.X)
	case *ssa.TypeAssert:
		return get(x.X)
	case *ssa.Phi:
		var f flow
		for _, e := range x.Edges {
			g := get(e)
			f.same |= g.same
			f.reach |= g.reach
		}
		return f
	case *ssa.UnOp:
		return deeper(get(x.X)) // a load, or a receive, or arithmetic
	case *ssa.Field:
		return deeper(get(x.X))
	case *ssa.Index:
		return deeper(get(x.X))
	case *ssa.Lookup:
		return deeper(get(x.X))
	case *ssa.Extract:
		return deeper(get(x.Tuple))
	case *ssa.Next:
		return deeper(get(x.Iter))
	case *ssa.Range:
		return deeper(get(x.X))
	case *ssa.Call:
		c := x.Common()
		var f flow
		for _, a := range c.Args {
			f.reach |= get(a).reach
		}
		if b, ok := c.Value.(*ssa.Builtin); ok && b.Name() == "append" && len(c.Args) > 0 {
			// append's result may be its argument's array.
			f.same = get(c.Args[0]).same
		}
		return f
	}
	return flow{}
}

func isString(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// syncPkg reports whether fn belongs to the packages that synchronize
// (sync, sync/atomic and the runtime's own), whose calls count as Sync on
// every argument.
func syncPkg(fn *ssa.Function) bool {
	if fn.Pkg == nil {
		return false
	}
	switch p := fn.Pkg.Pkg.Path(); p {
	case "sync", "sync/atomic", "runtime", "internal/sync", "internal/runtime/atomic", "unique", "weak":
		return true
	}
	return false
}

// syncName reports whether a function without a body (assembly, or the
// runtime's, linked by name) may synchronize, judged by its name: the
// semaphores, channels, timers, pollers and signals of the runtime, atomics.
// The rest (memmove, bytealg's searches, math's kernels, a map's access)
// are plain code the analysis cannot see into, whose loads and stores the
// summary then lacks.
func syncName(name string) bool {
	l := strings.ToLower(name)
	for _, w := range []string{"sema", "chan", "select", "timer", "sleep", "poll", "signal", "notify", "lock",
		"atomic", "park", "once", "cas", "xadd", "xchg", "store", "load", "swap", "and8", "or8", "procpin", "gosched", "goexit", "fence"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// globalLockCall reports whether fn takes a Mutex or RWMutex (a
// package-level one guards what it pleases; a Once, Pool or Map is a
// cache of its own).
func globalLockCall(fn *ssa.Function) bool {
	recv := fn.Signature.Recv()
	if recv == nil {
		return false
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok {
		return false
	}
	switch n.Obj().Name() + "." + fn.Name() {
	case "Mutex.Lock", "Mutex.TryLock", "RWMutex.Lock", "RWMutex.RLock", "RWMutex.TryLock", "RWMutex.TryRLock":
		return true
	}
	return false
}

// fromGlobal reports whether v is (a field of) a package-level variable.
func fromGlobal(v ssa.Value) bool {
	for i := 0; i < 16; i++ {
		switch x := v.(type) {
		case *ssa.Global:
			return true
		case *ssa.FieldAddr:
			v = x.X
		case *ssa.IndexAddr:
			v = x.X
		case *ssa.UnOp:
			if x.Op.String() != "*" {
				return false
			}
			v = x.X
		default:
			return false
		}
	}
	return false
}
