package instrument

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// sharedLocals finds the local variables of a file that another goroutine
// may reach: those captured by a function literal (referenced inside one
// but declared outside it) and those whose address is taken, explicitly
// (&x, &x.f, &x[i] of an array, x[:] of an array) or implicitly (a method
// with a pointer receiver called on, or taken as a value of, an
// addressable x or a field of it). Every other local variable is provably
// private to its goroutine, and its accesses are not recorded.
//
// A captured variable that nothing writes after its declaration (no
// assignment, increment, range clause or named result, and its address
// never taken) is left out too: its one write, the declaration's, is
// ordered before every function literal that can reach it is created, so
// none of its reads can race. Go's compiler captures most such variables
// by value, where -race sees no access at all (a mutex-guarded counter's
// `c` read at each Lock and Unlock was a third of a hot loop's events).
func sharedLocals(f *ast.File, info *types.Info) map[*types.Var]bool {
	shared := map[*types.Var]bool{}
	captured := map[*types.Var]bool{}
	written := map[*types.Var]bool{}
	var lits []*ast.FuncLit

	mark := func(e ast.Expr) {
		if v := rootVar(e, info); v != nil && !isPackageVar(v) {
			shared[v] = true
		}
	}
	write := func(e ast.Expr) {
		if v := rootVar(e, info); v != nil && !isPackageVar(v) {
			written[v] = true
		}
	}
	results := func(ft *ast.FuncType) {
		if ft.Results == nil {
			return
		}
		for _, fl := range ft.Results.List {
			for _, id := range fl.Names {
				if v, ok := info.Defs[id].(*types.Var); ok {
					written[v] = true // each return statement writes it
				}
			}
		}
	}

	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			results(n.Type)
		case *ast.FuncLit:
			results(n.Type)
			lits = append(lits, n)
			ast.Inspect(n.Body, visit)
			lits = lits[:len(lits)-1]
			return false
		case *ast.Ident:
			if v, ok := info.Uses[n].(*types.Var); ok && !v.IsField() && !isPackageVar(v) && len(lits) > 0 {
				top := lits[len(lits)-1]
				if v.Pos() < top.Pos() || v.Pos() >= top.End() {
					captured[v] = true
				}
			}
		default:
			varEffects(n, info, write, mark)
		}
		return true
	}
	ast.Inspect(f, visit)
	for v := range captured {
		if written[v] {
			shared[v] = true
		}
	}
	return shared
}

// varEffects calls write with each location node n writes (an
// assignment's, an increment's, a range clause's, not a := declaration's)
// and addr with each location whose address it takes (&x, x[:] of an
// array, a pointer method called on an addressable x): what makes a local
// shared (sharedLocals) or a package variable more than its declaration's
// (initonly.go).
func varEffects(n ast.Node, info *types.Info, write, addr func(ast.Expr)) {
	switch n := n.(type) {
	case *ast.AssignStmt:
		for _, l := range n.Lhs {
			if id, ok := l.(*ast.Ident); ok && n.Tok == token.DEFINE && info.Defs[id] != nil {
				continue // declared here, not written again
			}
			write(l)
		}
	case *ast.IncDecStmt:
		write(n.X)
	case *ast.RangeStmt:
		// Both forms: before go1.22 a := range clause's variables are
		// one pair, written at each iteration.
		if n.Key != nil {
			write(n.Key)
		}
		if n.Value != nil {
			write(n.Value)
		}
	case *ast.UnaryExpr:
		if n.Op == token.AND {
			addr(n.X)
		}
	case *ast.SliceExpr:
		if isArray(typeOf(info, n.X)) {
			addr(n.X)
		}
	case *ast.SelectorExpr:
		if sel := info.Selections[n]; sel != nil && sel.Kind() != types.FieldVal {
			if recvIsPointer(sel) && !sel.Indirect() && !isPointer(typeOf(info, n.X)) {
				addr(n.X)
			}
		}
	}
}

// rootVar is the variable a location expression x, x.f, x[i] (x an array),
// (x) is part of, when it lies in that variable's own memory; nil when the
// location is reached through a pointer, slice or map.
func rootVar(e ast.Expr, info *types.Info) *types.Var {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			v, _ := info.ObjectOf(x).(*types.Var)
			if v != nil && v.IsField() {
				return nil
			}
			return v
		case *ast.SelectorExpr:
			sel := info.Selections[x]
			if sel == nil || sel.Kind() != types.FieldVal || sel.Indirect() || isPointer(typeOf(info, x.X)) {
				return nil
			}
			e = x.X
		case *ast.IndexExpr:
			if !isArray(typeOf(info, x.X)) {
				return nil
			}
			e = x.X
		default:
			return nil
		}
	}
}

func isPackageVar(v *types.Var) bool {
	return v.Parent() != nil && v.Pkg() != nil && v.Parent() == v.Pkg().Scope()
}

func typeOf(info *types.Info, e ast.Expr) types.Type {
	if tv, ok := info.Types[e]; ok {
		return tv.Type
	}
	if id, ok := e.(*ast.Ident); ok {
		if o := info.ObjectOf(id); o != nil {
			return o.Type()
		}
	}
	return nil
}

// core returns t's core type: its underlying type, or for a type parameter
// the single underlying type of its type set (nil if there is none).
func core(t types.Type) types.Type {
	if t == nil {
		return nil
	}
	tp, ok := types.Unalias(t).(*types.TypeParam)
	if !ok {
		return t.Underlying()
	}
	iface, _ := tp.Constraint().Underlying().(*types.Interface)
	if iface == nil {
		return nil
	}
	var u types.Type
	for i := 0; i < iface.NumEmbeddeds(); i++ {
		var terms []types.Type
		switch em := iface.EmbeddedType(i).(type) {
		case *types.Union:
			for j := 0; j < em.Len(); j++ {
				terms = append(terms, em.Term(j).Type())
			}
		default:
			terms = append(terms, em)
		}
		for _, t := range terms {
			tu := core(t)
			if tu == nil {
				return nil
			}
			if _, isIface := tu.(*types.Interface); isIface {
				continue
			}
			if u == nil {
				u = tu
			} else if !types.Identical(u, tu) {
				if ch1, ok1 := u.(*types.Chan); ok1 {
					if ch2, ok2 := tu.(*types.Chan); ok2 && types.Identical(ch1.Elem(), ch2.Elem()) {
						continue // channels of one element type: directions may differ
					}
				}
				return nil
			}
		}
	}
	return u
}

func isArray(t types.Type) bool {
	_, ok := core(t).(*types.Array)
	return ok
}

func isPointer(t types.Type) bool {
	_, ok := core(t).(*types.Pointer)
	return ok
}

func isPtrToArray(t types.Type) bool {
	if p, ok := core(t).(*types.Pointer); ok {
		return isArray(p.Elem())
	}
	return false
}

func isSlice(t types.Type) bool {
	_, ok := core(t).(*types.Slice)
	return ok
}

func isMap(t types.Type) bool {
	_, ok := core(t).(*types.Map)
	return ok
}

func isChan(t types.Type) bool {
	_, ok := core(t).(*types.Chan)
	return ok
}

func isString(t types.Type) bool {
	b, ok := core(t).(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// recvIsPointer reports whether the method selected by sel has a pointer
// receiver.
func recvIsPointer(sel *types.Selection) bool {
	fn, ok := sel.Obj().(*types.Func)
	if !ok {
		return false
	}
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return false
	}
	_, ptr := types.Unalias(sig.Recv().Type()).(*types.Pointer)
	return ptr
}

// stdPath reports whether an import path looks like the standard
// library's: no dot in its first element (a module path has a domain).
func stdPath(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
