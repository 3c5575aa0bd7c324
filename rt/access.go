package rt

import (
	"reflect"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// maxRangeEvents bounds the word events one access to a composite value or
// a range of elements records while rt's TREE filter runs (it filters word
// events; see rangesOn), and the events of a walk (RJSON, RFmt). Races
// beyond the bound are missed, never invented.
const maxRangeEvents = 256

// rangesOn reports whether an access of more than rangeMinWords words is
// recorded as one range event (trace.OpReadRange, OpWriteRange): whenever
// the TREE filter does not run in the writer, unless RACEKIT_RANGES=0
// (wordEvents; the overhead benchmark's baseline) asks for word events.
func rangesOn() bool { return !treeOn && !wordEvents }

// rangeMinWords: an access of this many words or fewer records a word
// event each, which dedup drops word by word when repeated in one epoch (a
// small struct read in a loop); a range event is dropped only as a whole
// repeat (rangeRepeat).
const rangeMinWords = 4

var wordEvents bool

// access records a read or write of size bytes at p. Detectors match
// accesses by address, so an access wider than a word stands for an access
// of each 8-byte word it covers, recorded as one range event (a span of
// words; trace.Span): a field stored at any of those offsets then
// conflicts with the whole-value access, as it does in memory. (A narrower
// field at another offset inside the value is missed.)
func access(op trace.Op, p unsafe.Pointer, size uintptr, site uint32) {
	accessAddr(op, uint64(uintptr(p)), size, site)
}

// accessAddr is access for an address held as an integer.
func accessAddr(op trace.Op, a uint64, size uintptr, site uint32) {
	if a == 0 || size == 0 || !live.Load() {
		return
	}
	// cur and recorded's hit, and onStack, by hand, with one getg: this
	// is the hottest path.
	var g *gstate
	if goidOff != 0 {
		gp := getg()
		if stackKnown && inStack(gp, a) {
			return // in the goroutine's own stack (onStack)
		}
		id := *(*uint64)(unsafe.Add(gp, goidOff))
		if s := gtab[id&(gtabSize-1)].Load(); s != nil && s.goid == id {
			g = s
		}
	}
	if g == nil {
		g = cur()
	}
	if sampling && g.sampleSkip() {
		// An unsampled frame (sample.go), before dedup: the table must
		// hold only what was recorded, or a sampled access of the word
		// later in the epoch would be taken as recorded.
		return
	}
	if size <= 8 && dedup {
		if t := g.seen; t != nil && generation.Load() == g.gen {
			e := &t.entries[(a>>3)&uint64(len(t.entries)-1)]
			if e.addr == a&^7 && e.epoch == g.epoch && e.covers(a, op) {
				return
			}
		}
		if g.recorded(a, op) {
			return
		}
	} else if gen := generation.Load(); gen != g.gen {
		g.newGeneration(gen)
	}
	if size <= 8 {
		g.plain(op, trace.FlagValueUnknown, site, a, 0)
		return
	}
	if rangesOn() && size > rangeMinWords*8 {
		g.putRange(op, site, a, 8, (size+7)/8)
		return
	}
	n := min((size+7)/8, maxRangeEvents)
	put := false
	for i := uintptr(0); i < n; i++ {
		put = g.putWord(op, site, a+uint64(i*8), put)
	}
	if put {
		g.commit(false)
	}
}

// putWord puts the event of one word of a multi-word access unless dedup
// drops it as a repeat (the word's own table entry, as for a one-word
// access), preparing the records before the first event put (put false);
// it reports whether an event has been put. The caller commits if so.
func (g *gstate) putWord(op trace.Op, site uint32, addr uint64, put bool) bool {
	if dedup && g.recorded(addr, op) {
		return put
	}
	if !put {
		g.prepPlain()
		g.putKey(g.k)
	}
	g.put(op, trace.FlagValueUnknown, site, addr)
	return true
}

// rangeAccess records an access to n consecutive elements of elem bytes
// each starting at p: one range event (or, for a few words and without
// ranges, one event per element and per extra word of a wide element, up
// to maxRangeEvents).
func rangeAccess(op trace.Op, p unsafe.Pointer, elem uintptr, n int, site uint32) {
	a := uint64(uintptr(p))
	if p == nil || n <= 0 || elem == 0 || !live.Load() || onStack(a) {
		return
	}
	g := cur()
	if gen := generation.Load(); gen != g.gen {
		g.newGeneration(gen)
	}
	if sampling && g.sampleSkip() {
		return // an unsampled frame (sample.go)
	}
	if rangesOn() && uintptr(n)*((elem+7)/8) > rangeMinWords {
		g.putRange(op, site, a, elem, uintptr(n))
		return
	}
	put := false
	left := maxRangeEvents // words looked at, recorded or dropped as repeats
	for i := 0; i < n && left > 0; i++ {
		for off := uintptr(0); off < elem && left > 0; off += 8 {
			put = g.putWord(op, site, a+uint64(uintptr(i)*elem+off), put)
			left--
		}
	}
	if put {
		g.commit(false)
	}
}

// putRange records one range event for an access (op OpRead or OpWrite)
// of count elements of stride bytes from a: the word accesses trace.Span
// lists. An element wider than a span's stride allows is recorded as a
// range of words of its own.
func (g *gstate) putRange(op trace.Op, site uint32, a uint64, stride, count uintptr) {
	if uint64(stride) > trace.MaxSpanStride {
		for i := uintptr(0); i < count; i++ {
			g.putRange(op, site, a+uint64(i*stride), 8, (stride+7)/8)
		}
		return
	}
	n := min(uint64(count), trace.MaxSpanBytes/uint64(stride), trace.MaxSpanCount)
	sp, ok := trace.MakeSpan(uint64(stride), n)
	if !ok {
		return
	}
	g.putSpan(op, site, a, sp)
}

// putSpan records one range event of span sp from a.
func (g *gstate) putSpan(op trace.Op, site uint32, a uint64, sp trace.Span) {
	n := sp.Count()
	if dedup && g.rangeRepeat(a, sp, op == trace.OpWrite) {
		return
	}
	rop := op.RangeOp()
	g.prepPlain()
	// Marked after the key is chosen (prepPlain), as put marks a word
	// (touched.go): the span's every granule, holes of a wide stride too.
	g.markTouchedRange(a, a+n*sp.Stride())
	g.putKey(g.k)
	g.put(rop, 0, site, a)
	g.put(opVal, 0, 0, uint64(sp))
	g.countRange(rop, site, sp)
	g.commit(false)
}

// rangeSeen is dedup for range events: the last ones of a goroutine's
// epoch, direct-mapped by first address. A range event that repeats one of
// them (same address and span, a read after a read or write) adds nothing,
// as a repeated word does not: a value of a few words copied in a loop
// between two synchronizations (a ray tracer's rays) would otherwise
// record each copy.
type rangeSeen [16]struct { // 16: rangeRepeat's hash takes 3 bits, for 8 sets of 2
	addr  uint64
	span  trace.Span
	epoch uint32
	write bool
}

// rangeRepeat reports whether g recorded the range of span sp at a, with
// write covering a read, in its current epoch; if not, it notes this one.
func (g *gstate) rangeRepeat(a uint64, sp trace.Span, write bool) bool {
	t := g.rseen
	if t == nil {
		t = new(rangeSeen)
		g.rseen = t
	}
	// Hashed: the elements of a slice of structs are often a power of two
	// bytes apart, which the low bits of their addresses would map to a
	// few slots. Two ways, the latest first: a copy's destination and
	// source, noted one after the other, may hash to one set (one time in
	// eight), and the second then pushed the first out, so a repeated
	// copy recorded both again.
	set := t[(a*0x9E3779B97F4A7C15)>>61*2:][:2]
	for i := range set {
		if e := &set[i]; e.addr == a && e.span == sp && e.epoch == g.epoch && (e.write || !write) {
			return true
		}
	}
	set[1] = set[0]
	e := &set[0]
	e.addr, e.span, e.epoch, e.write = a, sp, g.epoch, write
	return false
}

// forgetRanges drops the ranges that overlap [a, a+size), an allocation's
// fresh memory (see forget).
func (g *gstate) forgetRanges(a, size uint64) {
	t := g.rseen
	if t == nil {
		return
	}
	for i := range t {
		e := &t[i]
		if e.span != 0 && e.addr < a+size && a < e.addr+e.span.Count()*e.span.Stride() {
			e.span = 0
		}
	}
}

// countRange adds to g's position the word accesses of a range event at
// site that counts (sched.Positional): each is an access at the
// statement under test, as in the trace a reader expands.
func (g *gstate) countRange(rop trace.Op, site uint32, sp trace.Span) {
	if ctl && siteOf(site).atOp(rop.WordOp()) {
		g.nev += int(sp.Words())
	}
}

// R records a read of *p and returns p: instrumented code reads a shared
// location x as *rt.R(&x, site, rec), rec being Enter's result in the
// enclosing function (false: a sampler skips this invocation's accesses;
// sample.go). Every access hook takes rec after its site; the controlled
// scheduler's point (ctl) is made whatever rec says.
func R[T any](p *T, site uint32, rec bool) *T {
	if ctl || on && rec { // the test alone is inlined (accessHook)
		accessHook(hookRead, unsafe.Pointer(p), unsafe.Sizeof(*p), site, rec)
	}
	return p
}

// R1 is R for a value the program only ever reads and writes whole (a
// slice header, a string, an interface, a complex number): one event at
// its first word stands for all of it.
func R1[T any](p *T, site uint32, rec bool) *T {
	if ctl || on && rec {
		accessHook(hookRead, unsafe.Pointer(p), 1, site, rec)
	}
	return p
}

// W1 is W for a value written only whole (see R1).
func W1[T any](p *T, site uint32, rec bool) *T {
	if ctl || on && rec {
		accessHook(hookWrite, unsafe.Pointer(p), 1, site, rec)
	}
	return p
}

// RW1 is RW for a value accessed only whole (see R1).
func RW1[T any](p *T, site uint32, rec bool) *T {
	if ctl || on && rec {
		accessHook(hookRead|hookWrite, unsafe.Pointer(p), 1, site, rec)
	}
	return p
}

// W records a write of *p and returns p: x = v becomes *rt.W(&x, site) = v.
func W[T any](p *T, site uint32, rec bool) *T {
	if ctl || on && rec {
		accessHook(hookWrite, unsafe.Pointer(p), unsafe.Sizeof(*p), site, rec)
	}
	return p
}

// RW records a read and then a write of *p (x += v, x++).
func RW[T any](p *T, site uint32, rec bool) *T {
	if ctl || on && rec {
		accessHook(hookRead|hookWrite, unsafe.Pointer(p), unsafe.Sizeof(*p), site, rec)
	}
	return p
}

// What an access hook does: a read, a write, or a read and then a write.
const (
	hookRead  = 1
	hookWrite = 2
)

// accessHook is the body of the access hooks above, out of line so that
// what instrumented code runs at every access is only the hook's test,
// inlined: two global loads and a branch when tracing is off, or in an
// invocation a sampler skips. (With the body in each generic hook, its
// inlining cost was 143, over the compiler's budget of 80, so every access
// was a call.) A read and write comes as RW's pair: each access's point
// right before it, so that the write's point has the write's position in
// the trace (sched.Point.Ev).
func accessHook(kind uint8, p unsafe.Pointer, size uintptr, site uint32, rec bool) {
	if kind&hookRead != 0 {
		if ctl { // controlled mode (sched.go)
			ctlRead(p, size, site)
		}
		if on && rec {
			access(trace.OpRead, p, size, site)
		}
	}
	if kind&hookWrite != 0 {
		if ctl {
			ctlWrite(p, size, site)
		}
		if on && rec {
			access(trace.OpWrite, p, size, site)
		}
	}
}

// mapPtr is the map's runtime pointer: a map is one object.
func mapPtr[M ~map[K]V, K comparable, V any](m M) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

// MR records a read of map m (m[k], range, comma-ok) and returns m.
func MR[M ~map[K]V, K comparable, V any](m M, site uint32, rec bool) M {
	if ctl || on && rec {
		mapHook(hookRead, mapPtr(m), site, rec)
	}
	return m
}

// MW records a write of map m (m[k] = v, delete, clear) and returns m.
func MW[M ~map[K]V, K comparable, V any](m M, site uint32, rec bool) M {
	if ctl || on && rec {
		mapHook(hookWrite, mapPtr(m), site, rec)
	}
	return m
}

// MRW records a read and a write of map m (m[k] += v, m[k]++).
func MRW[M ~map[K]V, K comparable, V any](m M, site uint32, rec bool) M {
	if ctl || on && rec {
		mapHook(hookRead|hookWrite, mapPtr(m), site, rec)
	}
	return m
}

// mapHook is accessHook for a map, one object: one argument fewer, and
// not inlined itself, keeps MR, MW and MRW within the inliner's budget.
//
//go:noinline
func mapHook(kind uint8, m unsafe.Pointer, site uint32, rec bool) {
	accessHook(kind, m, 1, site, rec)
}

// ctlAppend is the scheduling point of append(s, n elements), before it
// runs, with or without a trace: a write of s's first free element when
// they fit (the store can race with readers of the backing array), else a
// read of s's elements (growslice copies them to a new array that nobody
// else can see yet).
func ctlAppend[S ~[]E, E any](s S, n int, site uint32) {
	switch {
	case n <= 0:
	case cap(s)-len(s) >= n:
		ctlWrite(unsafe.Pointer(&s[:len(s)+1][len(s)]), uintptr(n)*elemSize[E](), site)
	case len(s) > 0:
		ctlRead(sliceData(s), uintptr(len(s))*elemSize[E](), site)
	}
}

func sliceData[S ~[]E, E any](s S) unsafe.Pointer {
	return unsafe.Pointer(unsafe.SliceData(s))
}

func elemSize[E any]() uintptr {
	var z E
	return unsafe.Sizeof(z)
}

// appended records the accesses of r := append(s, n elements): when r has
// a new array, the elements of s copied into it are read (as the Go race
// detector records in growslice); the n elements stored are written.
func appended[S ~[]E, E any](s, r S, n int, site uint32) {
	// (ctlAppend made the scheduling point before the append.)
	es := elemSize[E]()
	if len(s) > 0 && unsafe.SliceData(r) != unsafe.SliceData(s) {
		rangeAccess(trace.OpRead, sliceData(s), es, len(s), site)
	}
	if n > 0 && len(s)+n <= len(r) {
		rangeAccess(trace.OpWrite, unsafe.Pointer(&r[len(s)]), es, n, site)
	}
}

// grown records r's backing array as a new object when r := append(s,
// ...) allocated one: the garbage collector hands out the memory of dead
// objects again, so without it the new array's words would keep the old
// object's accesses and could race with them (the Go race detector clears
// its shadow memory in mallocgc). Recorded in unsampled code too, as
// MakeSlice is: an allocation is not an access that sampling may skip.
func grown[S ~[]E, E any](s, r S, site uint32) {
	if cap(r) > 0 && unsafe.SliceData(r) != unsafe.SliceData(s) {
		allocEvent(sliceData(r), uintptr(cap(r))*elemSize[E](), site)
	}
}

// Append is append(s, xs...) for elements of s's element type (the
// instrumenter uses AppendN when an element needs a conversion).
func Append[S ~[]E, E any](s S, site uint32, rec bool, xs ...E) S {
	if ctl { // controlled mode (sched.go): the point before the access
		ctlAppend(s, len(xs), site)
	}
	r := append(s, xs...)
	if on {
		grown(s, r, site)
		if rec {
			appended(s, r, len(xs), site)
		}
	}
	return r
}

// Elems records a read of all of s's elements and returns s: string(s) of
// a byte or rune slice reads them.
func Elems[S ~[]E, E any](s S, site uint32, rec bool) S {
	if ctl && len(s) > 0 {
		ctlRead(sliceData(s), uintptr(len(s))*elemSize[E](), site)
	}
	if on && rec && len(s) > 0 {
		rangeAccess(trace.OpRead, sliceData(s), elemSize[E](), len(s), site)
	}
	return s
}

// LoopRangeW records the writes of a fill loop (instrument/fillloop.go:
// for i := lo; i < hi; i++ { s[i] = v }, which synchronizes with nothing)
// as one range event of s[lo:min(hi, len(s))], before the loop, and
// returns lo, the loop variable's first value.
func LoopRangeW[S ~[]E, E any](s S, lo, hi int, site uint32, rec bool) int {
	elemRange(trace.OpWrite, sliceData(s), elemSize[E](), len(s), lo, hi, site, rec)
	return lo
}

// LoopRangeR is LoopRangeW for the elements the loop reads (src[i]).
func LoopRangeR[S ~[]E, E any](s S, lo, hi int, site uint32, rec bool) int {
	elemRange(trace.OpRead, sliceData(s), elemSize[E](), len(s), lo, hi, site, rec)
	return lo
}

// LoopStepW records the writes of a loop `for j := lo; j < hi; j +=
// step` to s[j+off]: elements lo+off, lo+off+step, ... cut where the loop
// panics (an index outside s: none when lo+off < 0), and returns lo. The
// elements of a step over 1 are every step-th: a sparse range of 8-byte
// elements (trace.MakeSparseSpan), an access per element otherwise
// (instrument/fillloop.go: a stencil's s[j-1], s[j+1] with j += 2).
func LoopStepW[S ~[]E, E any](s S, lo, hi, step, off int, site uint32, rec bool) int {
	stepRange(trace.OpWrite, sliceData(s), elemSize[E](), len(s), lo, hi, step, off, site, rec, false)
	return lo
}

// LoopStepR is LoopStepW for the elements the loop reads.
func LoopStepR[S ~[]E, E any](s S, lo, hi, step, off int, site uint32, rec bool) int {
	stepRange(trace.OpRead, sliceData(s), elemSize[E](), len(s), lo, hi, step, off, site, rec, false)
	return lo
}

// LoopRowW is LoopStepW of rows[r], a row of a slice of slices that the
// loop reads in each iteration (g[i][j] for the inner loop's j): when the
// loop runs at all, it records that read (at rowSite) and the row's
// elements; when r is outside rows it records nothing, as the loop
// panics at its first iteration.
func LoopRowW[R ~[]S, S ~[]E, E any](rows R, r, lo, hi, step, off int, site, rowSite uint32, rec bool) int {
	rowRange(trace.OpWrite, rows, r, lo, hi, step, off, site, rowSite, rec)
	return lo
}

// LoopRowR is LoopRowW for the elements the loop reads.
func LoopRowR[R ~[]S, S ~[]E, E any](rows R, r, lo, hi, step, off int, site, rowSite uint32, rec bool) int {
	rowRange(trace.OpRead, rows, r, lo, hi, step, off, site, rowSite, rec)
	return lo
}

func rowRange[R ~[]S, S ~[]E, E any](op trace.Op, rows R, r, lo, hi, step, off int, site, rowSite uint32, rec bool) {
	if lo < hi && r >= 0 && r < len(rows) {
		accessHook(hookRead, unsafe.Pointer(&rows[r]), 1, rowSite, rec) // a slice is read whole (R1)
		stepRange(op, sliceData(rows[r]), elemSize[E](), len(rows[r]), lo, hi, step, off, site, rec, false)
	}
}

// LoopColR records the reads of a loop j := lo; j < hi; j += step to
// rows[j+off][col], a column of a slice of slices (a matrix product's
// b[k][j] for its inner loop's k): the rows' reads, as one sparse range of
// their first words (a slice is read whole: R1), and each element, cut
// where the loop panics (a row index outside rows, a row shorter than
// col+1). It returns lo.
func LoopColR[R ~[]S, S ~[]E, E any](rows R, col, lo, hi, step, off int, site, rowSite uint32, rec bool) int {
	colRange(trace.OpRead, rows, col, lo, hi, step, off, site, rowSite, rec)
	return lo
}

// LoopColW is LoopColR for the elements the loop writes.
func LoopColW[R ~[]S, S ~[]E, E any](rows R, col, lo, hi, step, off int, site, rowSite uint32, rec bool) int {
	colRange(trace.OpWrite, rows, col, lo, hi, step, off, site, rowSite, rec)
	return lo
}

func colRange[R ~[]S, S ~[]E, E any](op trace.Op, rows R, col, lo, hi, step, off int, site, rowSite uint32, rec bool) {
	first := lo + off
	if !ctl && !(on && rec) || step <= 0 || lo >= hi || first < 0 || first >= len(rows) || col < 0 {
		return
	}
	count := min((hi-lo-1)/step+1, (len(rows)-first-1)/step+1)
	elems := count
	for i := 0; i < count; i++ {
		if col >= len(rows[first+i*step]) {
			elems, count = i, i+1 // the loop reads this row, then panics
			break
		}
	}
	stepRange(trace.OpRead, unsafe.Pointer(unsafe.SliceData(rows)), unsafe.Sizeof(rows[0]), len(rows), lo, lo+(count-1)*step+1, step, off, rowSite, rec, true)
	kind := hookKind(op)
	// An element an iteration: with loop regions (RACEKIT_SAMPLE_LOOPS,
	// loop.go), those of the iterations the loop's region would sample,
	// as the body's own hooks recorded them.
	var l Loop
	regions := loopsOn && sampling && !ctl
	if regions {
		l = LoopOf(rec)
	}
	for i := 0; i < elems; i++ {
		if regions && !l.Iter() {
			continue
		}
		accessHook(kind, unsafe.Pointer(&rows[first+i*step][col]), elemSize[E](), site, rec)
	}
}

// stepRange records op on the elements j+off of the n at p, for j from
// lo while j < hi by step (see LoopStepW); firstWords: on the first word
// of each only (slices read whole, R1).
func stepRange(op trace.Op, p unsafe.Pointer, elem uintptr, n, lo, hi, step, off int, site uint32, rec, firstWords bool) {
	first := lo + off
	if !ctl && !(on && rec) || step <= 0 || lo >= hi || first < 0 || first >= n {
		return
	}
	count := min((hi-lo-1)/step+1, (n-first-1)/step+1)
	if step == 1 && !firstWords {
		elemRange(op, p, elem, n, first, first+count, site, rec)
		return
	}
	p = unsafe.Add(p, uintptr(first)*elem)
	stride := uintptr(step) * elem
	size := elem
	if firstWords {
		size = 1
	}
	if (elem == 8 || firstWords) && !ctl && on && rec && rangesOn() && count > rangeMinWords {
		a := uint64(uintptr(p))
		if sp, ok := trace.MakeSparseSpan(uint64(stride), uint64(count)); ok && live.Load() && !onStack(a) {
			g := cur()
			if gen := generation.Load(); gen != g.gen {
				g.newGeneration(gen)
			}
			if !sampling || !g.sampleSkip() {
				g.putSpan(op, site, a, sp)
			}
			return
		}
	}
	kind := hookKind(op)
	for i := 0; i < count; i++ {
		accessHook(kind, unsafe.Add(p, uintptr(i)*stride), size, site, rec)
	}
}

// hookKind is accessHook's kind of a plain access op.
func hookKind(op trace.Op) uint8 {
	if op == trace.OpWrite {
		return hookWrite
	}
	return hookRead
}

// LoopAlso returns s, the operand of an element-wise range loop, once
// its second argument has recorded the loop's accesses (LoopRangeR and
// LoopRangeW of each slice, before the loop: instrument/fillloop.go).
func LoopAlso[T any](s T, _ int) T { return s }

// elemRange records op on elements [lo, min(hi, n)) of the n at p (none
// when lo < 0): a fill loop's, a bounded interceptor's (BytesFirst).
func elemRange(op trace.Op, p unsafe.Pointer, elem uintptr, n, lo, hi int, site uint32, rec bool) {
	hi = min(hi, n)
	if lo < 0 || lo >= hi {
		return
	}
	p = unsafe.Add(p, uintptr(lo)*elem)
	if ctl {
		if op == trace.OpWrite {
			ctlWrite(p, uintptr(hi-lo)*elem, site)
		} else {
			ctlRead(p, uintptr(hi-lo)*elem, site)
		}
	}
	if on && rec {
		rangeAccess(op, p, elem, hi-lo, site)
	}
}

// AppendN is wrapped around append(s, x1, ..., xn): r is append's result;
// it records writes of the n elements append stored, r[len(r)-n:].
func AppendN[S ~[]E, E any](r S, n int, site uint32, rec bool) S {
	if ctl && n > 0 && n <= len(r) {
		// After the append (the instrumenter wraps its result): a point
		// still, though it cannot hold the store back.
		ctlWrite(unsafe.Pointer(&r[len(r)-n]), uintptr(n)*elemSize[E](), site)
	}
	if on && rec && n > 0 && n <= len(r) {
		rangeAccess(trace.OpWrite, unsafe.Pointer(&r[len(r)-n]), elemSize[E](), n, site)
	}
	return r
}

// AppendSlice is append(s, xs...): it records reads of xs's elements and
// writes of the elements stored.
func AppendSlice[S ~[]E, T ~[]E, E any](s S, xs T, site uint32, rec bool) S {
	if ctl {
		if len(xs) > 0 {
			ctlRead(sliceData(xs), uintptr(len(xs))*elemSize[E](), site)
		}
		ctlAppend(s, len(xs), site)
	}
	r := append(s, xs...)
	if on {
		grown(s, r, site)
	}
	if on && rec {
		if len(xs) > 0 {
			rangeAccess(trace.OpRead, sliceData(xs), elemSize[E](), len(xs), site)
		}
		appended(s, r, len(xs), site)
	}
	return r
}

// AppendString is append(b, str...).
func AppendString[S ~[]byte, T ~string](b S, str T, site uint32, rec bool) S {
	if ctl {
		ctlAppend(b, len(str), site)
	}
	r := append(b, str...)
	if on {
		grown(b, r, site)
		if rec {
			appended(b, r, len(str), site)
		}
	}
	return r
}

// AppendBytesOrString is append(b, xs...) for xs of a type parameter that
// may be a byte slice or a string (~[]byte | ~string, as
// go-json-experiment's jsontext.AppendFormat takes), which neither
// AppendSlice nor AppendString accepts: it is the one of them that xs's
// type is. (string(xs) of a string type copies nothing; of a byte slice it
// is only taken for a nil one.)
func AppendBytesOrString[S ~[]byte, T ~[]byte | ~string](b S, xs T, site uint32, rec bool) S {
	if src := bytesIn(xs); src != nil {
		return AppendSlice(b, src, site, rec)
	}
	return AppendString(b, string(xs), site, rec)
}

// CopyBytesOrString is copy(dst, xs) for xs of a type parameter that may be
// a byte slice or a string (~[]byte | ~string): Copy or CopyString.
func CopyBytesOrString[D ~[]byte, T ~[]byte | ~string](dst D, xs T, site uint32, rec bool) int {
	if src := bytesIn(xs); src != nil {
		return Copy(dst, src, site, rec)
	}
	return CopyString(dst, string(xs), site, rec)
}

// bytesIn is xs's bytes when T is a byte slice type, nil when it is a
// string type (immutable: nothing writes it, nothing races on it).
func bytesIn[T ~[]byte | ~string](xs T) []byte {
	if reflect.TypeFor[T]().Kind() != reflect.Slice {
		return nil
	}
	return *(*[]byte)(unsafe.Pointer(&xs))
}

// Copy is copy(dst, src): reads of the elements copied from src, writes of
// those stored in dst.
func Copy[D ~[]E, S ~[]E, E any](dst D, src S, site uint32, rec bool) int {
	if n := min(len(dst), len(src)); ctl && n > 0 {
		// The ranges copied, so that a copy races with an access to any
		// element it touches (sched.Point.Size).
		ctlRead(sliceData(src), uintptr(n)*elemSize[E](), site)
		ctlWrite(sliceData(dst), uintptr(n)*elemSize[E](), site)
	}
	n := copy(dst, src)
	if on && rec && n > 0 {
		if dedup {
			// The writes first: the reads of the words it also writes
			// (a copy within one slice, as a node's keys moving right)
			// are then repeats in the same epoch, which dedup drops.
			rangeAccess(trace.OpWrite, sliceData(dst), elemSize[E](), n, site)
			rangeAccess(trace.OpRead, sliceData(src), elemSize[E](), n, site)
		} else {
			rangeAccess(trace.OpRead, sliceData(src), elemSize[E](), n, site)
			rangeAccess(trace.OpWrite, sliceData(dst), elemSize[E](), n, site)
		}
	}
	return n
}

// CopyString is copy(dst, str).
func CopyString[D ~[]byte, T ~string](dst D, str T, site uint32, rec bool) int {
	if n := min(len(dst), len(str)); ctl && n > 0 {
		ctlWrite(sliceData(dst), uintptr(n), site)
	}
	n := copy(dst, str)
	if on && rec && n > 0 {
		rangeAccess(trace.OpWrite, sliceData(dst), 1, n, site)
	}
	return n
}
