package instrument

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
)

// Types the rewriter writes into the file: a temporary's, a literal's
// whose type was elided, a variadic call's slice. Each is written as the
// file can name it at the point of use.

// typedPiece writes e for a temporary's initializer. An operator's result
// whose type can come from its context (x = 1 << s with x a uint64, b = i < j
// with b of a named bool type) is converted to the type it has there, so
// that the temporary has it too.
func (r *rewriter) typedPiece(g *gen, e ast.Expr) {
	if name, ctx := r.contextTyped(e); ctx {
		g.lit("(" + name + ")(")
		r.piece(g, e)
		g.lit(")")
		return
	}
	r.piece(g, e)
}

// contextTyped reports whether e is an operator's result that may take its
// type from its context, and how the file names that type (ok false: it
// cannot, and e must not go into a temporary).
func (r *rewriter) contextTyped(e ast.Expr) (name string, ctx bool) {
	if r.cgoOpaque(e) {
		return "", true // of C's types (or an untyped C constant)
	}
	switch x := unparen(e).(type) {
	case *ast.BinaryExpr:
	case *ast.UnaryExpr:
		if x.Op == token.ARROW || x.Op == token.AND {
			return "", false
		}
	default:
		return "", false
	}
	name, _ = r.typeName(r.info.TypeOf(e), e.Pos())
	return name, true
}

// typeName writes t as the file can name it, if it can.
func (r *rewriter) typeName(t types.Type, pos token.Pos) (string, bool) {
	pkgNames := map[*types.Package]*types.PkgName{} // the file's imports
	for _, spec := range r.in.File.Imports {
		if pn := r.info.PkgNameOf(spec); pn != nil {
			pkgNames[pn.Imported()] = pn
		}
	}
	names := func(p *types.Package) string { // "" if not imported
		if pn := pkgNames[p]; pn != nil {
			return pn.Name()
		}
		return ""
	}
	// The names written must mean at pos what they mean at the top of
	// the file: a local variable may hide a type (dig's
	// findMissingDependencies ranges over params ...param with a
	// variable named param) or a package. If one is hidden, the type is
	// named by an alias declared at the top of the file (typeAlias).
	scope := r.in.Pkg.Scope().Innermost(pos)
	hidden := false
	lookup := func(name string, o types.Object) {
		if scope != nil {
			if _, got := scope.LookupParent(name, pos); got != o {
				hidden = true
			}
		}
	}
	ok := true
	var check func(t types.Type)
	seen := map[types.Type]bool{}
	named := func(o *types.TypeName) {
		switch {
		case o.Pkg() == nil || o.Pkg() == r.in.Pkg || names(o.Pkg()) == ".":
			if o.Pkg() == r.in.Pkg && o.Parent() != o.Pkg().Scope() && o.Parent() != nil {
				ok = false // a type local to a function: maybe not in scope here
			} else {
				lookup(o.Name(), o)
			}
		default:
			if n := names(o.Pkg()); n == "" || n == "_" || !o.Exported() {
				ok = false
			} else {
				lookup(n, pkgNames[o.Pkg()])
			}
		}
	}
	check = func(t types.Type) {
		if !ok || seen[t] {
			return
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.TypeParam:
			ok = false
		case *types.Basic:
			if t.Kind() == types.Invalid { // of package C (cgo.go)
				ok = false
			}
			if o := types.Universe.Lookup(t.Name()); o != nil {
				lookup(t.Name(), o)
			}
		case *types.Alias:
			named(t.Obj()) // TypeString writes the alias's name
			check(types.Unalias(t))
		case *types.Named:
			named(t.Obj())
			if ta := t.TypeArgs(); ta != nil {
				for i := 0; i < ta.Len(); i++ {
					check(ta.At(i))
				}
			}
		case *types.Pointer:
			check(t.Elem())
		case *types.Slice:
			check(t.Elem())
		case *types.Array:
			check(t.Elem())
		case *types.Map:
			check(t.Key())
			check(t.Elem())
		case *types.Chan:
			check(t.Elem())
		case *types.Signature:
			for i := 0; i < t.Params().Len(); i++ {
				check(t.Params().At(i).Type())
			}
			for i := 0; i < t.Results().Len(); i++ {
				check(t.Results().At(i).Type())
			}
		case *types.Struct:
			for i := 0; i < t.NumFields(); i++ {
				if f := t.Field(i); f.Pkg() != r.in.Pkg && !f.Exported() {
					ok = false
				} else {
					check(f.Type())
				}
			}
		case *types.Interface:
			for i := 0; i < t.NumExplicitMethods(); i++ {
				check(t.ExplicitMethod(i).Type())
			}
			for i := 0; i < t.NumEmbeddeds(); i++ {
				check(t.EmbeddedType(i))
			}
		}
	}
	check(t)
	if !ok {
		return "", false
	}
	name := types.TypeString(t, func(p *types.Package) string {
		if p == r.in.Pkg || names(p) == "." {
			return "" // the file's package, or dot-imported
		}
		return names(p)
	})
	if hidden {
		name = r.typeAlias(name)
	}
	return name, true
}

// typeAlias returns the name of an alias, declared at the top of the file
// (finish), of the type the file names name there.
func (r *rewriter) typeAlias(name string) string {
	if r.typeAliases == nil {
		r.typeAliases = map[string]string{}
	}
	a, ok := r.typeAliases[name]
	if !ok {
		a = r.base + "T" + strconv.Itoa(len(r.typeAliases))
		r.typeAliases[name] = a
	}
	return a
}
