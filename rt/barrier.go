package rt

import (
	"os"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// BarrierPairs (RDIT, thesis chapter 4). A call from traced code into code
// that is not traced (the standard library, excluded packages) hides what
// the callee does: it may read and write, and synchronize through, any
// memory its receiver and arguments reach. The instrumenter brackets such
// a call as
//
//	rt.CallBegin(site, receiver, args...); f(args...); rt.CallEnd(site)
//
// (or rt.CallEnd1(rt.CallBegin(site, ...), f(args...)) inside an
// expression), and rt records a MethodBegin whose Addrs are D, the
// addresses reachable from the operands (section 4.4.3), and a MethodEnd.
// The detector rdit orders BarrierPairs whose D intersect, and each with
// the accesses and synchronization on its D (Algorithm 5).
//
// D holds the addresses the access hooks record for the memory reached:
// for each object reached through a pointer, a slice, or an interface
// holding a pointer, the address of every 8-byte word of the object (rt.R
// and rt.W record a wide value one event per word) and of every scalar,
// pointer, string, slice header or interface inside it (rt.R1 and rt.W1
// record a field at its own address); a map as one object (its runtime
// pointer, as rt.MR and rt.MW name it); a channel as its two sync objects
// c and c+1 (see chan.go). The operands' own storage is not in D (the
// callee gets copies), nor is memory behind a string (immutable), a
// function value's closure (opaque to reflect), a map's entries (walking
// a map another goroutine writes would crash the program), or the box of
// an interface holding a non-pointer value (immutable). Pointers are
// followed barrierDepth hops from the operands, and D is cut at
// barrierMaxAddrs addresses, in the order of the walk (each operand's
// objects depth first, an object's own words before what it points to).
// Of a slice or array whose elements hold no pointers (a byte buffer) only
// the first barrierMaxElems elements are in D: hidden synchronization goes
// through words that are read and written as flags, counters or pointers,
// and recording every byte of every buffer handed to the standard library
// would cost more than the rest of the trace (the bufio.Scanner of
// e2e/testdata/subjects/io made the run 20 times slower). Beyond the
// bounds rdit may order less than the hidden code could, and so report a
// race that is not one; within them it orders everything the callee can
// reach.
//
// Each object is walked once per change (section 4.4.3: the object tree
// is static most of the time). The walk from each object that may hold
// pointers, at each distance from the operands, is cached with the words
// that decided it: every pointer, slice header, interface and map or
// channel word read on the way, its own and those of the objects below it
// (its edges). A later call reaching the same object, as the same type
// and length at the same distance, re-reads only those words; if none
// changed, the walk would visit the same objects, so its addresses are
// reused. This is exact, where the thesis' version (each object walked
// once, updates recovered from the trace's writes offline) ignores updates
// made inside untraced code: a change anywhere on the tree, by any
// goroutine, traced or not, is seen by the next call. An object whose
// walk changes at every call (a bufio.Scanner's token) is marked volatile
// after bpVolatileAfter changes and walked every time, what it points to
// still cached. The cache is global (objects are shared by goroutines), a
// fixed table of entries published atomically. It holds addresses as
// integers, never pointers: it keeps nothing alive, and escape analysis
// lets the operands stay where they were (on the stack), so instrumenting
// a call adds no allocation to the program. Reading an entry's words is
// safe: they are checked in the order of the walk, and each lies in an
// object the current call reaches (see valid).
//
// Caveat: the walk reads the operands' memory without synchronization
// before the callee runs. If another goroutine writes a multi-word value
// (a slice header, an interface) at that moment, which the program itself
// may do safely under a lock the callee takes, the walk may see a torn
// value and follow a bad pointer. Panics are recovered (D is cut short);
// a fault at an unmapped address would kill the program.

const (
	barrierDepth    = 3  // pointer hops followed from the operands
	barrierMaxAddrs = 64 // bound on |D|
	barrierMaxElems = 16 // elements of a pointer-free slice or array walked
	bpCacheSize     = 1024
)

// barriersOn: RACEKIT_BARRIERS=0 turns BarrierPairs off at run time (the
// program then records what it did before they existed), to measure what
// they cost or to save it when rdit is not used. A sampled run records
// none either (setSampler): BarrierPairs are RDIT's, no detector of the
// happens-before family reads them, and racekit refuses the predictive
// detectors on a sampled recording (a dropped write would let a read be
// predicted to see another value); RACEKIT_BARRIERS=1 keeps them.
var (
	barriersEnv = os.Getenv("RACEKIT_BARRIERS")
	barriersOn  = barriersEnv != "0"
)

// Barrier is the token CallBegin returns, for CallEnd1.
type Barrier struct{ site uint32 }

// CallBegin records a MethodBegin at site, the start of a call into
// untraced code whose receiver and arguments (those that may hold
// pointers) are vals. The call's site names the callee (a site calls one
// function). It never panics.
func CallBegin(site uint32, vals ...any) Barrier {
	if !on || !barriersOn || !live.Load() {
		return Barrier{site}
	}
	w := getWalker()
	emitAddrs(trace.OpMethodBegin, 0, site, uint64(site), w.reachable(vals, true, true))
	putWalker(w)
	return Barrier{site}
}

// CallEnd records the MethodEnd of the call at site: the untraced call
// returned. A call that panics records none: detectors keep its
// BarrierPair open to the end of the trace.
func CallEnd(site uint32) {
	if !on || !barriersOn || !live.Load() {
		return
	}
	emit(trace.OpMethodEnd, 0, site, uint64(site))
}

// CallEnd1 is CallEnd around an untraced call with one result, in an
// expression: rt.CallEnd1(rt.CallBegin(site, ops...), f(ops...)). Go
// evaluates the two arguments left to right, so the MethodBegin is
// recorded before the call and the MethodEnd after it returns.
func CallEnd1[T any](b Barrier, v T) T {
	CallEnd(b.site)
	return v
}

// CallArg is CallBegin recorded while an operand of the call is
// evaluated, inside an expression: the untraced call x.M(a) whose receiver
// x is not simple to evaluate twice becomes
// rt.CallEnd1V(rt.CallArg(x, site, ops...).M(a), site). v is the operand
// (returned) and ops the call's other operands that hold pointers.
func CallArg[T any](v T, site uint32, ops ...any) T {
	if !on || !barriersOn || !live.Load() {
		return v
	}
	w := getWalker()
	var x any = v // on the stack: see reachable
	w.iface(unsafe.Pointer(&x), anyType, 0)
	emitAddrs(trace.OpMethodBegin, 0, site, uint64(site), w.reachable(ops, true, false))
	putWalker(w)
	return v
}

// CallEnd1V records the MethodEnd of the call at site (begun by CallArg)
// after it returned v.
func CallEnd1V[T any](v T, site uint32) T {
	CallEnd(site)
	return v
}

// reachable returns D for the operands vals, without duplicates, in the
// order of the walk (the trace writer sorts it), in w's buffer. A panic
// while walking (reflect on an unexpected value) cuts D short instead of
// reaching the program.
func (w *walker) reachable(vals []any, useCache, fresh bool) (out []uint64) {
	if fresh {
		w.addrs = w.addrBuf[:0]
	}
	w.cache = useCache
	defer func() {
		if recover() != nil {
			out = w.addrs
		}
	}()
	for _, v := range vals {
		// The walk keeps no pointer it reads (the walker and the cache
		// hold addresses as integers), so that neither vals nor what the
		// operands point to escape to the heap: instrumenting a call must
		// not add allocations to the program.
		x := v
		w.iface(unsafe.Pointer(&x), anyType, 0)
	}
	return w.addrs
}

// reachable is D for the operands vals (for tests).
func reachable(vals []any, useCache bool) []uint64 {
	w := getWalker()
	defer putWalker(w)
	return slices.Clone(w.reachable(vals, useCache, true))
}

var anyType = reflect.TypeFor[any]()

// ---- type layouts ----

// leafKind classifies the parts of a value that are accessed whole.
type leafKind uint8

const (
	lScalar leafKind = iota // no pointers (numbers, strings): its address only
	lPtr                    // a pointer: followed to elem
	lSlice                  // a slice header: followed to its elements
	lMap                    // a map: one object
	lChan                   // a channel: its sync objects
	lIface                  // an interface: followed to its dynamic value
	lOpaque                 // a func or unsafe.Pointer: its address only
	lArray                  // an array: sub repeated n times
)

type leaf struct {
	off    uintptr
	kind   leafKind
	elem   reflect.Type // lPtr, lSlice: element type; lIface: the interface type
	sub    *layout      // lArray
	n      int          // lArray
	stride uintptr      // lArray: element size
}

// layout is what the walk needs of a type: its size and its leaves
// (struct fields flattened, arrays kept as one leaf).
type layout struct {
	size   uintptr
	leaves []leaf
	ptrs   bool // some leaf leads elsewhere (not a scalar, func or unsafe.Pointer)
}

var layouts OwnMap // reflect.Type → *layout

func layoutOf(t reflect.Type) *layout {
	if l, ok := layouts.Load(t); ok {
		return l.(*layout)
	}
	l := &layout{size: t.Size()}
	l.leaves = appendLeaves(nil, t, 0)
	for _, f := range l.leaves {
		switch f.kind {
		case lPtr, lSlice, lMap, lChan, lIface:
			l.ptrs = true
		case lArray:
			l.ptrs = l.ptrs || f.sub.ptrs
		}
	}
	layouts.Store(t, l)
	return l
}

func appendLeaves(ls []leaf, t reflect.Type, off uintptr) []leaf {
	if t.Size() == 0 {
		return ls
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			ls = appendLeaves(ls, f.Type, off+f.Offset)
		}
		return ls
	case reflect.Array:
		return append(ls, leaf{off: off, kind: lArray, sub: layoutOf(t.Elem()), n: t.Len(), stride: t.Elem().Size()})
	case reflect.Pointer:
		return append(ls, leaf{off: off, kind: lPtr, elem: t.Elem()})
	case reflect.Slice:
		return append(ls, leaf{off: off, kind: lSlice, elem: t.Elem()})
	case reflect.Map:
		return append(ls, leaf{off: off, kind: lMap})
	case reflect.Chan:
		return append(ls, leaf{off: off, kind: lChan})
	case reflect.Interface:
		return append(ls, leaf{off: off, kind: lIface, elem: t})
	case reflect.Func, reflect.UnsafePointer:
		return append(ls, leaf{off: off, kind: lOpaque})
	}
	return append(ls, leaf{off: off, kind: lScalar})
}

// pointerShaped reports whether an interface holds a value of type t in
// its data word itself rather than in a box the data word points to. The
// rule is the toolchain's: since Go 1.26, any type one word long whose word
// is a pointer (struct{ dig.In; F *T }, which reflect.StructOf makes for
// go.uber.org/fx); before, pointers, maps, channels, funcs, unsafe.Pointer,
// and structs and arrays of exactly one such element.
func pointerShaped(t reflect.Type) bool {
	if wordRule {
		return t.Size() == unsafe.Sizeof(uintptr(0)) && firstWordPointer(t)
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Struct:
		return t.NumField() == 1 && pointerShaped(t.Field(0).Type)
	case reflect.Array:
		return t.Len() == 1 && pointerShaped(t.Elem())
	}
	return false
}

// firstWordPointer reports whether the first word of a t holds a pointer.
func firstWordPointer(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.Offset == 0 && f.Type.Size() > 0 {
				return firstWordPointer(f.Type)
			}
		}
	case reflect.Array:
		return t.Len() > 0 && t.Elem().Size() > 0 && firstWordPointer(t.Elem())
	}
	return false
}

// wordRule: the toolchain keeps a one-word struct of a zero-size field and
// a pointer in the interface's data word (Go 1.26's rule), as probed.
var wordRule = func() bool {
	p := new(int)
	var x any = struct {
		_ struct{}
		P *int
	}{P: p}
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&x))[1] == unsafe.Pointer(p)
}()

// ---- the walk ----

type edge struct {
	loc uintptr // the address of a word the walk read to decide where to go
	val uintptr // its value then
}

type objKey struct {
	p uintptr
	t reflect.Type
	n int
}

type walker struct {
	addrs []uint64
	edges []edge // recorded for a cache entry (rec)
	rec   bool
	cache bool
	seen  []seenObj
	full  bool
	set   [1 << bpSetBits]uint64 // the addresses in addrs (0: empty slot)

	seenBuf [16]seenObj
	addrBuf [barrierMaxAddrs]uint64 // addrs
}

// Walkers are big (their address set): they are reused.
var walkers = sync.Pool{New: func() any { return new(walker) }}

// Spare walkers: while the program counts its allocations, a walk takes a
// walker set aside when the count began, as a full buffer takes a spare
// chunk (spareChunk): after a garbage collection has emptied walkers, its
// Get allocates (a new walker, the pool's per-P array), and
// testing.AllocsPerRun(1, ...) counted 1 where go test counts 0 (e2e
// TestTestUnchanged under GOGC=1).
var spareWalkers spareSet[walker]

// spareWalkerCount is how many walkers a count starts with: one per
// goroutine walking at once (a walk while counting uses no sub-walker).
const spareWalkerCount = 4

func reserveWalkers() { spareWalkers.fill(spareWalkerCount, func() *walker { return new(walker) }) }

func getWalker() *walker {
	var w *walker
	if countingAllocs() {
		w = spareWalkers.take()
	}
	if w == nil {
		w = walkers.Get().(*walker)
	}
	w.seen, w.addrs, w.cache = w.seenBuf[:0], w.addrBuf[:0], true
	return w
}

func putWalker(w *walker) {
	clear(w.set[:])
	clear(w.seen) // no pointers kept alive by a pooled walker
	clear(w.edges)
	w.edges, w.rec, w.cache, w.full = w.edges[:0], false, false, false
	if countingAllocs() && spareWalkers.give(w, spareWalkerCount) {
		return // a Put may allocate too (the per-P array)
	}
	walkers.Put(w)
}

type seenObj struct {
	k   objKey
	hop int
}

func (w *walker) add(p unsafe.Pointer) { w.addInt(uint64(uintptr(p))) }

// addInt adds a to D unless it is there already (objects are reached
// more than once: by several operands, in fewer hops, from cached walks),
// and notes when D is full.
func (w *walker) addInt(a uint64) {
	i := (a * 0x9e3779b97f4a7c15) >> (64 - bpSetBits)
	for {
		switch w.set[i] {
		case a:
			return
		case 0:
			if len(w.addrs) >= barrierMaxAddrs {
				w.full = true
				return
			}
			w.set[i] = a
			w.addrs = append(w.addrs, a)
			return
		}
		i = (i + 1) & (1<<bpSetBits - 1)
	}
}

// bpSetBits sizes the walker's set of addresses: at least twice
// barrierMaxAddrs slots, so probes stay short.
const bpSetBits = 8

func (w *walker) edge(loc, val unsafe.Pointer) {
	if w.rec {
		w.edges = append(w.edges, edge{uintptr(loc), uintptr(val)})
	}
}

func (w *walker) edgeInt(loc unsafe.Pointer, val int) {
	if w.rec {
		w.edges = append(w.edges, edge{uintptr(loc), uintptr(val)})
	}
}

// child walks the n values of type t at p, reached by a pointer hop: hop
// is their distance from the operands. Objects that may hold pointers go
// through the cache (walking the others is as cheap as a lookup).
func (w *walker) child(p unsafe.Pointer, t reflect.Type, n, hop int) {
	if p == nil || n <= 0 || w.full || t.Size() == 0 {
		return
	}
	if w.cache && layoutOf(t).ptrs {
		w.cached(p, cacheKey{objKey{uintptr(p), t, n}, hop})
		return
	}
	w.obj(p, t, n, hop, true)
}

// obj walks n consecutive values of type t at p. add: their own
// addresses go into D (false for an interface's box, which nobody
// writes).
func (w *walker) obj(p unsafe.Pointer, t reflect.Type, n, hop int, add bool) {
	// A cycle, or an object reached twice: walked again only when reached
	// in fewer hops (it may then reach more within barrierDepth).
	k := objKey{uintptr(p), t, n}
	i := slices.IndexFunc(w.seen, func(s seenObj) bool { return s.k == k })
	if i >= 0 && w.seen[i].hop <= hop {
		return
	}
	if i >= 0 {
		w.seen[i].hop = hop
	} else {
		w.seen = append(w.seen, seenObj{k, hop})
	}
	l := layoutOf(t)
	if !l.ptrs {
		n = min(n, barrierMaxElems)
		if add && l.size <= 8 && len(l.leaves) == 1 && l.leaves[0].off == 0 && l.leaves[0].kind == lScalar {
			// Scalars (a byte buffer): each element is one address.
			for i := 0; i < n && !w.full; i++ {
				w.add(unsafe.Add(p, uintptr(i)*l.size))
			}
			return
		}
	}
	for i := 0; i < n && !w.full; i++ {
		w.value(unsafe.Add(p, uintptr(i)*l.size), l, hop, add)
	}
}

// value walks one value of layout l at p.
func (w *walker) value(p unsafe.Pointer, l *layout, hop int, add bool) {
	if add {
		for off := uintptr(0); off < l.size; off += 8 {
			w.add(unsafe.Add(p, off))
		}
	}
	for i := range l.leaves {
		if w.full {
			return
		}
		f := &l.leaves[i]
		q := unsafe.Add(p, f.off)
		if add && f.kind != lArray && f.off%8 != 0 {
			w.add(q) // a narrower field inside a word, at its own address
		}
		switch f.kind {
		case lArray:
			n := f.n
			if !f.sub.ptrs {
				n = min(n, barrierMaxElems)
			}
			for j := 0; j < n && !w.full; j++ {
				w.value(unsafe.Add(q, uintptr(j)*f.stride), f.sub, hop, add)
			}
		case lPtr:
			v := *(*unsafe.Pointer)(q)
			w.edge(q, v)
			if hop < barrierDepth {
				w.child(v, f.elem, 1, hop+1)
			}
		case lSlice:
			s := (*sliceHeader)(q)
			w.edge(q, s.data)
			w.edgeInt(unsafe.Add(q, unsafe.Sizeof(uintptr(0))), s.len)
			if hop < barrierDepth {
				w.child(s.data, f.elem, s.len, hop+1)
			}
		case lMap:
			m := *(*unsafe.Pointer)(q)
			w.edge(q, m)
			if m != nil && hop < barrierDepth {
				w.add(m)
			}
		case lChan:
			c := *(*unsafe.Pointer)(q)
			w.edge(q, c)
			if c != nil && hop < barrierDepth {
				w.add(c)
				w.add(unsafe.Add(c, 1))
			}
		case lIface:
			w.iface(q, f.elem, hop)
		}
	}
}

type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

// iface walks the dynamic value of the interface of type it at q. The
// value is part of the interface (no hop): a pointer-shaped one is the
// data word itself, any other sits in a box the data word points to.
func (w *walker) iface(q unsafe.Pointer, it reflect.Type, hop int) {
	words := (*[2]unsafe.Pointer)(q)
	tw, dw := words[0], words[1]
	w.edge(q, tw)
	w.edge(unsafe.Add(q, unsafe.Sizeof(uintptr(0))), dw)
	if tw == nil {
		return
	}
	// The dynamic type: the type word of an empty interface, the second
	// word of the itab of another (internal/abi.ITab: Inter, Type, ...),
	// made into an empty interface holding no data for reflect.TypeOf.
	typ := uintptr(tw)
	if it.NumMethod() > 0 {
		typ = *(*uintptr)(unsafe.Add(tw, unsafe.Sizeof(uintptr(0))))
	}
	dyn := typeOfWord(typ)
	if dyn.Size() == 0 {
		return
	}
	if pointerShaped(dyn) {
		w.value(unsafe.Add(q, unsafe.Sizeof(uintptr(0))), layoutOf(dyn), hop, false)
		return
	}
	w.obj(dw, dyn, 1, hop, false)
}

// typeOfWord returns the type whose runtime type descriptor is at typ. The
// descriptor's address goes through an integer, so that escape analysis
// does not take the interface words the walk reads for pointers that
// escape (which would move every operand to the heap).
func typeOfWord(typ uintptr) reflect.Type {
	var e any
	(*[2]uintptr)(unsafe.Pointer(&e))[0] = typ
	return reflect.TypeOf(e)
}

// ---- the cache ----

// A cache entry holds the walk from one object, reached at one hop: its
// addresses and every word the walk read on the way (its own, and those of
// the entries it used for the objects below it: one validation covers the
// subtree). An object whose walk keeps changing (a bufio.Scanner's token)
// is marked volatile: walked every time, with the objects below it still
// looked up.
type bpEntry struct {
	key      cacheKey
	edges    []edge
	addrs    []uint64
	changes  int  // consecutive walks of key that found the previous one stale
	volatile bool // changes reached bpVolatileAfter: no longer cached
}

type cacheKey struct {
	objKey
	hop int
}

const bpVolatileAfter = 4

// valid reports whether none of the words that decided e's walk changed.
// The edges are in the order of the walk, so each word read is inside an
// object that is alive: the one the call reaches now at the key's
// address, or one that a word already found unchanged points to.
func (e *bpEntry) valid() bool {
	for _, x := range e.edges {
		if loadWord(x.loc) != x.val {
			return false
		}
	}
	return true
}

// loadWord reads the word at address a (of a live object: see valid).
func loadWord(a uintptr) uintptr {
	return *(*uintptr)(*(*unsafe.Pointer)(unsafe.Pointer(&a)))
}

// bpSeen holds, per slot of bpCache, the hash of the last key walked there
// for the first time: a walk is cached the second time its object is met.
// Caching allocates (an entry, copies of its edges and addresses), and
// the first walk of an object need not: a test that counts the
// allocations of one call on new objects (runtime.ReadMemStats around it,
// as testing.AllocsPerRun does) counts none of racekit's (jellydator/
// ttlcache's Test_Cache_Get counted 51 to 68 where it wants 0; corpus,
// session 25).
var (
	bpCache          [bpCacheSize]OwnPointer[bpEntry]
	bpSeen           [bpCacheSize]OwnUint64
	bpHits, bpMisses OwnInt64 // for tests
)

// Allocation counts. A program that counts its own allocations
// (runtime.ReadMemStats before and after a call, as testing.AllocsPerRun
// does) would count racekit's too, which the Go race detector does not
// add. While one is counting, BarrierPairs' walks are not cached (caching
// allocates); only their speed differs. A traced call of
// runtime.ReadMemStats toggles it (ReadMemStats: the first call of a pair
// opens the count, the second closes it), and rttest's AllocsPerRun holds
// it for its runs.
var (
	memStatsOpen  OwnBool
	allocsCounted OwnInt32
)

func countingAllocs() bool { return memStatsOpen.Load() || allocsCounted.Load() > 0 }

// ReadMemStats is runtime.ReadMemStats(m), which opens or closes a count of
// the program's allocations. racekit's buffers are not in the heap it
// reports (arena.go). A call that is a statement of its own is rewritten
// to MemStatsBefore(); runtime.ReadMemStats(m); MemStatsAfter() instead, so
// that the program's stack holds no frame of racekit's while the runtime
// reads (a crash there prints it: held-out x/telemetry's crash monitor
// test compares such a stack).
func ReadMemStats(m *runtime.MemStats) {
	MemStatsBefore()
	runtime.ReadMemStats(m)
	MemStatsAfter()
}

// MemStatsBefore comes before a call of runtime.ReadMemStats: before the
// first of a pair, it reserves what the count's recording needs.
func MemStatsBefore() {
	if !memStatsOpen.Load() {
		reserveForCount() // before the count opens: its allocations are not counted
	}
}

// MemStatsAfter comes after a call of runtime.ReadMemStats: it opens the
// count, or closes it.
func MemStatsAfter() {
	for {
		open := memStatsOpen.Load()
		if memStatsOpen.CompareAndSwap(open, !open) {
			return
		}
	}
}

// CountAllocs holds (+1) or releases (-1) a count of the program's
// allocations (rttest.AllocsPerRun).
func CountAllocs(delta int32) {
	if delta > 0 {
		reserveForCount()
	}
	holdWriter(delta)
}

// reserveForCount sets aside what racekit's recording may need while the
// program counts its allocations: buffer chunks and walkers.
func reserveForCount() {
	reserveChunks()
	reserveWalkers()
	if on && live.Load() {
		// Room for the frames of the counted calls: a warm-up call (as
		// testing.AllocsPerRun's) may have shown frames that the counted
		// call, whose accesses dedup drops, keeps pending (enter).
		g := cur()
		g.pend = slices.Grow(g.pend, pendPerCount)
		g.redo = slices.Grow(g.redo, redoPerCount) // stolen's
	}
}

// A count starts with room for pendPerCount pending frames and for
// redoPerCount records of a hook that a steal makes it write again.
const (
	pendPerCount = 64
	redoPerCount = 64
)

func bpHash(k cacheKey) uint64 {
	h := uint64(uintptr(k.p))>>3 ^ uint64(k.n)*0x9e3779b97f4a7c15 ^ uint64(k.hop)<<40
	return h ^ h>>29
}

func bpSlot(k cacheKey) *OwnPointer[bpEntry] {
	return &bpCache[bpHash(k)&(bpCacheSize-1)]
}

// cached adds the addresses of the walk from object k, reusing the
// cached walk if the words it read are unchanged.
func (w *walker) cached(p unsafe.Pointer, k cacheKey) {
	h := bpHash(k)
	slot := &bpCache[h&(bpCacheSize-1)]
	e := slot.Load()
	if e != nil && e.key != k {
		e = nil
	}
	if e != nil && !e.volatile && e.valid() {
		bpHits.Add(1)
		w.addAll(e.addrs)
		if w.rec {
			w.edges = append(w.edges, e.edges...)
		}
		return
	}
	uncached := e != nil && e.volatile || countingAllocs()
	if seen := &bpSeen[h&(bpCacheSize-1)]; e == nil && !uncached && seen.Load() != h|1 {
		seen.Store(h | 1) // met for the first time
		uncached = true
	}
	if uncached {
		w.obj(p, k.t, k.n, k.hop, true)
		return
	}
	bpMisses.Add(1)
	sub := getWalker()
	defer putWalker(sub)
	sub.rec = true
	sub.obj(p, k.t, k.n, k.hop, true)
	ne := &bpEntry{key: k}
	if e != nil {
		ne.changes = e.changes + 1
	}
	if ne.volatile = ne.changes >= bpVolatileAfter; !ne.volatile {
		ne.edges, ne.addrs = slices.Clone(sub.edges), slices.Clone(sub.addrs)
	}
	slot.Store(ne)
	w.addAll(sub.addrs)
	if w.rec {
		w.edges = append(w.edges, sub.edges...)
	}
}

func (w *walker) addAll(as []uint64) {
	for _, a := range as {
		if w.full {
			return
		}
		w.addInt(a)
	}
}
