package fresh

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// Each function's doc comment is its expectation: "fresh: i j" lists its
// fresh results, "fresh:" none.
const src = `package p

type T struct{ a, b int }

var global = new(T)
var cache map[int]*T

// fresh: 0
func newT() *T { return &T{a: 1} }

// fresh: 0
func newT2() *T { p := new(T); p.b = 2; return p }

// fresh:
func param(p *T) *T { return p }

// fresh:
func glob() *T { return global }

// fresh: 0
func viaCall() *T { return newT() }

// fresh: 0
func orNil(ok bool) *T {
	if !ok {
		return nil
	}
	return newT()
}

// A bufio.NewReaderSize: the argument itself on one path.
// fresh:
func reuse(p *T, ok bool) *T {
	if ok {
		return p
	}
	return new(T)
}

// fresh: 0
func rec(n int) *T {
	if n == 0 {
		return new(T)
	}
	return rec(n - 1)
}

// fresh:
func recParam(n int, p *T) *T {
	if n == 0 {
		return p
	}
	return recParam(n-1, p)
}

// fresh: 0
func loop(n int) *T {
	var p *T
	for i := 0; i < n; i++ {
		p = &T{a: i}
	}
	return p
}

// fresh:
func cached(k int) *T {
	if p, ok := cache[k]; ok {
		return p
	}
	p := new(T)
	cache[k] = p
	return p
}

// fresh: 0 2
func tuple() (*T, error, []int) { return new(T), nil, make([]int, 3) }

// fresh: 0
func fromTuple() *T {
	p, _, _ := tuple()
	return p
}

// fresh: 1
func fromTuple2() (error, []int) {
	_, err, s := tuple()
	return err, s
}

// fresh: 0
func sub(n int) []byte { b := make([]byte, 64); return b[:n] }

// fresh:
func subParam(b []byte, n int) []byte { return b[:n] }

// fresh: 0
func grow(n int) []int {
	var s []int
	for i := 0; i < n; i++ {
		s = append(s, i)
	}
	return s
}

// fresh:
func appendParam(s []int) []int { return append(s, 1) }

// fresh: 0
func mk() map[int]int { return map[int]int{1: 2} }

// Not a pointer, slice or map.
// fresh:
func val() T { return T{} }

// fresh:
func field(p *T) *int { return &p.a }

// fresh:
func dyn(f func() *T) *T { return f() }

type I interface{ M() *T }

// fresh:
func invoke(i I) *T { return i.M() }

// fresh: 0
func (t T) Clone() *T { c := t; return &c }

// fresh: 0
func closure() *T {
	f := func() *T { return new(T) }
	return f()
}

// Init returns its receiver: a new object's Init is the new object
// (container/list.New).
func (t *T) Init() *T { t.a = 0; return t }

// fresh: 0
func newInit() *T { return new(T).Init() }

// fresh:
func paramInit(p *T) *T { return p.Init() }

// A conversion of a string makes a new array (bytes.NewBufferString's
// buf); a slice of it is part of it.
// fresh: 0
func stringSlice(s string) []byte { return []byte(s)[:0:0] }

// fresh: 0
func runes(s string) []rune { return []rune(s) }

type bs []byte

// A conversion between slice types shares the array.
// fresh:
func sameArray(b bs) []byte { return []byte(b) }

type R struct {
	U   *T
	H   map[string]int
	S   []int
	old *T
	n   int
}

var global2 *R

func fill(r *R) { r.U = global }

// fresh: 0
// fields: U H
func newR() *R { return &R{U: new(T), H: map[string]int{}, n: 1} }

// A (*http.Request).WithContext: the copy's fields are the old object's.
// fresh: 0
// fields:
func copyR(r *R) *R { r2 := new(R); *r2 = *r; return r2 }

// fresh: 0
// fields: U
func mixed(p *T) *R { r := &R{U: new(T), old: p}; return r }

// fresh: 0
// fields: U H
func viaNewR() *R { return newR() }

// fresh: 0
// fields:
func passed() *R { r := &R{U: new(T)}; fill(r); return r }

// fresh: 0
// fields:
func stored() *R { r := &R{U: new(T)}; global2 = r; return r }

// fresh: 0
// fields: U
func twoAllocs(b bool) *R {
	if b {
		return &R{U: new(T), H: map[string]int{}}
	}
	return &R{U: new(T), S: make([]int, 1)}
}

func newRErr() (*R, error) { return newR(), nil }

// fresh: 0
// fields: U H
func viaTuple() (*R, error) { return newRErr() }

// fresh: 0
// fields:
func overwritten(p *T) *R { r := &R{U: new(T)}; r.U = p; return r }

// fresh: 0
// fields: S
func orNilR(b bool) *R {
	if b {
		return nil
	}
	return &R{S: make([]int, 2)}
}
`

func TestAnalyze(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	pkg, _, err := ssautil.BuildPackage(&types.Config{}, fset, types.NewPackage("p", "p"), []*ast.File{f}, ssa.SanityCheckFunctions)
	if err != nil {
		t.Fatal(err)
	}
	var fns []*ssa.Function
	for fn := range ssautil.AllFunctions(pkg.Prog) {
		fns = append(fns, fn)
	}
	res := Analyze(fns)
	fields := AnalyzeFields(res)
	checked, checkedFields := 0, 0
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Doc == nil {
			continue
		}
		var want, wantFields string
		hasFresh, hasFields := false, false
		for _, line := range strings.Split(fd.Doc.Text(), "\n") {
			if rest, ok := strings.CutPrefix(line, "fresh:"); ok {
				want, hasFresh = rest, true
			}
			if rest, ok := strings.CutPrefix(line, "fields:"); ok {
				wantFields, hasFields = rest, true
			}
		}
		if !hasFresh {
			continue
		}
		obj := pkg.Pkg.Scope().Lookup(fd.Name.Name)
		var fn *ssa.Function
		if obj != nil {
			fn = pkg.Prog.FuncValue(obj.(*types.Func))
		} else { // a method
			recv := pkg.Pkg.Scope().Lookup("T").Type()
			sel := pkg.Prog.MethodSets.MethodSet(recv).Lookup(pkg.Pkg, fd.Name.Name)
			fn = pkg.Prog.MethodValue(sel)
		}
		var got []string
		for i := 0; i < fn.Signature.Results().Len(); i++ {
			if res.Fresh(fn, i) {
				got = append(got, string(rune('0'+i)))
			}
		}
		sort.Strings(got)
		if g, w := strings.Join(got, " "), strings.TrimSpace(want); g != w {
			t.Errorf("%s: fresh results %q, want %q", fd.Name.Name, g, w)
		}
		checked++
		if hasFields {
			if g, w := strings.Join(fields[fn], " "), strings.TrimSpace(wantFields); g != w {
				t.Errorf("%s: fresh fields %q, want %q", fd.Name.Name, g, w)
			}
			checkedFields++
		}
	}
	if checked < 25 || checkedFields < 9 {
		t.Fatalf("only %d functions checked, %d for fields", checked, checkedFields)
	}
}
