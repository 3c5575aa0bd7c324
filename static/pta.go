package static

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// pta is Steensgaard's unification-based, flow- and field-insensitive
// points-to analysis over one package's SSA functions (section 3.1 uses it
// for representative nodes, escape and isAccessible; section 3.4 for
// mayEqual). Every SSA value is a variable; each equivalence class has at
// most one pointee class (ref). Field-insensitivity is compensated by the
// memory identity of lvalues (Lval.Mem): Go is type safe, so only cells of
// the same field or element type may alias at all.
//
// Calls to functions outside the package are not unified (their bodies
// are not in this pass, as in RELAY's per-file function-pointer analysis):
// what a callee does with its arguments is in its summary instead.
type pta struct {
	parent []int32
	ref    []int32 // pointee class of a class root, -1 if none yet
	nodes  map[ssa.Value]int32
	rets   map[*ssa.Function]int32

	// escaped marks object classes that come from outside the package
	// (results of external calls that are not known to be fresh).
	escaped []int32
	// shared marks values handed to other goroutines (go statement
	// operands).
	shared []int32

	globalReach map[int32]bool // classes reachable from any global or from outside
	sharedReach map[int32]bool // classes reachable from go statement operands
}

func newPTA() *pta {
	return &pta{nodes: make(map[ssa.Value]int32), rets: make(map[*ssa.Function]int32)}
}

func (p *pta) fresh() int32 {
	n := int32(len(p.parent))
	p.parent = append(p.parent, n)
	p.ref = append(p.ref, -1)
	return n
}

func (p *pta) find(x int32) int32 {
	for p.parent[x] != x {
		p.parent[x] = p.parent[p.parent[x]]
		x = p.parent[x]
	}
	return x
}

// union unifies two classes and, recursively, their pointees.
func (p *pta) union(a, b int32) int32 {
	for {
		a, b = p.find(a), p.find(b)
		if a == b {
			return a
		}
		ra, rb := p.ref[a], p.ref[b]
		p.parent[b] = a
		switch {
		case ra < 0:
			p.ref[a] = rb
			return a
		case rb < 0:
			return a
		}
		// Unify the pointees too (iteratively: pointer chains can be long).
		a, b = ra, rb
	}
}

// deref returns the pointee class of x, creating it if needed.
func (p *pta) deref(x int32) int32 {
	x = p.find(x)
	if r := p.ref[x]; r >= 0 {
		return p.find(r)
	}
	r := p.fresh()
	p.ref[x] = r
	return r
}

func (p *pta) node(v ssa.Value) int32 {
	if n, ok := p.nodes[v]; ok {
		return n
	}
	n := p.fresh()
	p.nodes[v] = n
	return n
}

func (p *pta) ret(fn *ssa.Function) int32 {
	if n, ok := p.rets[fn]; ok {
		return n
	}
	n := p.fresh()
	p.rets[fn] = n
	return n
}

// assign models x = y: the two variables point to the same class.
func (p *pta) assign(x, y int32) { p.union(p.deref(x), p.deref(y)) }

// obj is the class of the object v points to.
func (p *pta) obj(v ssa.Value) int32 { return p.deref(p.node(v)) }

// mayPoint reports whether values of type t can hold pointers.
func mayPoint(t types.Type) bool {
	switch t := t.Underlying().(type) {
	case *types.Basic:
		return t.Kind() == types.UnsafePointer
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			if mayPoint(t.Field(i).Type()) {
				return true
			}
		}
		return false
	case *types.Array:
		return mayPoint(t.Elem())
	case *types.Tuple:
		for i := 0; i < t.Len(); i++ {
			if mayPoint(t.At(i).Type()) {
				return true
			}
		}
		return false
	}
	return true
}

// ptaCallee tells the points-to analysis what a call may invoke and
// whether an external callee returns a fresh object.
type ptaCallee interface {
	targets(site ssa.CallInstruction) []*ssa.Function
	isLocal(fn *ssa.Function) bool
	freshResult(fn *ssa.Function) bool
}

// solve generates and solves the constraints of all functions.
func (p *pta) solve(funcs []*ssa.Function, cg ptaCallee) {
	for _, fn := range funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				p.instr(fn, instr, cg)
			}
		}
	}
	// Classes reachable from globals are shared by construction.
	p.globalReach = make(map[int32]bool)
	for v := range p.nodes {
		if _, ok := v.(*ssa.Global); ok {
			p.chain(p.find(p.nodes[v]), p.globalReach)
		}
	}
	for _, c := range p.escaped {
		p.chain(p.find(c), p.globalReach)
	}
	p.sharedReach = make(map[int32]bool)
	for _, c := range p.shared {
		p.chain(p.find(c), p.sharedReach)
	}
}

// chain adds to set the classes reachable from x by following pointees:
// in Steensgaard's graph each class has one pointee, so this is a path.
func (p *pta) chain(x int32, set map[int32]bool) {
	for x >= 0 {
		x = p.find(x)
		if set[x] {
			return
		}
		set[x] = true
		x = p.ref[x]
	}
}

func (p *pta) instr(fn *ssa.Function, instr ssa.Instruction, cg ptaCallee) {
	switch in := instr.(type) {
	case *ssa.Alloc:
		p.obj(in)
	case *ssa.MakeMap, *ssa.MakeChan, *ssa.MakeSlice:
		p.obj(in.(ssa.Value))
	case *ssa.FieldAddr:
		p.assign(p.node(in), p.node(in.X))
	case *ssa.IndexAddr:
		p.assign(p.node(in), p.node(in.X))
	case *ssa.Field:
		if mayPoint(in.Type()) {
			p.assign(p.node(in), p.node(in.X))
		}
	case *ssa.Index:
		if mayPoint(in.Type()) {
			p.assign(p.node(in), p.node(in.X))
		}
	case *ssa.UnOp:
		switch in.Op {
		case token.MUL, token.ARROW:
			if mayPoint(in.Type()) {
				p.union(p.obj(in), p.deref(p.obj(in.X)))
			}
		}
	case *ssa.Store:
		if mayPoint(in.Val.Type()) {
			p.union(p.deref(p.obj(in.Addr)), p.obj(in.Val))
		}
	case *ssa.Send:
		if mayPoint(in.X.Type()) {
			p.union(p.deref(p.obj(in.Chan)), p.obj(in.X))
		}
	case *ssa.MapUpdate:
		p.union(p.deref(p.obj(in.Map)), p.obj(in.Value))
		p.union(p.deref(p.obj(in.Map)), p.obj(in.Key))
	case *ssa.Lookup:
		if _, ok := in.X.Type().Underlying().(*types.Map); ok {
			p.union(p.obj(in), p.deref(p.obj(in.X)))
		}
	case *ssa.Phi:
		if mayPoint(in.Type()) {
			for _, e := range in.Edges {
				p.assign(p.node(in), p.node(e))
			}
		}
	case *ssa.ChangeType:
		p.assign(p.node(in), p.node(in.X))
	case *ssa.Convert:
		if mayPoint(in.Type()) {
			p.assign(p.node(in), p.node(in.X))
		}
	case *ssa.MakeInterface:
		p.assign(p.node(in), p.node(in.X))
	case *ssa.ChangeInterface:
		p.assign(p.node(in), p.node(in.X))
	case *ssa.SliceToArrayPointer:
		p.assign(p.node(in), p.node(in.X))
	case *ssa.TypeAssert:
		p.assign(p.node(in), p.node(in.X))
	case *ssa.Slice:
		p.assign(p.node(in), p.node(in.X))
	case *ssa.Extract:
		p.assign(p.node(in), p.node(in.Tuple))
	case *ssa.Range:
		p.assign(p.node(in), p.node(in.X))
	case *ssa.Next:
		p.union(p.obj(in), p.deref(p.obj(in.Iter)))
	case *ssa.Select:
		for _, st := range in.States {
			if st.Dir == types.SendOnly && st.Send != nil {
				p.union(p.deref(p.obj(st.Chan)), p.obj(st.Send))
			} else {
				p.union(p.obj(in), p.deref(p.obj(st.Chan)))
			}
		}
	case *ssa.MakeClosure:
		// The closure object holds the captured variables, and the callee's
		// free variables are them.
		fnv, _ := in.Fn.(*ssa.Function)
		clo := p.obj(in)
		for i, b := range in.Bindings {
			p.union(p.deref(clo), p.obj(b))
			if fnv != nil && i < len(fnv.FreeVars) {
				p.assign(p.node(fnv.FreeVars[i]), p.node(b))
			}
		}
	case *ssa.Return:
		r := p.ret(fn)
		for _, v := range in.Results {
			if mayPoint(v.Type()) {
				p.assign(r, p.node(v))
			}
		}
	case *ssa.Go:
		p.call(in, in.Common(), nil, cg)
		for _, v := range in.Common().Args {
			p.shared = append(p.shared, p.node(v))
		}
		p.shared = append(p.shared, p.node(in.Common().Value))
	case *ssa.Defer:
		p.call(in, in.Common(), nil, cg)
	case *ssa.Call:
		p.call(in, in.Common(), in, cg)
	}
}

func (p *pta) call(site ssa.CallInstruction, c *ssa.CallCommon, result ssa.Value, cg ptaCallee) {
	if b, ok := c.Value.(*ssa.Builtin); ok {
		switch b.Name() {
		case "append":
			if result != nil && len(c.Args) == 2 {
				p.assign(p.node(result), p.node(c.Args[0]))
				p.union(p.deref(p.obj(c.Args[0])), p.deref(p.obj(c.Args[1])))
			}
		case "copy":
			if len(c.Args) == 2 {
				p.union(p.deref(p.obj(c.Args[0])), p.deref(p.obj(c.Args[1])))
			}
		}
		return
	}
	args := c.Args
	if c.IsInvoke() {
		args = append([]ssa.Value{c.Value}, c.Args...)
	}
	external := false
	fresh := true
	for _, fn := range cg.targets(site) {
		if !cg.isLocal(fn) {
			external = true
			fresh = fresh && cg.freshResult(fn)
			continue
		}
		for i, a := range args {
			if i < len(fn.Params) && mayPoint(a.Type()) {
				p.assign(p.node(fn.Params[i]), p.node(a))
			}
		}
		if result != nil {
			p.assign(p.node(result), p.ret(fn))
		}
	}
	if result != nil && mayPoint(result.Type()) && external && !fresh {
		p.escaped = append(p.escaped, p.obj(result))
	}
}

// classOf returns the class of the object an lvalue designates, following
// its path from a root known to this package, or -1 if it cannot tell.
func (p *pta) classOf(l Lval, roots func(Root) (int32, bool)) int32 {
	c, ok := roots(l.Root)
	if !ok {
		return -1
	}
	c = p.find(c)
	for _, s := range l.Path {
		if s.Kind == SelLoad {
			c = p.deref(c)
		}
	}
	return c
}
