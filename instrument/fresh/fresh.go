// Package fresh finds the functions whose results are objects the call
// itself allocated: on every path that returns, result i is a new heap
// object (new(T), &T{...}, make), nil, a slice of such an object, or the
// same result of another such function.
//
// racekit needs it for memory that code it does not trace allocates. The
// detectors match accesses by address, and the garbage collector reuses the
// memory of dead objects, so traced code writing r.Pattern on the
// *http.Request that (*http.Request).WithContext has just made would look
// like a write to every dead request that once had that address (the Go race
// detector clears its shadow memory in malloc; racekit's instrumented
// allocation sites record an alloc event, but the standard library is not
// instrumented). At a call of a function whose result is fresh, the
// instrumenter records the allocation of the object the result points to,
// when the call returns.
//
// The analysis is a greatest fixed point over SSA: every pointer, slice or
// map result starts fresh and is dropped when a return gives it a value not
// fresh under the current assumptions. A recursive function whose base case
// allocates stays fresh; every value actually returned is traced back,
// through finitely many calls, to an allocation. A result fresh here may
// still have been handed to other code before the call returned (stored in a
// global, passed to a callback); accesses that such code makes before the
// return lose their history at the allocation event (docs/frontend.md).
package fresh

import (
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// Results maps a function to which of its results are fresh (nil or
// absent: none).
type Results map[*ssa.Function][]bool

// Fresh reports whether result i of fn is fresh.
func (r Results) Fresh(fn *ssa.Function, i int) bool {
	f := r[fn]
	return i < len(f) && f[i]
}

// Candidate reports whether a result of type t can be fresh: a pointer,
// slice or map (the objects an allocation event can name).
func Candidate(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Map:
		return true
	}
	return false
}

// Analyze computes the fresh results of fns (functions with bodies; calls
// to functions not in fns, or without bodies, return nothing fresh).
func Analyze(fns []*ssa.Function) Results {
	res := Results{}
	for _, fn := range fns {
		if len(fn.Blocks) == 0 {
			continue
		}
		rs := fn.Signature.Results()
		f := make([]bool, rs.Len())
		some := false
		for i := range f {
			f[i] = Candidate(rs.At(i).Type())
			some = some || f[i]
		}
		if some {
			res[fn] = f
		}
	}
	for changed := true; changed; {
		changed = false
		for fn, f := range res {
			for _, b := range fn.Blocks {
				ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return)
				if !ok {
					continue
				}
				for i, v := range ret.Results {
					if f[i] && !res.value(v, map[*ssa.Phi]bool{}) {
						f[i] = false
						changed = true
					}
				}
			}
		}
	}
	for fn, f := range res {
		keep := false
		for _, x := range f {
			keep = keep || x
		}
		if !keep {
			delete(res, fn)
		}
	}
	return res
}

// value reports whether v is fresh under the current assumptions. A phi
// already being looked at counts as fresh: its other edges decide.
func (r Results) value(v ssa.Value, phis map[*ssa.Phi]bool) bool {
	switch v := v.(type) {
	case *ssa.Alloc:
		return v.Heap
	case *ssa.MakeSlice, *ssa.MakeMap, *ssa.MakeChan:
		return true
	case *ssa.Const:
		return v.IsNil()
	case *ssa.Phi:
		if phis[v] {
			return true
		}
		phis[v] = true
		for _, e := range v.Edges {
			if !r.value(e, phis) {
				return false
			}
		}
		return true
	case *ssa.ChangeType:
		return r.value(v.X, phis)
	case *ssa.Convert:
		// []byte(s), []rune(s): a new array (bytes.NewBufferString's).
		_, toSlice := v.Type().Underlying().(*types.Slice)
		b, fromString := v.X.Type().Underlying().(*types.Basic)
		return toSlice && fromString && b.Info()&types.IsString != 0
	case *ssa.Slice:
		// s[i:j] of a fresh array or slice: part of the new object.
		return r.value(v.X, phis)
	case *ssa.Call:
		c := v.Common()
		if b, ok := c.Value.(*ssa.Builtin); ok {
			// append(s, ...) returns s's array or a new one.
			return b.Name() == "append" && len(c.Args) > 0 && r.value(c.Args[0], phis)
		}
		if callee := c.StaticCallee(); callee != nil && !c.IsInvoke() {
			if k := passedThrough(callee); k >= 0 && k < len(c.Args) {
				// new(List).Init(): Init returns its receiver.
				return r.value(c.Args[k], phis)
			}
			return r.Fresh(callee, 0)
		}
	case *ssa.Extract:
		if call, ok := v.Tuple.(*ssa.Call); ok {
			c := call.Common()
			if callee := c.StaticCallee(); callee != nil && !c.IsInvoke() {
				return r.Fresh(callee, v.Index)
			}
		}
	}
	return false
}

// Fields maps a function whose result 0 is fresh and points to a struct to
// the fields of that struct which, on every return, hold nil or an object
// the call allocated (http.NewRequest's URL and Header): the objects a
// caller reaches through a fresh result and that are as new as it is.
type Fields map[*ssa.Function][]string

// AnalyzeFields computes the fresh fields of the fresh results in res. A
// field counts when every store to it in the function stores a fresh value
// and the new object is used only to store and load its fields and to be
// returned (passed to a call, copied over or stored anywhere, a callee or
// another holder could give the field an older object); a result that is
// another function's fresh result has that function's fields.
func AnalyzeFields(res Results) Fields {
	out := Fields{}
	done := map[*ssa.Function]bool{}
	var of func(fn *ssa.Function) []string
	of = func(fn *ssa.Function) []string {
		if done[fn] {
			return out[fn]
		}
		done[fn] = true // a cycle contributes no fields
		if !res.Fresh(fn, 0) || !structPointer(fn.Signature.Results().At(0).Type()) {
			return nil
		}
		var common map[string]bool
		for _, b := range fn.Blocks {
			ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return)
			if !ok {
				continue
			}
			var fs []string
			switch v := ret.Results[0].(type) {
			case *ssa.Const:
				continue // nil: no fields to vouch for
			case *ssa.Alloc:
				fs = res.allocFields(v)
			case *ssa.Call:
				if callee := v.Common().StaticCallee(); callee != nil && !v.Common().IsInvoke() &&
					types.Identical(callee.Signature.Results().At(0).Type(), fn.Signature.Results().At(0).Type()) {
					fs = of(callee)
				}
			case *ssa.Extract: // return g(...) where g has several results
				if call, ok := v.Tuple.(*ssa.Call); ok && v.Index == 0 {
					if callee := call.Common().StaticCallee(); callee != nil && !call.Common().IsInvoke() &&
						types.Identical(callee.Signature.Results().At(0).Type(), fn.Signature.Results().At(0).Type()) {
						fs = of(callee)
					}
				}
			}
			set := map[string]bool{}
			for _, f := range fs {
				if common == nil || common[f] {
					set[f] = true
				}
			}
			common = set
			if len(common) == 0 {
				return nil
			}
		}
		var fs []string
		st := fn.Signature.Results().At(0).Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Struct)
		for i := 0; i < st.NumFields(); i++ {
			if common[st.Field(i).Name()] {
				fs = append(fs, st.Field(i).Name())
			}
		}
		if len(fs) > 0 {
			out[fn] = fs
		}
		return fs
	}
	for fn := range res {
		of(fn)
	}
	return out
}

// structPointer reports whether t is a pointer to a struct.
func structPointer(t types.Type) bool {
	p, ok := t.Underlying().(*types.Pointer)
	if !ok {
		return false
	}
	_, ok = p.Elem().Underlying().(*types.Struct)
	return ok
}

// allocFields returns the fields of the new object a whose every store is
// of a fresh value (see AnalyzeFields), if a is used only through them and
// by returns.
func (r Results) allocFields(a *ssa.Alloc) []string {
	if !a.Heap {
		return nil
	}
	st, ok := a.Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Struct)
	if !ok {
		return nil
	}
	stored := map[int]bool{}
	bad := map[int]bool{}
	for _, u := range *a.Referrers() {
		switch u := u.(type) {
		case *ssa.Return, *ssa.DebugRef:
		case *ssa.FieldAddr:
			for _, fu := range *u.Referrers() {
				switch fu := fu.(type) {
				case *ssa.Store:
					if fu.Addr != u || !Candidate(fu.Val.Type()) || !r.value(fu.Val, map[*ssa.Phi]bool{}) {
						bad[u.Field] = true
					} else {
						stored[u.Field] = true
					}
				case *ssa.UnOp, *ssa.DebugRef: // loads
				default:
					bad[u.Field] = true // its address taken further
				}
			}
		default:
			return nil // passed on, stored, copied over: anything may write it
		}
	}
	var fs []string
	for i := range st.NumFields() {
		if stored[i] && !bad[i] {
			fs = append(fs, st.Field(i).Name())
		}
	}
	return fs
}

// passedThrough returns k when fn's first result is, on every return, its
// parameter k (the receiver of a method counts as parameter 0: List.Init
// returns it), else -1.
func passedThrough(fn *ssa.Function) int {
	k := -1
	for _, b := range fn.Blocks {
		ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return)
		if !ok {
			continue
		}
		if len(ret.Results) == 0 {
			return -1
		}
		v := ret.Results[0]
		for {
			ct, ok := v.(*ssa.ChangeType)
			if !ok {
				break
			}
			v = ct.X
		}
		p, ok := v.(*ssa.Parameter)
		if !ok {
			return -1
		}
		i := slices.Index(fn.Params, p)
		if i < 0 || k >= 0 && i != k {
			return -1
		}
		k = i
	}
	return k
}
