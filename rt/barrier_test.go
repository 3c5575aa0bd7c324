package rt

import (
	"bufio"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

func addr[T any](p *T) uint64 { return uint64(uintptr(unsafe.Pointer(p))) }

// words returns the addresses of the 8-byte words of *p.
func words[T any](p *T) []uint64 {
	var out []uint64
	for off := uintptr(0); off < unsafe.Sizeof(*p); off += 8 {
		out = append(out, addr(p)+uint64(off))
	}
	return out
}

func set(as ...[]uint64) []uint64 {
	var out []uint64
	for _, a := range as {
		out = append(out, a...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func one(as ...uint64) []uint64 { return as }

// testSink moves the tests' objects to the heap: the walk lets operands
// stay on the stack, where they would move when the stack grows, between
// computing the addresses a test expects and the walk.
var testSink []any

func onHeap(xs ...any) { testSink = append(testSink, xs...) }

// sorted sorts D (the walk gives it in walk order) and checks that it
// holds no duplicate.
func sorted(d []uint64) []uint64 {
	slices.Sort(d)
	for i := 1; i < len(d); i++ {
		if d[i] == d[i-1] {
			panic("a duplicate address in D")
		}
	}
	return d
}

func checkD(t *testing.T, name string, vals []any, want []uint64) {
	t.Helper()
	for _, cache := range []bool{false, true, true} { // the second cached run hits
		got := sorted(reachable(vals, cache))
		if !slices.Equal(got, want) {
			t.Errorf("%s (cache %v): D =\n %x\nwant\n %x", name, cache, got, want)
		}
	}
}

type account struct {
	id      int32
	open    bool // a narrow field inside the first word
	balance int64
	owner   *person
	hist    []int64
	tags    map[string]int
	ch      chan int
	name    string
	cb      func()
}

type person struct {
	age  int64
	next *person
}

// D of a pointer to a struct: its words and narrow fields, what its
// pointers reach (a slice's elements, a person), the map as one object, a
// channel as c and c+1; not the string's bytes nor the closure.
func TestBarrierStruct(t *testing.T) {
	p := &person{age: 40}
	a := &account{id: 1, open: true, owner: p, hist: []int64{1, 2, 3}, tags: map[string]int{"a": 1}, ch: make(chan int), name: "acct", cb: func() {}}
	onHeap(a)
	c := uint64(uintptr(*(*unsafe.Pointer)(unsafe.Pointer(&a.ch))))
	want := set(words(a), one(addr(&a.open)), words(p), one(addr(&a.hist[0]), addr(&a.hist[1]), addr(&a.hist[2])),
		one(uint64(uintptr(mapPtr(a.tags)))), one(c, c+1))
	checkD(t, "*account", []any{a}, want)

	// By value: the copy's own words are not in D, what it reaches is.
	checkD(t, "account", []any{*a}, set(words(p), one(addr(&a.hist[0]), addr(&a.hist[1]), addr(&a.hist[2])),
		one(uint64(uintptr(mapPtr(a.tags)))), one(c, c+1)))

	// Pointerless values reach nothing.
	checkD(t, "scalars", []any{1, "s", 2.5, person{age: 1}}, nil)
	checkD(t, "nil", []any{nil, (*person)(nil), []int(nil), map[int]int(nil)}, nil)
}

// Slices: every element (one address per element, plus the words of wide
// ones), and what the elements point to.
func TestBarrierSlices(t *testing.T) {
	b := []byte("hello")
	onHeap(b)
	var wb []uint64
	for i := range b {
		wb = append(wb, addr(&b[i]))
	}
	checkD(t, "[]byte", []any{b}, set(wb))

	ps := []*person{{age: 1}, {age: 2}}
	onHeap(ps)
	checkD(t, "[]*person", []any{ps}, set(one(addr(&ps[0]), addr(&ps[1])), words(ps[0]), words(ps[1])))

	type pair struct {
		a int32
		b int32
		c int64
	}
	s := []pair{{}, {}}
	onHeap(s)
	checkD(t, "[]pair", []any{s}, set(words(&s[0]), words(&s[1]), one(addr(&s[0].b), addr(&s[1].b))))

	// An array inside a struct: its elements' own addresses.
	type withArr struct {
		n   int64
		arr [3]int16
	}
	w := &withArr{}
	onHeap(w)
	checkD(t, "array field", []any{w}, set(words(w), one(addr(&w.arr[0]), addr(&w.arr[1]), addr(&w.arr[2]))))
}

// A map is one object; its entries are not walked.
func TestBarrierMaps(t *testing.T) {
	m := map[int]*person{1: {age: 1}}
	onHeap(m)
	checkD(t, "map", []any{m}, one(uint64(uintptr(mapPtr(m)))))
	type holder struct{ m map[int]*person }
	h := &holder{m: m}
	onHeap(h)
	checkD(t, "map field", []any{h}, set(words(h), one(uint64(uintptr(mapPtr(m))))))
}

// Cycles end, and an object reached twice is walked once; pointers are
// followed barrierDepth hops.
func TestBarrierCyclesAndDepth(t *testing.T) {
	a := &person{age: 1}
	b := &person{age: 2, next: a}
	a.next = b
	onHeap(a, b)
	checkD(t, "cycle", []any{a, b}, set(words(a), words(b)))

	chain := make([]*person, 6)
	for i := range chain {
		chain[i] = &person{age: int64(i)}
		if i > 0 {
			chain[i-1].next = chain[i]
		}
	}
	onHeap(chain)
	// chain[0] is one hop from the operand, chain[2] three.
	checkD(t, "depth", []any{chain[0]}, set(words(chain[0]), words(chain[1]), words(chain[2])))
	// Through an interface, a pointer-shaped struct, a one-element array:
	// no hop of their own.
	type wrap struct{ p *person }
	checkD(t, "any", []any{any(chain[3])}, set(words(chain[3]), words(chain[4]), words(chain[5])))
	checkD(t, "wrap", []any{wrap{chain[3]}}, set(words(chain[3]), words(chain[4]), words(chain[5])))
	checkD(t, "[1]*person", []any{[1]*person{chain[3]}}, set(words(chain[3]), words(chain[4]), words(chain[5])))
	var st interface{ String() string } = stringer{p: chain[4]}
	checkD(t, "boxed", []any{st}, set(words(chain[4]), words(chain[5])))
}

type stringer struct {
	n int64
	p *person
}

func (s stringer) String() string { return "" }

// D is cut at barrierMaxAddrs, nearest objects first.
func TestBarrierBound(t *testing.T) {
	big := make([]*int64, 1000)
	near := &person{}
	type two struct {
		p *person
		s []*int64
	}
	onHeap(near, big)
	got := reachable([]any{two{near, big}}, true)
	if len(got) != barrierMaxAddrs {
		t.Fatalf("|D| = %d, want the bound %d", len(got), barrierMaxAddrs)
	}
	for _, a := range words(near) {
		if !slices.Contains(got, a) {
			t.Errorf("the nearer object's word %x is not in D", a)
		}
	}
}

// Of a slice or array of pointer-free elements, the first barrierMaxElems
// elements are in D.
func TestBarrierElems(t *testing.T) {
	b := make([]byte, 100)
	onHeap(b)
	var want []uint64
	for i := range barrierMaxElems {
		want = append(want, addr(&b[i]))
	}
	checkD(t, "[]byte", []any{b}, want)
	type small struct {
		a int32
		b int16
	}
	sm := make([]small, 3)
	onHeap(sm)
	checkD(t, "[]small", []any{sm}, set(one(addr(&sm[0]), addr(&sm[0].b), addr(&sm[1]), addr(&sm[1].b), addr(&sm[2]), addr(&sm[2].b))))
	type withArr struct{ arr [100]int64 }
	a := &withArr{}
	onHeap(a)
	want = nil
	for i := range a.arr {
		want = append(want, addr(&a.arr[i])) // the struct's words cover all
	}
	got := sorted(reachable([]any{a}, false))
	if len(got) != barrierMaxAddrs || !slices.Equal(got, want[:barrierMaxAddrs]) {
		t.Errorf("array in a struct: D = %x", got)
	}
}

// The cache: a second call reaching the same objects reuses their walks;
// a change of any word a walk read (a pointer, a slice header), however
// deep, is seen; an object that keeps changing is walked every time.
func TestBarrierCache(t *testing.T) {
	a := &person{age: 1, next: &person{age: 2}}
	onHeap(a)
	sorted(reachable([]any{a}, true)) // met for the first time: not cached
	first := sorted(reachable([]any{a}, true))
	h0, m0 := bpHits.Load(), bpMisses.Load()
	second := sorted(reachable([]any{a}, true))
	if !slices.Equal(first, second) || bpHits.Load()-h0 != 1 || bpMisses.Load() != m0 {
		t.Fatalf("a repeated call: hits %d misses %d", bpHits.Load()-h0, bpMisses.Load()-m0)
	}
	n := &person{age: 3}
	onHeap(n)
	a.next.next = n // two hops down: the tree changed
	got := sorted(reachable([]any{a}, true))
	if want := set(words(a), words(a.next), words(n)); !slices.Equal(got, want) {
		t.Errorf("after a change: D = %x, want %x", got, want)
	}
	if bpMisses.Load() == m0 {
		t.Errorf("a changed tree hit the cache")
	}
	s := []*person{a}
	onHeap(&s)
	reachable([]any{&s}, true)
	reachable([]any{&s}, true)
	s = append(s, n) // the slice header changed
	if got, want := sorted(reachable([]any{&s}, true)), set(words(&s), one(addr(&s[0]), addr(&s[1])), words(a), words(n)); !slices.Equal(got, want) {
		t.Errorf("after append: D = %x, want %x", got, want)
	}
	// A root that changes at every call: correct every time, then no
	// longer cached.
	ps := make([]*person, 2*bpVolatileAfter)
	for i := range ps {
		ps[i] = &person{age: int64(i)}
		onHeap(ps[i])
		a.next = ps[i]
		if got, want := sorted(reachable([]any{a}, true)), set(words(a), words(ps[i])); !slices.Equal(got, want) {
			t.Fatalf("change %d: D = %x, want %x", i, got, want)
		}
	}
	if e := bpSlot(cacheKey{objKey{uintptr(unsafe.Pointer(a)), reflect.TypeFor[person](), 1}, 1}).Load(); e == nil || !e.volatile {
		t.Errorf("an object changed at every call is still cached")
	}
}

// The first walk of an object is not cached, and allocates nothing: a test
// counting the allocations of one call on new objects counts none of
// racekit's.
func TestBarrierFirstWalkAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race sync.Pool drops walkers at random: the pool allocates")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	graph := func() []any {
		a := &person{age: 1, next: &person{age: 2, next: &person{age: 3}}}
		s := []*person{a, a.next}
		onHeap(a, &s)
		return []any{a, &s}
	}
	walk := func(vals []any) {
		w := getWalker()
		w.reachable(vals, true, true)
		putWalker(w)
	}
	walk(graph()) // the walker's buffers
	var graphs [16][]any
	for i := range graphs {
		graphs[i] = graph()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	before := m.Mallocs
	for _, g := range graphs {
		walk(g)
	}
	runtime.ReadMemStats(&m)
	if n := m.Mallocs - before; n != 0 {
		t.Errorf("first walks of 16 new object graphs: %d allocations, want 0", n)
	}
	for _, g := range graphs[:2] {
		walk(g) // met again: cached
	}
	runtime.ReadMemStats(&m)
	if m.Mallocs == before {
		t.Errorf("second walks allocated nothing: not cached")
	}
}

// ---- differential test against a reference walk ----

type gNode struct {
	a   int32
	b   bool
	p   *gNode
	s   []*gNode
	m   map[int]int
	i   any
	arr [2]int16
	c   chan int
	str string
	q   *gLeaf
	bs  []byte
	sm  []gSmall
}

type gSmall struct {
	a int32
	b int16
}

type gLeaf struct {
	x, y int64
	z    byte
}

// refReachable computes D by breadth-first search over reflect.Values:
// objects at hops 1..barrierDepth, each object's words and whole-accessed
// parts (and the words of array elements), maps and channels as objects.
func refReachable(vals []any) []uint64 {
	out := map[uint64]bool{}
	type item struct {
		v   reflect.Value // addressable
		hop int
	}
	best := map[[3]uint64]int{}
	var queue []item
	push := func(v reflect.Value, hop int) {
		k := [3]uint64{uint64(v.UnsafeAddr()), uint64(uintptr(unsafe.Pointer(reflect.ValueOf(v.Type()).Pointer()))), 0}
		if h, ok := best[k]; ok && h <= hop {
			return
		}
		best[k] = hop
		queue = append(queue, item{v, hop})
	}
	wordsOf := func(v reflect.Value) {
		for off := uintptr(0); off < v.Type().Size(); off += 8 {
			out[uint64(v.UnsafeAddr()+off)] = true
		}
	}
	var visit func(v reflect.Value, hop int, add bool)
	visit = func(v reflect.Value, hop int, add bool) {
		if v.Type().Size() == 0 {
			return
		}
		switch v.Kind() {
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				visit(v.Field(i), hop, add)
			}
			return
		case reflect.Array:
			for i := 0; i < elems(v.Type().Elem(), v.Len()); i++ {
				if add {
					wordsOf(v.Index(i))
				}
				visit(v.Index(i), hop, add)
			}
			return
		}
		if add {
			out[uint64(v.UnsafeAddr())] = true
		}
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() && hop < barrierDepth {
				push(v.Elem(), hop+1)
			}
		case reflect.Slice:
			if hop < barrierDepth {
				for i := 0; i < elems(v.Type().Elem(), v.Len()); i++ {
					push(v.Index(i), hop+1)
				}
			}
		case reflect.Map, reflect.Chan:
			if !v.IsNil() && hop < barrierDepth {
				out[uint64(v.Pointer())] = true
				if v.Kind() == reflect.Chan {
					out[uint64(v.Pointer())+1] = true
				}
			}
		case reflect.Interface:
			if !v.IsNil() {
				visit(v.Elem(), hop, false)
			}
		}
	}
	for _, x := range vals {
		if x != nil {
			visit(reflect.ValueOf(x), 0, false)
		}
	}
	for len(queue) > 0 {
		// Breadth first: an object is walked at its smallest hop.
		slices.SortStableFunc(queue, func(a, b item) int { return a.hop - b.hop })
		it := queue[0]
		queue = queue[1:]
		k := [3]uint64{uint64(it.v.UnsafeAddr()), uint64(uintptr(unsafe.Pointer(reflect.ValueOf(it.v.Type()).Pointer()))), 0}
		if best[k] < it.hop {
			continue
		}
		wordsOf(it.v)
		visit(it.v, it.hop, true)
	}
	var d []uint64
	for a := range out {
		d = append(d, a)
	}
	slices.Sort(d)
	return d
}

// elems is how many of n elements of type t are walked: all if they may
// hold pointers, else at most barrierMaxElems.
func elems(t reflect.Type, n int) int {
	var ptrs func(t reflect.Type) bool
	ptrs = func(t reflect.Type) bool {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Chan, reflect.Interface:
			return true
		case reflect.Struct:
			for i := 0; i < t.NumField(); i++ {
				if ptrs(t.Field(i).Type) {
					return true
				}
			}
		case reflect.Array:
			return t.Len() > 0 && ptrs(t.Elem())
		}
		return false
	}
	if ptrs(t) {
		return n
	}
	return min(n, barrierMaxElems)
}

// genGraph builds n nodes with random links (cycles included) and returns
// operands for a call: pointers, values, slices, interfaces.
func genGraph(r *rand.Rand, n int) ([]*gNode, []any) {
	nodes := make([]*gNode, n)
	for i := range nodes {
		nodes[i] = &gNode{a: int32(i), str: "s"}
	}
	pick := func() *gNode {
		if r.IntN(3) == 0 {
			return nil
		}
		return nodes[r.IntN(n)]
	}
	for _, x := range nodes {
		x.p = pick()
		if r.IntN(3) == 0 {
			for range r.IntN(3) {
				x.s = append(x.s, pick())
			}
		}
		if r.IntN(4) == 0 {
			x.m = map[int]int{1: 1}
		}
		switch r.IntN(4) {
		case 0:
			x.i = pick()
		case 1:
			x.i = gLeaf{x: 1}
		case 2:
			x.i = &gLeaf{}
		}
		if r.IntN(5) == 0 {
			x.c = make(chan int)
		}
		if r.IntN(3) == 0 {
			x.q = &gLeaf{}
		}
		if r.IntN(3) == 0 {
			x.bs = make([]byte, r.IntN(40))
		}
		if r.IntN(4) == 0 {
			x.sm = make([]gSmall, r.IntN(20))
		}
	}
	var vals []any
	for range 1 + r.IntN(3) {
		x := nodes[r.IntN(n)]
		switch r.IntN(6) {
		case 0:
			vals = append(vals, x)
		case 1:
			vals = append(vals, *x)
		case 2:
			vals = append(vals, []*gNode{x, pick()})
		case 3:
			vals = append(vals, any(x.i))
		case 4:
			vals = append(vals, struct{ p *gNode }{x})
		case 5:
			vals = append(vals, x.m, x.c, x.q)
		}
	}
	return nodes, vals
}

// The walk, with and without the cache, against the reference walk on
// random object graphs, also after random changes to the graphs.
func TestBarrierDifferential(t *testing.T) {
	count := 3000
	if testing.Short() {
		count = 300
	}
	exact := 0
	for seed := range count {
		r := rand.New(rand.NewPCG(uint64(seed), 9))
		nodes, vals := genGraph(r, 1+r.IntN(5))
		for round := range 6 { // enough changes for objects to turn volatile
			want := refReachable(vals)
			for _, cache := range []bool{false, true} {
				got := sorted(reachable(vals, cache))
				if len(want) <= barrierMaxAddrs {
					if !slices.Equal(got, want) {
						t.Fatalf("seed %d round %d cache %v: D =\n %x\nreference\n %x", seed, round, cache, got, want)
					}
					continue
				}
				// Cut at the bound: a subset of the reference's D.
				if len(got) != barrierMaxAddrs {
					t.Fatalf("seed %d: |D| = %d over a reference of %d", seed, len(got), len(want))
				}
				for _, a := range got {
					if _, ok := slices.BinarySearch(want, a); !ok {
						t.Fatalf("seed %d: %x is not reachable", seed, a)
					}
				}
			}
			if len(want) <= barrierMaxAddrs {
				exact++
			}
			// Change some links: the cached walks must see it.
			for range 1 + r.IntN(2) {
				x := nodes[r.IntN(len(nodes))]
				switch r.IntN(3) {
				case 0:
					x.p = nodes[r.IntN(len(nodes))]
				case 1:
					x.s = append(x.s, nodes[r.IntN(len(nodes))])
				case 2:
					x.i = nodes[r.IntN(len(nodes))]
				}
			}
		}
	}
	if exact < count {
		t.Errorf("only %d of %d rounds were below the bound", exact, 6*count)
	}
	t.Logf("%d of %d rounds compared exactly (the others over the bound)", exact, 6*count)
}

// CallBegin and CallEnd record a BarrierPair: MethodBegin with D, the
// events of callbacks in between, MethodEnd; CallEnd1 returns the value.
func TestBarrierEvents(t *testing.T) {
	p, q := &person{age: 1}, &person{age: 2}
	onHeap(p, q)
	var got int
	tr := record(t, true, func(site uint32) {
		CallBegin(site, p)
		W(&p.age, site+1, true) // a callback's write inside the call
		CallEnd(site)
		got = CallEnd1(CallBegin(site, 42), 7)
		CallEnd1V(CallArg(p, site, q), site) // an operand evaluated once
	})
	if got != 7 {
		t.Errorf("CallEnd1 returned %d", got)
	}
	var kinds []string
	var ds [][]uint64
	for _, e := range tr.Events {
		switch e.Op {
		case trace.OpMethodBegin, trace.OpMethodEnd, trace.OpWrite:
			kinds = append(kinds, e.Op.String())
			if e.Op == trace.OpMethodBegin {
				ds = append(ds, e.Addrs)
			}
		}
	}
	if want := []string{"call", "w", "ret", "call", "ret", "call", "ret"}; !slices.Equal(kinds, want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	if !slices.Equal(sorted(ds[0]), words(p)) || len(ds[1]) != 0 || !slices.Equal(sorted(ds[2]), set(words(p), words(q))) {
		t.Errorf("D %x, %x and %x, want %x, none and %x", ds[0], ds[1], ds[2], words(p), set(words(p), words(q)))
	}
}

// RACEKIT_BARRIERS=0 (barriersOn false) records no BarrierPair.
func TestBarrierOff(t *testing.T) {
	barriersOn = false
	defer func() { barriersOn = true }()
	p := &person{}
	tr := record(t, true, func(site uint32) {
		CallBegin(site, p)
		CallEnd(site)
		CallEnd1V(CallArg(p, site), site)
	})
	for _, e := range tr.Events {
		if e.Op == trace.OpMethodBegin || e.Op == trace.OpMethodEnd {
			t.Fatalf("recorded %v with BarrierPairs off", e.Op)
		}
	}
}

// A sampled run records no BarrierPair (no detector it may feed reads
// them), unless RACEKIT_BARRIERS=1; switching sampling off restores the
// environment's setting.
func TestBarrierSampled(t *testing.T) {
	defer func(env string) { barriersEnv = env; resetSampling() }(barriersEnv)
	p := &person{}
	count := func() (n int) {
		tr := record(t, true, func(site uint32) {
			CallBegin(site, p)
			CallEnd(site)
		})
		for _, e := range tr.Events {
			if e.Op == trace.OpMethodBegin || e.Op == trace.OpMethodEnd {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		env, sampler string
		want         int
	}{{"", "", 2}, {"", "tl-ad", 0}, {"1", "tl-ad", 2}, {"0", "", 0}, {"", "", 2}} {
		barriersEnv = c.env
		if err := setSampler(c.sampler, 1, ""); err != nil {
			t.Fatal(err)
		}
		if got := count(); got != c.want {
			t.Errorf("RACEKIT_BARRIERS=%q, sampler %q: %d BarrierPair events, want %d", c.env, c.sampler, got, c.want)
		}
	}
}

func TestBarrierDisabled(t *testing.T) {
	if Enabled() {
		t.Skip("traced")
	}
	p := &person{}
	if allocs := testing.AllocsPerRun(100, func() { CallEnd(CallBegin(1, p).site) }); allocs != 0 {
		t.Errorf("a disabled BarrierPair allocates %v times", allocs)
	}
}

// BenchmarkBarrier measures BarrierPairs (recorded, with the writer
// running) against their baseline in the same run: a loop of
// bufio.Scanner calls bare, and with each Bytes call a BarrierPair (the
// Scanner's token changes at every call: its root is walked each time,
// what it points to comes from the cache); a BarrierPair on an object that
// does not change (cached); and the walk alone, without the cache.
func BenchmarkBarrier(b *testing.B) {
	benchStart(b, true)
	text := strings.Repeat("racekit io subject line\n", 1<<16)
	scan := func(b *testing.B, bracket bool) {
		sc := bufio.NewScanner(strings.NewReader(text))
		n := 0
		for i := 0; i < b.N; i++ {
			if !sc.Scan() {
				sc = bufio.NewScanner(strings.NewReader(text))
				sc.Scan()
			}
			if bracket {
				CallBegin(1, sc)
			}
			n += len(sc.Bytes())
			if bracket {
				CallEnd(1)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	}
	b.Run("scanner-bare", func(b *testing.B) { scan(b, false) })
	b.Run("scanner", func(b *testing.B) { scan(b, true) })
	p := &account{owner: &person{}, hist: make([]int64, 4), tags: map[string]int{}}
	b.Run("cached", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			CallBegin(1, p)
			CallEnd(1)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	})
	b.Run("walk", func(b *testing.B) {
		w := getWalker()
		for i := 0; i < b.N; i++ {
			w.reachable([]any{p}, false, true)
			w.seen = w.seen[:0]
			clear(w.set[:])
		}
		putWalker(w)
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "walks/s")
	})
}

// pointerShaped agrees with where the toolchain puts a value in an
// interface: in the data word itself, or in a box the word points to. The
// types include those reflect.StructOf and ArrayOf make (go.uber.org/fx's
// parameter structs: a zero-size field and a pointer, which crashed the
// walk when taken for a boxed value).
func TestPointerShaped(t *testing.T) {
	type zero struct{}
	p := new(int)
	pv := reflect.ValueOf(p)
	made := func(fs ...reflect.StructField) reflect.Value {
		v := reflect.New(reflect.StructOf(fs)).Elem()
		for i, f := range fs {
			if f.Type == pv.Type() {
				v.Field(i).Set(pv)
			}
		}
		return v
	}
	zf := reflect.StructField{Name: "Z", Type: reflect.TypeFor[zero]()}
	pf := reflect.StructField{Name: "P", Type: pv.Type()}
	sf := reflect.StructField{Name: "S", Type: reflect.TypeFor[string]()}
	arr := reflect.New(reflect.ArrayOf(1, pv.Type())).Elem()
	arr.Index(0).Set(pv)
	for _, v := range []reflect.Value{
		pv,
		reflect.ValueOf(struct{ P *int }{p}),
		reflect.ValueOf(struct {
			_ zero
			P *int
		}{P: p}),
		reflect.ValueOf([1]*int{p}),
		reflect.ValueOf(struct{ A [1]*int }{[1]*int{p}}),
		reflect.ValueOf(struct {
			P *int
			_ zero
		}{P: p}), // trailing zero-size field: padded to two words
		reflect.ValueOf(uintptr(1)),
		reflect.ValueOf("s"),
		reflect.ValueOf(struct{ A, B *int }{p, p}),
		made(zf, pf),
		made(pf),
		made(zf, pf, sf),
		arr,
	} {
		// Direct when the data word is the value's first word (each
		// value's first word is non-nil).
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		first := *(*unsafe.Pointer)(c.Addr().UnsafePointer())
		x := v.Interface()
		direct := (*[2]unsafe.Pointer)(unsafe.Pointer(&x))[1] == first
		if got := pointerShaped(v.Type()); got != direct {
			t.Errorf("pointerShaped(%v) = %v, want %v", v.Type(), got, direct)
		}
	}
}
