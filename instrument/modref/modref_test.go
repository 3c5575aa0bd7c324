package modref

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// Each function's doc comment is its expectation: "modref:" then, per SSA
// parameter (the receiver is 0) with an effect, "i:" and its letters (R
// read, W write, S sync); "global" for GlobalLock.
const src = `package p

import (
	"sync"
	"sync/atomic"
)

type T struct {
	a, b int
	buf  []byte
	m    map[string]int
	mu   sync.Mutex
	n    atomic.Int64
	next *T
	ch   chan int
}

// modref: 0.0:R 0:R
func (t *T) Get() int { return t.a }

// modref: 0.1:W 0:W
func (t *T) Set(v int) { t.b = v }

// modref: 0.2:RW 0:RW
func (t *T) Append(p []byte) { t.buf = append(t.buf, p...) }

// The bytes appended are read by append (a builtin that copies): not a
// load the summary sees; p's elements are another object than t's.
// modref: 0.2:R 0:R
func (t *T) Len() int { return len(t.buf) }

// Writing the elements of a slice loaded from t writes another object.
// modref: 0.2:R 0:R
func (t *T) Zero() {
	for i := range t.buf {
		t.buf[i] = 0
	}
}

// modref: 0.0:W 0:W 0@4:W
func (t *T) Locked(v int) {
	t.mu.Lock()
	t.a = v
	t.mu.Unlock()
}

// modref: 0:S
func (t *T) Inc() { t.n.Add(1) }

// Synchronization at depth: a lock in the next object.
// modref: 0.6:R 0:RS
func (t *T) NextLocked() {
	t.next.mu.Lock()
	t.next.mu.Unlock()
}

// modref: 0.7:R 0:RS
func (t *T) Send() { t.ch <- 1 }

// modref: 0:W 1:R
func Copy(dst, src []byte) { copy(dst, src) }

// modref: 0:W
func Fill(dst []byte) {
	for i := range dst {
		dst[i] = 'x'
	}
}

// modref: 0:R
func Sum(s []int) int {
	n := 0
	for _, v := range s {
		n += v
	}
	return n
}

// Through a subslice and a callee.
// modref: 0:W
func FillTail(dst []byte) { Fill(dst[1:]) }

// Appending to dst writes past its length: not its elements.
// modref:
func AppendX(dst []byte) []byte { return append(dst, 'x') }

// But an element of append's result may be one of dst's.
// modref: 0:W
func AppendThenSet(dst []byte) []byte { dst = append(dst, 'x'); dst[0] = 'y'; return dst }

// modref: 0:W
func Put(m map[string]int) { m["a"] = 1 }

// modref: 0:R
func Has(m map[string]int) bool { _, ok := m["a"]; return ok }

// modref: 0:R
func Keys(m map[string]int) int {
	n := 0
	for range m {
		n++
	}
	return n
}

// modref: 0:W
func Del(m map[string]int) { delete(m, "a") }

// Calls through a method of the same object.
// modref: 0.0:R 0.1:W 0:RW
func (t *T) Swap() { t.Set(t.Get()) }

// A callee that locks the object's own mutex: the caller's parameter
// locks it too (a lock of the object's own, level 1, is not Sync).
// modref: 0.0:W 0:W 0@4:W
func (t *T) ViaLocked() { t.Locked(1) }

var gmu sync.Mutex
var gonce sync.Once
var counter int

// modref: 0.0:W 0:W global
func GlobalLocked(t *T) {
	gmu.Lock()
	t.a = 1
	gmu.Unlock()
}

// A Once on a global is a cache's: no GlobalLock.
// modref: 0.0:W 0:W
func OnceThenSet(t *T) {
	gonce.Do(func() { counter++ })
	t.a = 1
}

// modref: 0.0:W 0:W global
func ViaGlobalLocked(t *T) { GlobalLocked(t) }

// Handed to a goroutine: synchronized there, maybe.
// modref: 0:S
func Spawn(t *T) { go t.Set(1) }

// Handed to a function value.
// modref: 0:S
func Callback(t *T, f func(*T)) { f(t) }

type I interface{ M() }

// An interface call: the receiver's object may be synchronized on there.
// modref: 0:S
func Invoke(i I) { i.M() }

// Recursion reaches a fixed point.
// (A field written on one path only is Lazy: see LazyCerts.)
// modref: 0.0:RZ 0.1:R 0:RW
func (t *T) Walk(n int) {
	if n == 0 {
		t.a = 1
		return
	}
	t.Walk(n - 1)
	_ = t.b
}

// A pointer into the same object through an array field.
type A struct{ arr [4]int }

// modref: 0.0:W 0:W
func (a *A) SetAt(i int) { a.arr[i] = 1 }

// A phi of two parameters.
// modref: 0:W 1:W
func Either(x, y *T, c bool) {
	p := x
	if c {
		p = y
	}
	p.a = 1
}

// A string conversion copies.
// modref: 0:R
func Str(b []byte) string { return string(b) }

// Strings are immutable: nothing.
// modref:
func StrLen(s string) int { return len(s[1:]) }

// modref: 0:W
func Clear(s []int) { clear(s) }

// Functions without a body: assembly or the runtime's.
func memclrNoHeapPointers(b []byte)
func semacquire(addr *int)

// Plain code not seen into: its accesses are unknown, nothing is assumed.
// modref:
func ClearAsm(b []byte) { memclrNoHeapPointers(b) }

// Config.Clone's shape: every field read under the object's own RLock.
type C struct {
	mu    sync.RWMutex
	Name  string
	Certs []int
	in    struct{ x, y int }
	arr   [4]byte
}

// modref: 0.1:R 0.2:R 0.3.1:R 0.4:R 0:R 0@0:R
func (c *C) Clone() *C {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return &C{Name: c.Name, Certs: c.Certs, in: struct{ x, y int }{0, c.in.y}, arr: [4]byte{c.arr[1]}}
}

// A lazy initializer writes once; the calls after it only read: the
// field's Write is Lazy.
// modref: 0.2:RZ 0:RW
func (c *C) LazyCerts() []int {
	if c.Certs == nil {
		c.Certs = []int{}
	}
	return c.Certs
}

// Set on both branches of an if: written at each call.
// modref: 0.1:W 0:W
func (c *C) SetEither(b bool) {
	if b {
		c.Name = "a"
	} else {
		c.Name = "b"
	}
}

// modref: 0.1:W 0.2:RZ 0:RW
func (c *C) LazyThenSet() {
	c.LazyCerts()
	c.Name = "x"
}

// A pointer to a nested struct handed to a callee: its fields' paths
// under the caller's.
// modref: 0.3.0:W 0:W
func (c *C) SetIn() { setX(&c.in) }

// modref: 0.0:W 0:W
func setX(p *struct{ x, y int }) { p.x = 1 }

// A callee's whole effect on a field's object is the field's.
// modref: 0.2:R 0:R
func (c *C) CertsLen() int { return certsLen(&c.Certs) }

// modref: 0.:R 0:R
func certsLen(p *[]int) int { s := *p; return len(s) }

// A shallow copy reads the struct whole (the path "").
// modref: 0.:R 0:R
func (c *C) Copy() C { return *c }

// A lock of a field of a nested object is the nested object's: Sync.
// modref: 0.0:R 0:RS
func LockInner(p *struct{ c *C }) { p.c.mu.Lock(); p.c.mu.Unlock() }

// Level 2: the objects a struct's pointer and map fields lead to, written
// in place or through a callee (csv.Writer.Write writes its
// bufio.Writer).
type W struct {
	b    *B
	m    map[string]int
	Name string
}

type B struct{ n int }

// modref: 0.0:RW 0:RW
func (b *B) inc() { b.n++ }

// modref: 0.1:R 0:R 0>1:W
func (w *W) Put(k string) { w.m[k] = 1 }

// modref: 0.1:R 0:R 0>1:R
func (w *W) Get(k string) int { return w.m[k] }

// modref: 0.0:R 0:R 0>0:RW
func (w *W) Inc() { w.b.inc() }

// modref: 0.0:R 0:R 0>0:W
func (w *W) SetN() { w.b.n = 2 }

// Level 2 is as Params: a write on one path is a write.
// modref: 0.0:R 0.2:R 0:R 0>0:RW
func (w *W) MaybeInc() {
	if w.Name != "" {
		w.b.inc()
	}
}

// A lock handed on where its path is lost (a phi of two parameters):
// Sync.
// modref: 0:S 1:S
func LockEither(x, y *C, b bool) {
	p := x
	if b {
		p = y
	}
	p.lockIt()
}

// modref: 0@0:W
func (c *C) lockIt() { c.mu.Lock(); c.mu.Unlock() }

// A semaphore of the runtime's synchronizes.
// modref: 0:S
func Acquire(t *T) { semacquire(&t.a) }
`

func TestAnalyze(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	conf := &types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, _, err := ssautil.BuildPackage(conf, fset, types.NewPackage("p", "p"), []*ast.File{f}, ssa.SanityCheckFunctions)
	if err != nil {
		t.Fatal(err)
	}
	var fns []*ssa.Function
	for fn := range ssautil.AllFunctions(pkg.Prog) {
		fns = append(fns, fn)
	}
	res := Analyze(fns)
	checked := 0
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Doc == nil {
			continue
		}
		want, has := "", false
		for _, line := range strings.Split(fd.Doc.Text(), "\n") {
			if rest, ok := strings.CutPrefix(line, "modref:"); ok {
				want, has = strings.TrimSpace(rest), true
			}
		}
		if !has {
			continue
		}
		var fn *ssa.Function
		if fd.Recv == nil {
			fn = pkg.Prog.FuncValue(pkg.Pkg.Scope().Lookup(fd.Name.Name).(*types.Func))
		} else {
			recvName := fd.Recv.List[0].Type
			if st, ok := recvName.(*ast.StarExpr); ok {
				recvName = st.X
			}
			recv := types.NewPointer(pkg.Pkg.Scope().Lookup(recvName.(*ast.Ident).Name).Type())
			sel := pkg.Prog.MethodSets.MethodSet(recv).Lookup(pkg.Pkg, fd.Name.Name)
			fn = pkg.Prog.MethodValue(sel)
		}
		if got := render(res[fn]); got != want {
			t.Errorf("%s: %q, want %q", fd.Name.Name, got, want)
		}
		checked++
	}
	if checked < 30 {
		t.Fatalf("only %d functions checked", checked)
	}
}

func letters(e Effect) string {
	l := ""
	if e&Read != 0 {
		l += "R"
	}
	if e&Write != 0 {
		l += "W"
	}
	if e&Lazy != 0 {
		l += "Z"
	}
	return l
}

func render(s *Summary) string {
	if s == nil {
		return "(none)"
	}
	var out []string
	for i, e := range s.Params {
		for path, le := range s.Locks[i] {
			out = append(out, string(rune('0'+i))+"@"+path+":"+letters(le))
		}
		if e == 0 {
			continue
		}
		l := ""
		if e&Read != 0 {
			l += "R"
		}
		if e&Write != 0 {
			l += "W"
		}
		if e&Sync != 0 {
			l += "S"
		}
		out = append(out, string(rune('0'+i))+":"+l)
		if s.Whole[i]&(Read|Write) != 0 && len(s.Fields[i]) > 0 {
			out = append(out, string(rune('0'+i))+".whole:"+letters(s.Whole[i]))
		}
		for path, fe := range s.Fields[i] {
			out = append(out, string(rune('0'+i))+"."+path+":"+letters(fe))
		}
		for path, de := range s.Deref[i] {
			out = append(out, string(rune('0'+i))+">"+path+":"+letters(de))
		}
	}
	sort.Strings(out)
	if s.GlobalLock {
		out = append(out, "global")
	}
	return strings.Join(out, " ")
}
