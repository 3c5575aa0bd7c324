package instrument

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"testing"
)

// Which package variables count as written after their declaration: every
// write of their storage (assignment, op-assignment, increment, a range
// clause's, a field's or an array element's), every address taken (&v,
// v[:] of an array, a pointer method called on v or a field of it), in any
// file; not a write through a pointer or slice v holds, a := that declares
// a local of the same name, or the declaration's own initializer.
// Exported variables are never init-only.
func TestInitOnlyVars(t *testing.T) {
	const src = `package p

type T struct{ n int; a [2]int }

func (t *T) inc() { t.n++ }
func (t T) get() int { return t.n }

var (
	table    = [4]int{1, 2, 3, 4}
	ptr      = &T{}
	sl       = []int{1}
	m        = map[int]int{}
	valRecv  T
	shadowed = 1
	Exported = 1

	assigned  int
	opAssign  int
	incr      int
	ranged    int
	field     T
	elem      [2]int
	addr      int
	sliced    [3]int
	ptrMethod T
	fieldPtr  T
	inInit    int
	inLit     int
)

func init() { inInit = 1 }

var f = func() { inLit = 2 }

func use() int {
	ptr.n = 1
	sl[0] = 2
	m[1] = 3
	shadowed := 5
	_ = shadowed
	assigned = 1
	opAssign += 1
	incr++
	for ranged = range 3 {
	}
	field.n = 1
	elem[1] = 2
	q := &addr
	_ = q
	_ = sliced[:]
	ptrMethod.inc()
	fieldPtr.a[0] = 1
	return table[0] + valRecv.get() + Exported
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, err := (&types.Config{Importer: importer.Default()}).Check("p", fset, []*ast.File{f}, info)
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	noteVarWrites(f, info, pkg, written)
	w := pkgVarWrites{"p": written}
	var initOnly []string
	for _, name := range pkg.Scope().Names() {
		if v, ok := pkg.Scope().Lookup(name).(*types.Var); ok && w.initOnly(v) {
			initOnly = append(initOnly, name)
		}
	}
	want := []string{"f", "m", "ptr", "shadowed", "sl", "table", "valRecv"}
	if !slices.Equal(initOnly, want) {
		t.Errorf("init-only: %q, want %q", initOnly, want)
	}
	// A package whose variables are all recorded (assembly, cgo,
	// go:linkname) maps to nil.
	if (pkgVarWrites{"p": nil}).initOnly(pkg.Scope().Lookup("table").(*types.Var)) {
		t.Error("a variable of a package mapped to nil is init-only")
	}
}
