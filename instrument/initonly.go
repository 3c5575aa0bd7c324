package instrument

import (
	"go/ast"
	"go/types"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Package variables written only by their declaration. An unexported
// package-level variable that no code of its package assigns (no
// assignment, increment or range clause writes its storage, a field of it
// or an element of it if an array) and whose address is never taken
// (explicitly, or by a method with a pointer receiver called on it) holds
// the value its declaration gave it, written in the package's
// initialization, before any goroutine that can read it starts: none of
// its reads can race, and they are not recorded. A lookup table read in a
// hot loop (a CRC table, an identity point) then costs nothing, and a
// small function reading one stays an inline wrapper: filippo.io/
// edwards25519's NewIdentityPoint, `new(Point).Set(identity)`, which the
// compiler inlines under -race so that the Point stays on the caller's
// stack (its AllocsPerRun tests).
//
// Only unexported variables: another package may write an exported one.
// Every variant of the package is looked at, its in-package test files
// too (a test that sets an unexported flag). A package with assembly
// files, cgo or a go:linkname directive keeps every variable recorded:
// code this walk does not see may write one. What is given up is a race
// of a variable's initializer with a goroutine its own initialization
// starts, which reads it before the initializer returns.

// pkgVarWrites is, per package path, the unexported package variables
// its code writes or takes the address of (by name); a package whose
// variables are all to be recorded maps to nil.
type pkgVarWrites map[string]map[string]bool

// writtenPkgVars walks every file of every package in pkgs.
func writtenPkgVars(pkgs []*packages.Package) pkgVarWrites {
	w := pkgVarWrites{}
	for _, p := range pkgs {
		path := p.PkgPath
		if strings.HasSuffix(p.ID, ".test") && !strings.Contains(p.ID, "[") {
			continue // a generated test main
		}
		if m, seen := w[path]; seen && m == nil {
			continue
		}
		if len(p.Errors) > 0 || len(p.TypeErrors) > 0 || p.TypesInfo == nil || usesCgo(p) || hasAsm(p) || hasLinkname(p.Syntax) {
			w[path] = nil
			continue
		}
		m := w[path]
		if m == nil {
			m = map[string]bool{}
			w[path] = m
		}
		for _, f := range p.Syntax {
			noteVarWrites(f, p.TypesInfo, p.Types, m)
		}
	}
	return w
}

// initOnly reports whether v is an unexported package variable of an
// analysed package that nothing writes after its declaration.
func (w pkgVarWrites) initOnly(v *types.Var) bool {
	if w == nil || !isPackageVar(v) || v.Exported() || v.Name() == "_" {
		return false
	}
	m, ok := w[v.Pkg().Path()]
	return ok && m != nil && !m[v.Name()]
}

// noteVarWrites adds to m the package variables of pkg that f writes or
// takes the address of (varEffects, as sharedLocals for locals).
func noteVarWrites(f *ast.File, info *types.Info, pkg *types.Package, m map[string]bool) {
	note := func(e ast.Expr) {
		if v := rootVar(e, info); v != nil && isPackageVar(v) && v.Pkg() == pkg {
			m[v.Name()] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		varEffects(n, info, note, note)
		return true
	})
}

// hasAsm reports whether p has assembly files, which may write its
// variables.
func hasAsm(p *packages.Package) bool {
	for _, f := range p.OtherFiles {
		if strings.EqualFold(filepath.Ext(f), ".s") {
			return true
		}
	}
	return false
}

// hasLinkname reports whether a file has a go:linkname directive, through
// which another package may name a variable.
func hasLinkname(files []*ast.File) bool {
	for _, f := range files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, "//go:linkname") {
					return true
				}
			}
		}
	}
	return false
}
