package static

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// symEval is the symbolic execution of section 3.1 on one SSA function: it
// maps each SSA value that is an address to a symbolic lvalue in terms of
// the function's formals, free variables, package variables and allocation
// sites. SSA already keeps locals in registers, so the symbolic map σ of
// Figure 2 is the SSA value graph itself; a load from memory evaluates to
// the incoming value init(o) of the lvalue it reads (SelLoad), and merge
// points (φ) with different operands, like loop-carried pointers, become
// unknown values (the paper's ⊤), whose aliasing is then decided by the
// points-to analysis and memory identity.
type symEval struct {
	fa   *funcAnalysis
	memo map[ssa.Value]*Lval
}

func (e *symEval) ps() *pkgState { return e.fa.ps }

// addressLike reports whether a value of type t designates memory: a
// pointer, or a slice, map, channel or interface holding one.
func addressLike(t types.Type) bool {
	switch t := t.Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Map, *types.Chan, *types.Interface, *types.Signature:
		return true
	case *types.Basic:
		return t.Kind() == types.UnsafePointer
	}
	return false
}

func (e *symEval) unknown(t types.Type) *Lval {
	return &Lval{Root: Root{Kind: RootUnknown, Mem: e.ps().memOfAddr(t)}}
}

// eval returns the symbolic address v holds, or nil if v is not an
// address.
func (e *symEval) eval(v ssa.Value) *Lval {
	if l, ok := e.memo[v]; ok {
		return l
	}
	if !addressLike(v.Type()) {
		e.memo[v] = nil
		return nil
	}
	// Provisional value for cycles through φ-nodes.
	e.memo[v] = e.unknown(v.Type())
	l := e.compute(v)
	if l != nil && l.k == "" {
		k := l.keyed()
		l = &k
	}
	e.memo[v] = l
	return l
}

func (e *symEval) with(base *Lval, s Sel) *Lval {
	if base == nil {
		return &Lval{Root: Root{Kind: RootUnknown, Mem: s.Mem}}
	}
	l := base.With(s)
	return &l
}

func (e *symEval) compute(v ssa.Value) *Lval {
	ps := e.ps()
	fn := e.fa.fn
	switch v := v.(type) {
	case *ssa.Parameter:
		for i, p := range fn.Params {
			if p == v {
				return &Lval{Root: Root{Kind: RootParam, Index: i, Name: v.Name(), Mem: ps.memOfAddr(v.Type())}}
			}
		}
	case *ssa.FreeVar:
		for i, p := range fn.FreeVars {
			if p == v {
				return &Lval{Root: Root{Kind: RootFreeVar, Index: i, Name: v.Name(), Mem: ps.memOfAddr(v.Type())}}
			}
		}
	case *ssa.Global:
		return &Lval{Root: Root{Kind: RootGlobal, Name: globalName(v), Mem: ps.memOfAddr(v.Type())}}
	case *ssa.Alloc:
		r := Root{Kind: RootAlloc, Name: ps.site(v.Pos()), Mem: ps.memOfAddr(v.Type())}
		if token.IsIdentifier(v.Comment) && v.Comment != "complit" && v.Comment != "new" && v.Comment != "varargs" && v.Comment != "slicelit" {
			r.Var = v.Comment
		}
		return &Lval{Root: r}
	case *ssa.MakeMap, *ssa.MakeSlice, *ssa.MakeChan:
		return &Lval{Root: Root{Kind: RootAlloc, Name: ps.site(v.Pos()), Mem: ps.memOfAddr(v.Type())}}
	case *ssa.FieldAddr:
		st := derefStruct(v.X.Type())
		if st == nil {
			break
		}
		f := st.Field(v.Field)
		return e.with(e.eval(v.X), Sel{Kind: SelField, Name: f.Name(), Mem: ps.fieldMem(v.X.Type(), f)})
	case *ssa.IndexAddr:
		return e.with(e.eval(v.X), Sel{Kind: SelElem, Mem: ps.memOfAddr(v.Type())})
	case *ssa.UnOp:
		if v.Op == token.MUL {
			if a, ok := v.X.(*ssa.Alloc); ok {
				if st := singleStore(a); st != nil && dominates(st, v) {
					return named(e.eval(st.Val), a.Comment)
				}
			}
			// it.f of a local struct it := <a cell's contents>, written
			// once: the value of the cell's field f (the address read is
			// still it.f's; only the value is named).
			if fa, ok := v.X.(*ssa.FieldAddr); ok {
				if a, ok := fa.X.(*ssa.Alloc); ok {
					if st := singleStore(a); st != nil && dominates(st, v) {
						if cell := e.cellOf(st.Val); cell != nil {
							f := derefStruct(a.Type()).Field(fa.Field)
							cf := e.with(cell, Sel{Kind: SelField, Name: f.Name(), Mem: ps.fieldMem(a.Type(), f)})
							return e.with(cf, Sel{Kind: SelLoad, Mem: ps.memOfAddr(v.Type())})
						}
					}
				}
			}
			return e.with(e.eval(v.X), Sel{Kind: SelLoad, Mem: ps.memOfAddr(v.Type())})
		}
	case *ssa.Field:
		// The field of a struct value that is the contents of a cell is
		// the contents of the cell's field: go-cache's Get returns
		// item.Object of an entry it looked up (v, ok := c.items[k]).
		st, _ := v.X.Type().Underlying().(*types.Struct)
		if cell := e.cellOf(v.X); st != nil && cell != nil {
			f := st.Field(v.Field)
			fa := e.with(cell, Sel{Kind: SelField, Name: f.Name(), Mem: ps.fieldMem(types.NewPointer(v.X.Type()), f)})
			return e.with(fa, Sel{Kind: SelLoad, Mem: ps.memOfAddr(v.Type())})
		}
	case *ssa.Index:
		if ld, ok := v.X.(*ssa.UnOp); ok && ld.Op == token.MUL {
			el := e.with(e.eval(ld.X), Sel{Kind: SelElem, Mem: ps.elemMem(v.Type())})
			return e.with(el, Sel{Kind: SelLoad, Mem: ps.memOfAddr(v.Type())})
		}
	case *ssa.Lookup:
		if cell := e.cellOf(v); cell != nil {
			return e.with(cell, Sel{Kind: SelLoad, Mem: ps.memOfAddr(v.Type())})
		}
	case *ssa.ChangeType:
		return e.eval(v.X)
	case *ssa.Convert:
		if addressLike(v.X.Type()) {
			return e.eval(v.X)
		}
	case *ssa.MakeInterface:
		return e.eval(v.X)
	case *ssa.ChangeInterface:
		return e.eval(v.X)
	case *ssa.SliceToArrayPointer:
		return e.eval(v.X)
	case *ssa.Slice:
		return e.eval(v.X)
	case *ssa.TypeAssert:
		if !v.CommaOk {
			return e.eval(v.X)
		}
	case *ssa.Extract:
		switch t := v.Tuple.(type) {
		case *ssa.TypeAssert:
			if v.Index == 0 {
				return e.eval(t.X)
			}
		case *ssa.Lookup:
			if cell := e.cellOf(v); cell != nil {
				return e.with(cell, Sel{Kind: SelLoad, Mem: ps.memOfAddr(v.Type())})
			}
		case *ssa.Call:
			if t.Common().Signature().Results().Len() > 0 && v.Index == 0 {
				if r := e.fa.callResult(t); r != nil {
					return r
				}
			}
		}
	case *ssa.Call:
		if r := e.fa.callResult(v); r != nil {
			return r
		}
	case *ssa.Phi:
		var same *Lval
		for _, ed := range v.Edges {
			if ed == v {
				continue
			}
			if _, isConst := ed.(*ssa.Const); isConst {
				continue // nil on one path
			}
			l := e.eval(ed)
			if l == nil || l.Root.Kind == RootUnknown {
				return e.unknown(v.Type())
			}
			if same == nil {
				same = l
			} else if same.Key() != l.Key() {
				return e.unknown(v.Type())
			}
		}
		if same != nil {
			return same
		}
	}
	return e.unknown(v.Type())
}

// cellOf is the address whose contents value v is, for any type of v
// (eval names addresses only): a load *p, a map entry m[k], or the value
// of v, ok := m[k] (the zero value when absent: no cell, nothing shared).
// Nil when v is not known to be a cell's contents.
func (e *symEval) cellOf(v ssa.Value) *Lval {
	switch x := v.(type) {
	case *ssa.UnOp:
		if x.Op == token.MUL {
			return e.eval(x.X)
		}
	case *ssa.Lookup:
		if _, ok := x.X.Type().Underlying().(*types.Map); ok && !x.CommaOk {
			return e.with(e.eval(x.X), Sel{Kind: SelElem, Mem: e.ps().mapMem(x.X.Type())})
		}
	case *ssa.Extract:
		if lk, ok := x.Tuple.(*ssa.Lookup); ok && x.Index == 0 {
			if _, ok := lk.X.Type().Underlying().(*types.Map); ok {
				return e.with(e.eval(lk.X), Sel{Kind: SelElem, Mem: e.ps().mapMem(lk.X.Type())})
			}
		}
	}
	return nil
}

func derefStruct(t types.Type) *types.Struct {
	p, ok := t.Underlying().(*types.Pointer)
	if !ok {
		return nil
	}
	s, _ := p.Elem().Underlying().(*types.Struct)
	return s
}

func globalName(g *ssa.Global) string {
	if g.Pkg != nil {
		return g.Pkg.Pkg.Path() + "." + g.Name()
	}
	return g.Name()
}

// singleStore returns the only store to a variable, if the variable is
// written exactly once (in this function, and never by the closures that
// capture it) and otherwise only read or captured: loads after that store
// read its value. This is the part of the symbolic store σ that SSA does
// not already track: variables captured by closures (a parameter captured
// by a deferred or go'd closure, say) live in memory.
func singleStore(a *ssa.Alloc) *ssa.Store {
	refs := a.Referrers()
	if refs == nil {
		return nil
	}
	var st *ssa.Store
	for _, r := range *refs {
		switch r := r.(type) {
		case *ssa.Store:
			if r.Addr != a || st != nil {
				return nil
			}
			st = r
		case *ssa.UnOp:
			if r.Op != token.MUL {
				return nil
			}
		case *ssa.DebugRef:
		case *ssa.FieldAddr:
			// &it.f only read from (it.f in an expression).
			if frefs := r.Referrers(); frefs != nil {
				for _, fr := range *frefs {
					if u, ok := fr.(*ssa.UnOp); !ok || u.Op != token.MUL {
						if _, dbg := fr.(*ssa.DebugRef); !dbg {
							return nil
						}
					}
				}
			}
		case *ssa.MakeClosure:
			fn, _ := r.Fn.(*ssa.Function)
			if fn == nil {
				return nil
			}
			for i, b := range r.Bindings {
				if b == a && (i >= len(fn.FreeVars) || !readOnlyCell(fn.FreeVars[i])) {
					return nil
				}
			}
		default:
			return nil
		}
	}
	return st
}

// readOnlyCell reports whether a closure only loads from a captured cell.
func readOnlyCell(fv *ssa.FreeVar) bool {
	refs := fv.Referrers()
	if refs == nil {
		return true
	}
	for _, r := range *refs {
		switch r := r.(type) {
		case *ssa.UnOp:
			if r.Op != token.MUL {
				return false
			}
		case *ssa.DebugRef:
		default:
			return false
		}
	}
	return true
}

// dominates reports whether instruction a runs before b on every path.
func dominates(a, b ssa.Instruction) bool {
	ab, bb := a.Block(), b.Block()
	if ab != bb {
		return ab.Dominates(bb)
	}
	for _, i := range ab.Instrs {
		if i == a {
			return true
		}
		if i == b {
			return false
		}
	}
	return false
}

// named gives an allocation root the name of the variable that holds it,
// for display.
func named(l *Lval, name string) *Lval {
	if l == nil || l.Root.Kind != RootAlloc || l.Root.Var != "" || !token.IsIdentifier(name) {
		return l
	}
	c := *l
	c.Root.Var = name
	return &c
}
