package instrument

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/types"
	"os"
	"path/filepath"

	"golang.org/x/tools/go/packages"
)

// cgoPackage is a package that uses cgo, type-checked from the files as
// written: the go command compiles cgo's output for its files that import
// "C" (go/packages type-checks that output, in the build cache, where no
// overlay reaches), so racekit rewrites the files themselves, with the
// types go/types gives them when package C is a fake one
// (types.Config.FakeImportC). Expressions of C's types are then invalid,
// and the rewriter leaves them as written (cgoOpaque); every other access
// of the package is traced, as go test -race traces the Go code of a cgo
// package.
type cgoPackage struct {
	files map[string]*ast.File // file name → its syntax, as written
	info  *types.Info
	pkg   *types.Package
}

// checkCgo parses and type-checks p's files as written, against the types
// of its imports that go/packages loaded. An error (a file that cannot be
// read or parsed) means p is left untraced.
func checkCgo(p *packages.Package, src map[string][]byte) (*cgoPackage, error) {
	if p.Types == nil {
		return nil, fmt.Errorf("no type information")
	}
	imports := map[string]*types.Package{}
	for _, ip := range p.Types.Imports() {
		imports[ip.Path()] = ip
	}
	c := &cgoPackage{files: map[string]*ast.File{}}
	var files []*ast.File
	for _, name := range p.GoFiles {
		b, ok := src[filepath.Clean(name)]
		if !ok {
			var err error
			if b, err = os.ReadFile(name); err != nil {
				return nil, err
			}
		}
		f, err := parser.ParseFile(p.Fset, name, b, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		c.files[name] = f
	}
	c.info = newTypesInfo()
	// Errors are expected and ignored: go/packages type-checked cgo's
	// output without one, so each comes from package C's names (a C
	// value converted or assigned is of the invalid type), and go/types
	// records every other expression's type as it would.
	conf := types.Config{
		FakeImportC: true,
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if ip := imports[path]; ip != nil {
				return ip, nil
			}
			return nil, fmt.Errorf("%s: not among the package's imports", path)
		}),
		Sizes: p.TypesSizes,
		Error: func(error) {},
	}
	if p.Module != nil && p.Module.GoVersion != "" {
		conf.GoVersion = "go" + p.Module.GoVersion
	}
	c.pkg, _ = conf.Check(p.PkgPath, p.Fset, files, c.info)
	return c, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// cgoOpaque reports whether e must stay as written in a file that imports
// "C": a name of package C (cgo requires C.f to be called as written, and
// C's types are not Go types the rewriter can name), or an expression
// whose type checkCgo could not know because it involves one.
func (r *rewriter) cgoOpaque(e ast.Expr) bool {
	if !r.importsC {
		return false
	}
	if r.cgoName(e) {
		return true
	}
	t := r.info.TypeOf(e)
	return t == nil || hasInvalid(t)
}

// cgoName reports whether e is a name of package C (C.f, C.int, C.x).
func (r *rewriter) cgoName(e ast.Expr) bool {
	if !r.importsC {
		return false
	}
	if se, ok := ast.Unparen(e).(*ast.SelectorExpr); ok {
		if id, ok := se.X.(*ast.Ident); ok {
			if pn, ok := r.info.Uses[id].(*types.PkgName); ok && pn.Imported().Path() == "C" {
				return true
			}
		}
	}
	return false
}

// cgoAccess records the access (R, W, RW) of e, a Go variable or a field
// of a Go struct whose type is C's (c.db, a *C.sqlite3 field; a package
// variable of type C.int), if another goroutine may reach it: go test
// -race records those as any other Go memory. The generic hook takes the
// value's size from the compiled type, which checkCgo does not know (so
// not R1's one event: a C struct's words are each recorded). A C
// struct's own fields (x.b.v of a field b of type C.box) have no
// selection here and stay as written.
func (r *rewriter) cgoAccess(e ast.Expr, kind string) {
	switch x := e.(type) {
	case *ast.ParenExpr:
		r.cgoAccess(x.X, kind)
		return
	case *ast.Ident:
		if !r.sharedIdent(x) {
			return
		}
	case *ast.SelectorExpr:
		if sel := r.info.Selections[x]; !r.pkgVarSel(x) && (sel == nil || sel.Kind() != types.FieldVal) {
			return
		}
		r.loc(x)
		if !r.sharedLoc(x) {
			return
		}
	default:
		return
	}
	lo, hi := r.span(e)
	r.ed.wrap(lo, hi, "(*"+rtAlias+"."+kind+"(&", ", "+r.asite(e.Pos())+"))")
}

// hasInvalid reports whether t is or is built of the invalid type, as
// *C.char, []C.int and func(C.int) are. A named type with a field of a C
// type is not: it is a Go type the rewriter can name (and, not walked,
// the only way a type refers to itself).
func hasInvalid(t types.Type) bool {
	switch t := t.(type) {
	case *types.Basic:
		return t.Kind() == types.Invalid
	case *types.Pointer:
		return hasInvalid(t.Elem())
	case *types.Slice:
		return hasInvalid(t.Elem())
	case *types.Array:
		return hasInvalid(t.Elem())
	case *types.Map:
		return hasInvalid(t.Key()) || hasInvalid(t.Elem())
	case *types.Chan:
		return hasInvalid(t.Elem())
	case *types.Alias:
		return hasInvalid(types.Unalias(t))
	case *types.Signature:
		return hasInvalid(t.Params()) || hasInvalid(t.Results())
	case *types.Tuple:
		for i := 0; i < t.Len(); i++ {
			if hasInvalid(t.At(i).Type()) {
				return true
			}
		}
	}
	return false
}
