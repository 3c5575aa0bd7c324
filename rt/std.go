package rt

import (
	"reflect"
	"runtime"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// Interceptors: accesses made inside standard-library code, recorded at the
// user's call. The standard library is not traced, so a race inside it
// (two goroutines writing one strings.Builder) has no event of its own. For
// the std functions that do no synchronization of their own, the
// instrumenter keeps a table of what each call reads and writes
// (instrument/stdcalls.go), as ThreadSanitizer intercepts libc, and wraps
// the operands of such a call in the hooks below (or in rt.R, rt.W,
// rt.Elems, rt.MR, rt.MW, which are the same accesses made by user code),
// each recording its access when the operand is evaluated, right before
// the call, at the call's site. Every hook returns its operand unchanged.

// ElemsW records a write of all of s's elements and returns s:
// slices.Sort(s), sort.Ints(s).
func ElemsW[S ~[]E, E any](s S, site uint32, rec bool) S {
	if ctl && len(s) > 0 {
		ctlWrite(sliceData(s), uintptr(len(s))*elemSize[E](), site)
	}
	if on && rec && len(s) > 0 {
		rangeAccess(trace.OpWrite, sliceData(s), elemSize[E](), len(s), site)
	}
	return s
}

// BytesFirst records a read of the first n bytes of b (all of b when it
// is shorter) and returns b: the most a call that decodes from the start
// of b reads (binary.Uvarint: binary.MaxVarintLen64, utf8.DecodeRune:
// utf8.UTFMax). Recording all of b, a buffer's tail that the call is
// given (binary.Uvarint(q.array[i:])), made each call cost the buffer's
// length, and named bytes the call never reads.
func BytesFirst(b []byte, n int, site uint32, rec bool) []byte {
	elemRange(trace.OpRead, sliceData(b), 1, len(b), 0, n, site, rec)
	return b
}

// BytesFirstW is BytesFirst for a write (binary.PutUvarint,
// utf8.EncodeRune).
func BytesFirstW(b []byte, n int, site uint32, rec bool) []byte {
	elemRange(trace.OpWrite, sliceData(b), 1, len(b), 0, n, site, rec)
	return b
}

// BytesLast records a read of the last n bytes of b (utf8.DecodeLastRune).
func BytesLast(b []byte, n int, site uint32, rec bool) []byte {
	elemRange(trace.OpRead, sliceData(b), 1, len(b), len(b)-min(n, len(b)), len(b), site, rec)
	return b
}

// SortPre records a read of all of s's elements (a sort of two or more
// compares each) and keeps a copy of them, and returns s: sort.Ints(s),
// slices.SortFunc(s, f). The writes are SortPost's, after the call: of the
// elements whose bytes the sort changed. A sort that finds the slice in
// order writes nothing, as the Go race detector sees it, so a goroutine
// reading the slice meanwhile does not race with it (go-co-op/gocron sorts
// its sorted list of next runs while a caller reads the first). A write of
// an element the sort put back where it was is missed.
func SortPre[S ~[]E, E any](s S, site uint32, rec bool) S {
	if ctl && len(s) > 0 {
		ctlWrite(sliceData(s), uintptr(len(s))*elemSize[E](), site)
	}
	if on && rec && len(s) > 1 {
		rangeAccess(trace.OpRead, sliceData(s), elemSize[E](), len(s), site)
		sortSnapshot(sliceData(s), elemSize[E](), len(s), site)
	}
	return s
}

// sortSnap is the elements of a sort's slice before it (SortPre), as
// far as rangeAccess records them.
type sortSnap struct {
	p    unsafe.Pointer
	elem uintptr
	site uint32 // SortPre's, which the instrumenter passes SortPost too
	old  []byte
}

// sortSnapMax bounds the bytes a sort's snapshot copies: a sort compares
// every element, so the copy costs little beside it; writes past the
// bound are missed.
const sortSnapMax = 16 << 20

// sortSnapshot keeps a copy of the n elements of elem bytes at p, for
// SortPost (as far as rangeAccess records them: maxRangeEvents words
// without range events).
func sortSnapshot(p unsafe.Pointer, elem uintptr, n int, site uint32) {
	if elem == 0 || !live.Load() || onStack(uint64(uintptr(p))) {
		return
	}
	if rangesOn() {
		n = min(n, int(max(sortSnapMax/elem, 1)))
	} else {
		words := (elem + 7) / 8
		n = min(n, int((maxRangeEvents+words-1)/words))
	}
	g := cur()
	old := append(g.sortFree[:0], unsafe.Slice((*byte)(p), uintptr(n)*elem)...)
	g.sortFree = nil
	g.sorts = append(g.sorts, sortSnap{p: p, elem: elem, site: site, old: old})
}

// SortPost ends the sort SortPre began at site (the instrumenter puts it
// after the statement of the call): it records writes of the elements
// whose bytes changed. Snapshots above it are of sorts begun in its
// comparator whose own comparator panicked: dropped.
func SortPost(site uint32) {
	if !on || !live.Load() {
		return
	}
	g := cur()
	k := len(g.sorts) - 1
	for k >= 0 && g.sorts[k].site != site {
		k--
	}
	if k < 0 {
		return // SortPre recorded nothing
	}
	s := g.sorts[k]
	g.sorts = g.sorts[:k]
	now := unsafe.Slice((*byte)(s.p), len(s.old))
	size := int(s.elem)
	same := func(i int) bool { return string(now[i*size:(i+1)*size]) == string(s.old[i*size:(i+1)*size]) }
	n := len(s.old) / size
	for i := 0; i < n; {
		if same(i) {
			i++
			continue
		}
		j := i + 1
		for j < n && !same(j) {
			j++
		}
		rangeAccess(trace.OpWrite, unsafe.Add(s.p, uintptr(i)*s.elem), s.elem, j-i, site)
		i = j
	}
	g.sortFree = s.old
}

// ElemsWords is Elems for a slice of elements narrower than a word (a
// []byte handed to bufio.Writer.Write), called in loops: every element as
// one range event (a few events for a few elements), so that the call
// costs about one event whatever the length. Without range events (TREE,
// RACEKIT_RANGES=0), one event per 8 bytes, at offsets 0, 8, 16... from
// the first element: all inside the slice, so no race is invented, but a
// write of an element between two of them is missed.
func ElemsWords[S ~[]E, E any](s S, site uint32, rec bool) S {
	if len(s) > 0 {
		wordsAccess(hookRead, sliceData(s), elemSize[E](), len(s), site, rec)
	}
	return s
}

// ElemsWordsW is ElemsWords for a write: the buffer a Read fills.
func ElemsWordsW[S ~[]E, E any](s S, site uint32, rec bool) S {
	if len(s) > 0 {
		wordsAccess(hookWrite, sliceData(s), elemSize[E](), len(s), site, rec)
	}
	return s
}

// wordsAccess is ElemsWords' and ElemsWordsW's body: the n elements of
// elem bytes at p.
func wordsAccess(kind uint8, p unsafe.Pointer, elem uintptr, n int, site uint32, rec bool) {
	op := trace.OpRead
	if kind == hookWrite {
		op = trace.OpWrite
	}
	if ctl {
		if op == trace.OpWrite {
			ctlWrite(p, elem*uintptr(n), site)
		} else {
			ctlRead(p, elem*uintptr(n), site)
		}
	}
	if on && rec {
		wordsRecord(op, p, elem, n, site)
	}
}

// wordsRecord records wordsAccess's access: where range events are on,
// every element (one range event past rangeMinWords of them: a byte
// another goroutine writes in the middle of a word is met); else one event
// per 8 bytes, as few as a word-sized writer's loop can afford.
func wordsRecord(op trace.Op, p unsafe.Pointer, elem uintptr, n int, site uint32) {
	if rangesOn() {
		rangeAccess(op, p, elem, n, site)
	} else {
		rangeAccess(op, p, 8, int((elem*uintptr(n)+7)/8), site)
	}
}

// A Read's buffer (an untraced method with io.Reader's signature, of a
// type or an interface, io.ReadFull...): FillW notes it where the call's
// operand is evaluated, and Filled records the write of the n bytes the
// call returns: instrumented code calls rt.Filled(r.Read(rt.FillW(b, site,
// rec))). Go's race detector sees the n bytes a read system call returned
// (syscall.Read's WriteRange, before its Acquire), or the bytes a Go Read
// copies; recording all of b at the call, as io.Reader's contract allows,
// named bytes no call wrote, and a buffer sized by its input's claim cost
// its whole length at every call (held-out biogo/hts: a fuzzed header's
// 2 GB text buffer, 41 billion byte accesses in a test -race runs in a
// second).
//
// A Read whose untraced code sends on a channel inside (an io.Pipe's reader
// receives the writer's buffer, copies, then sends the count back, which
// the writer's Write returns on: the runtime's channel hook, chanhook.go)
// has its write recorded there, before that send, as the whole buffer (n
// is not known yet): after the call's acquisitions and before what it
// publishes, where the copy is (flushFills). Traced code inside a Read (an
// io.Reader holding the program's own Reader) records its own accesses and
// synchronization; its releases leave the buffer to Filled, so that a
// Reader with a goroutine of its own costs the n bytes it returns, not its
// buffer (biogo/hts's BGZF reader, whose caller's buffer was the 2 GB one).
// A write of the buffer under a traced Reader's own lock is then recorded
// twice, the second time after its unlock, where an access to the caller's
// buffer by another goroutine holding that lock would meet it. Calls nest
// (that Reader reading from a bytes.Reader): each Filled records its own
// call's n bytes.

// maxFills is how many Read calls under way a goroutine notes; a deeper
// one has the outermost's buffer recorded whole when it begins.
const maxFills = 4

// fillPend is the buffer of a Read call under way (nil p: one whose write
// is not recorded).
type fillPend struct {
	p    unsafe.Pointer
	n    int
	site uint32
}

// FillW notes b as the buffer of the Read call it is the operand of, and
// returns it; the controlled scheduler's point (the whole buffer: the call
// may write any of it) is here, before the call.
func FillW[S ~[]byte](b S, site uint32, rec bool) S {
	if ctl && len(b) > 0 {
		ctlWrite(sliceData(b), uintptr(len(b)), site)
	}
	if on && live.Load() {
		// Noted even when nothing is to be recorded (an unsampled frame,
		// an empty buffer), so that its Filled takes its own.
		g := cur()
		if g.nfill == maxFills {
			f := g.fills[0]
			copy(g.fills[:], g.fills[1:])
			g.nfill--
			f.writeAll()
		}
		f := fillPend{site: site}
		if rec && len(b) > 0 {
			f.p, f.n = sliceData(b), len(b)
		}
		g.fills[g.nfill] = f
		g.nfill++
	}
	return b
}

// Filled records the write of the first n bytes (at most the buffer's
// length) of the buffer FillW noted last, unless a send inside the call
// recorded it, and returns the call's results. After the call, as -race
// records a read system call's, so it follows the call's own acquisitions;
// a reader's IORead edge comes after.
func Filled(n int, err error) (int, error) {
	if on && live.Load() {
		if g := cur(); g.nfill > 0 {
			g.nfill--
			f := g.fills[g.nfill]
			g.fills[g.nfill].p = nil
			if n > 0 && f.p != nil {
				wordsRecord(trace.OpWrite, f.p, 1, min(n, f.n), f.site)
			}
		}
	}
	return n, err
}

// flushFills records the writes of g's Read buffers under way, all of
// each, at a send of untraced code inside their calls (onChan; the
// WaitGroup hook cannot tell traced code's Done from untraced code's).
// A call that panicked (or an operand after the buffer) leaves its buffer
// to the goroutine's next such release, FillW past maxFills, or Filled.
func (g *gstate) flushFills() {
	for g.nfill > 0 {
		g.nfill--
		f := g.fills[g.nfill]
		g.fills[g.nfill].p = nil
		f.writeAll()
	}
}

// writeAll records the write of the whole buffer, if it is recorded.
func (f fillPend) writeAll() {
	if f.p != nil {
		wordsRecord(trace.OpWrite, f.p, 1, f.n, f.site)
	}
}

// RDeep records a read of *p (one event at its first word, as rt.R1: the
// interceptors' objects are std types with unexported fields, accessed
// whole) and of the elements of the slices *p holds directly (fields of a
// struct, one level: the words of a *big.Int, the bytes of a
// bytes.Buffer), and returns p.
func RDeep[T any](p *T, site uint32, rec bool) *T { return readDeep(p, site, rec, true) }

// RDeepProgram is RDeep for an object whose slices hold arrays the
// program made and gave it (a net.TCPAddr's IP): their allocation is not
// recorded (internalArray), which would hide the program's accesses to
// them before the call, a race among them.
func RDeepProgram[T any](p *T, site uint32, rec bool) *T { return readDeep(p, site, rec, false) }

// readDeep is RDeep (internal: std made the arrays) and RDeepProgram.
func readDeep[T any](p *T, site uint32, rec, internal bool) *T {
	if p != nil && (ctl || on && rec) {
		readDeepOf(unsafe.Pointer(p), reflect.TypeFor[T](), site, rec, internal)
	}
	return p
}

// readDeepOf is readDeep of the object of type t at p.
func readDeepOf(p unsafe.Pointer, t reflect.Type, site uint32, rec, internal bool) {
	if ctl {
		ctlRead(p, t.Size(), site)
	}
	if on && rec {
		access(trace.OpRead, p, 1, site)
		readSlicesOf(p, t, site, internal)
	}
}

// RSlicesOf is RDeep without the read of *p itself: for a local variable
// that may live on its goroutine's stack (instrument's heapOperand), whose
// address moves when the stack grows; the arrays its slices point to do
// not.
func RSlicesOf[T any](p *T, site uint32, rec bool) *T { return readSlices(p, site, rec, true) }

// RSlicesOfProgram is RDeepProgram without the read of *p (see RSlicesOf).
func RSlicesOfProgram[T any](p *T, site uint32, rec bool) *T { return readSlices(p, site, rec, false) }

// readSlices is RSlicesOf and RSlicesOfProgram.
func readSlices[T any](p *T, site uint32, rec, internal bool) *T {
	if p != nil && on && rec {
		readSlicesOf(unsafe.Pointer(p), reflect.TypeFor[T](), site, internal)
	}
	return p
}

// readSlicesOf records reads of the elements of the slice fields of the
// value of type t at p, after the allocation of their arrays if internal
// (std made them: internalArray).
func readSlicesOf(p unsafe.Pointer, t reflect.Type, site uint32, internal bool) {
	for _, f := range sliceFields(t) {
		h := (*sliceHeader)(unsafe.Add(p, f.off))
		if h.len > 0 && h.data != nil {
			if internal {
				internalArray(p, h.data, uintptr(h.cap)*f.elem, site)
			}
			rangeAccess(trace.OpRead, h.data, f.elem, h.len, site)
		}
	}
}

// internalArrays holds, per slot, a hash of an (object, array, GC cycle)
// triple whose array internalArray has recorded.
var internalArrays [1 << 14]OwnUint64

// gcEpoch counts the garbage collector's cycles (a finalizer that arms
// itself again, from internalArray's first call): an array seen with its
// object before a cycle may have been freed and handed out again since, to
// the same object at the same address (a Buffer declared in a loop), with
// a dead object of the program there in between.
var (
	gcEpoch OwnUint64
	gcWatch OwnOnce
)

type gcSentinel struct{ _ [2]uint64 } // not a tiny allocation, whose finalizer may never run

func armGCEpoch() {
	runtime.SetFinalizer(new(gcSentinel), func(*gcSentinel) {
		gcEpoch.Add(1)
		armGCEpoch()
	})
}

// internalArray records the allocation of the array a std object at owner
// holds (a bytes.Buffer's bytes, a big.Int's words) the first time it is
// seen with that object. The standard library allocates and regrows these
// arrays without a trace, so the memory a dead object of the program had
// keeps its accesses: a Buffer's String read its new bytes at the address
// of another goroutine's dead []byte, a race-free program's false race
// (e2e testdata/src/stdchurn). Seen again (the same object, the same array) it records
// nothing, so the program's writes through Bytes() still race with a
// later String, within a cycle of the garbage collector (gcEpoch). An
// allocation recorded where there was none (a collision in the table, an
// array the program gave, as bytes.NewBuffer's, a new cycle) only forgets
// accesses: races may be missed, none invented. Not covered: an array
// freed and handed out twice between two reads of it with no cycle counted
// in between (the finalizer that counts cycles runs after a cycle's mark).
func internalArray(owner, data unsafe.Pointer, size uintptr, site uint32) {
	h := arrayKey(owner, data)
	slot := &internalArrays[h&(uint64(len(internalArrays))-1)]
	if slot.Load() == h|1 {
		return
	}
	slot.Store(h | 1)
	allocEvent(data, size, site)
}

// arrayKey hashes an (owner, array, GC cycle) triple. Both addresses are
// multiplied and the sum mixed (splitmix64's finalizer): with the array's
// address XORed in as it was, an object and its own array at one offset
// within 16 KiB (a HeldPtr's object and its IP's array, each in a span
// of its size class) took one slot of internalArrays, each evicting the
// other, and both were recorded allocated at every call (rt's
// TestHeldPtrAllocatedOnce, now and then under -race).
func arrayKey(owner, data unsafe.Pointer) uint64 {
	gcWatch.Do(armGCEpoch)
	h := uint64(uintptr(owner))*0x9e3779b97f4a7c15 + uint64(uintptr(data))*0xc2b2ae3d27d4eb4f ^ gcEpoch.Load()<<48
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// R1Arrays is R1 for a method that hands the program an array its object
// holds (bytes.Buffer.Bytes, bufio.Reader.Peek, bufio.Scanner.Bytes): it
// also records, the first time in a GC cycle that the object is seen with
// it, the allocation of each array its slice fields point to
// (internalArray). std allocated the array (and a Read filled it) without
// a trace, so the program's accesses through the slice it gets met the
// dead object of the program the collector had there (a read of Peek's
// bytes raced with another goroutine's dead []byte: hashicorp/memberlist,
// corpus session 26); and the array recorded at its start, whichever
// method sees it first, keeps the program's writes through Bytes() racing
// with a later String.
func R1Arrays[T any](p *T, site uint32, rec bool) *T {
	R1(p, site, rec)
	ArraysOf(p, site, rec)
	return p
}

// W1Arrays is R1Arrays with a write of the object (Peek moves a Reader's
// state).
func W1Arrays[T any](p *T, site uint32, rec bool) *T {
	W1(p, site, rec)
	ArraysOf(p, site, rec)
	return p
}

// ArraysOf is R1Arrays without the access of *p: for a local variable that
// may live on its goroutine's stack (see RSlicesOf).
func ArraysOf[T any](p *T, site uint32, rec bool) *T {
	if p != nil && on {
		heldArrays(unsafe.Pointer(p), reflect.TypeFor[T](), site)
	}
	return p
}

// heldArrays records (internalArray) the arrays that the slice fields of
// the object of type t at p hold.
func heldArrays(p unsafe.Pointer, t reflect.Type, site uint32) {
	for _, f := range sliceFields(t) {
		h := (*sliceHeader)(unsafe.Add(p, f.off))
		if h.cap > 0 && h.data != nil {
			internalArray(p, h.data, uintptr(h.cap)*f.elem, site)
		}
	}
}

// HeldPtr returns v, a pointer or an interface holding one, after
// recording, the first time in a GC cycle that it is seen, the allocation
// of the object it points to and of the arrays that object's slice fields
// hold (internalArray): an object std allocated and keeps, handed out by a
// method (the *net.TCPAddr of a listener's Addr, allocated at Listen
// unseen: hashicorp/memberlist read its IP at the address of a dead object
// of the program; corpus, session 27).
func HeldPtr[T any](v T, site uint32) T {
	if !on {
		return v
	}
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() != reflect.Pointer || rv.IsNil() {
		return v
	}
	p, et := rv.UnsafePointer(), rv.Type().Elem()
	if et.Size() == 0 {
		return v
	}
	internalArray(p, p, et.Size(), site)
	heldArrays(p, et, site)
	return v
}

// CallerBuf is called first in a traced Read or Write method (io.Reader's
// or io.Writer's signature) with its buffer. When its caller is untraced
// code (bufio's fill, io.Copy, io.ReadFull through a bufio.Reader), that
// code allocated the buffer without a trace, and it kept the accesses of
// the program's dead object the collector had there (hashicorp/memberlist's
// peekedConn.Read wrote into bufio's buffer at a dead []byte's address:
// corpus, session 27), or took it from a sync.Pool whose Put and Get order
// its users for go test -race and not for racekit (io.Copy to io.Discard
// reads through one 8 KiB buffer of a pool: fasthttp's fasthttputil tests,
// corpus session 32): it is recorded allocated whenever a goroutine other
// than the last one seen with it, or the same one in a new GC cycle, sees
// it (callerBufs). A traced caller's buffer is its own business (its allocation
// is recorded where it was made).
func CallerBuf(p []byte, site uint32) {
	if !on || cap(p) == 0 {
		return
	}
	var pcs [4]uintptr
	n := runtime.Callers(3, pcs[:]) // the method's caller, and beyond
	if n == 0 || tracedCaller(pcs[:n]) {
		return
	}
	d := sliceData(p)
	h := arrayKey(unsafe.Pointer(cur()), d)
	slot := &callerBufs[(uint64(uintptr(d))*0x9e3779b97f4a7c15)>>(64-callerBufBits)]
	if slot.Load() == h|1 {
		return
	}
	slot.Store(h | 1)
	allocEvent(d, uintptr(cap(p)), site)
}

// callerBufs holds, per slot (by the buffer's address), the hash of the
// (goroutine, buffer, GC cycle) triple CallerBuf saw last there. So a
// buffer that a sync.Pool of untraced code hands from goroutine to
// goroutine and back is recorded allocated each time another goroutine
// is seen with it, as each Get is ordered after the Put before it for go
// test -race; a table of every triple seen (internalArray's) let the first
// goroutine's later reads race with the second's (x/net's websocket
// TestCtrlAndData: the client's and the server's pings, discarded by
// io.Copy to io.Discard through its pooled 8 KiB buffer; corpus session
// 65).
var callerBufs [1 << callerBufBits]OwnUint64

const callerBufBits = 12

// tracedCaller reports whether the first frame of pcs that is not a
// compiler-made wrapper is in a traced file. Cached per PC (of a frame that
// is not a wrapper).
func tracedCaller(pcs []uintptr) bool {
	slot := &callerTraced[(uint64(pcs[0])*0x9e3779b97f4a7c15)>>(64-callerCacheBits)]
	if e := slot.Load(); e>>1 == uint64(pcs[0]) {
		return e&1 != 0
	}
	// A copy: CallersFrames keeps its slice, which would move the
	// caller's array (CallerBuf's) to the heap on every call.
	frames := runtime.CallersFrames(append([]uintptr(nil), pcs...))
	for first := true; ; first = false {
		f, more := frames.Next()
		if f.File != "<autogenerated>" {
			_, traced := tracedFiles.Load(f.File)
			if first { // a wrapper's PC does not say who called it
				e := uint64(pcs[0]) << 1
				if traced {
					e |= 1
				}
				slot.Store(e)
			}
			return traced
		}
		if !more {
			return false
		}
	}
}

// callerTraced caches tracedCaller's answer per PC, direct-mapped: an
// entry is the PC shifted left by one, the answer in the low bit. (A
// sync.Map keyed by the PC boxed it at every lookup, and CallersFrames
// moved CallerBuf's PCs to the heap: an allocation per call inside the
// program's testing.AllocsPerRun, fasthttp's
// TestFixedSizeBodyStreamWriteAllocations, corpus session 33.)
const callerCacheBits = 10

var (
	callerTraced [1 << callerCacheBits]OwnUint64
	tracedFiles  OwnMap // file name (as //line gives it) → registered by RegisterFile
)

type sliceField struct{ off, elem uintptr }

var sliceFieldsCache OwnMap // reflect.Type → []sliceField

// sliceFields returns the offsets and element sizes of the slice fields of
// struct type t (none for other types).
func sliceFields(t reflect.Type) []sliceField {
	if v, ok := sliceFieldsCache.Load(t); ok {
		return v.([]sliceField)
	}
	var fs []sliceField
	if t.Kind() == reflect.Struct {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Type.Kind() == reflect.Slice && f.Type.Elem().Size() > 0 {
				fs = append(fs, sliceField{f.Offset, f.Type.Elem().Size()})
			}
		}
	}
	sliceFieldsCache.Store(t, fs)
	return fs
}

// RJSON records the reads encoding/json's Marshal makes of v, and returns
// v: the exported fields (json:"-" excepted) of the structs reached, the
// elements of slices and arrays, the values pointers and interfaces hold,
// and maps as one object each (their entries are not walked: walking a
// map another goroutine writes would crash the program). v's own storage
// is not recorded (the callee gets a copy, read by the caller's own
// instrumented code), only what it reaches. The walk stops at a type with
// a MarshalJSON or MarshalText method (traced code records its own
// accesses; json calls it instead of reading the fields), at jsonDepth
// pointer hops and after maxRangeEvents events. Like the BarrierPair walk
// (barrier.go), it reads the memory without synchronization: a multi-word
// value torn by a racing write may be followed astray; panics are
// recovered.
func RJSON[T any](v T, site uint32, rec bool) T {
	if on && rec {
		jsonRead(unsafe.Pointer(&v), reflect.TypeFor[T](), site)
	}
	return v
}

const jsonDepth = 8

type jsonWalk struct {
	site uint32
	left int
	fmt  bool // fmt's rules (RFmt), not encoding/json's
}

//go:noinline
func jsonRead(p unsafe.Pointer, t reflect.Type, site uint32) {
	walkRead(p, t, site, false)
}

// walkRead reads what json (fmt false) or fmt prints of the value of type
// t at p (the hook's copy).
func walkRead(p unsafe.Pointer, t reflect.Type, site uint32, fmt bool) {
	if !live.Load() {
		return
	}
	if sampling && cur().sampleSkip() {
		return
	}
	w := jsonWalk{site: site, left: maxRangeEvents, fmt: fmt}
	defer func() { _ = recover() }()
	w.walk(p, t, false, 0)
}

// RFmt records the reads package fmt makes of v when it prints it with %v
// (or any verb but %T and %p, which the instrumenter leaves out), and
// returns v: as RJSON, with fmt's rules: every field of a struct, exported
// or not; a pointer followed only at the top (&{...}), elsewhere printed
// as an address; the walk stops at a value whose type has a String, Error
// or Format method (fmt calls it: traced code).
func RFmt[T any](v T, site uint32, rec bool) T {
	if on && rec {
		fmtRead(unsafe.Pointer(&v), reflect.TypeFor[T](), site)
	}
	return v
}

//go:noinline
func fmtRead(p unsafe.Pointer, t reflect.Type, site uint32) {
	walkRead(p, t, site, true)
}

var (
	fmtStringer  = reflect.TypeFor[interface{ String() string }]()
	fmtError     = reflect.TypeFor[interface{ Error() string }]()
	fmtFormatter = reflect.TypeFor[interface {
		Format(interface{ Write([]byte) (int, error) }, rune)
	}]()
	fmtStopCache OwnMap // reflect.Type → bool
)

// fmtStop reports whether fmt calls a method of a value of type t instead
// of printing it by reflection. A Formatter's Format takes an fmt.State,
// which rt cannot name without importing fmt: any Format method stops.
func fmtStop(t reflect.Type) bool {
	if v, ok := fmtStopCache.Load(t); ok {
		return v.(bool)
	}
	_, format := t.MethodByName("Format")
	stop := format || t.Implements(fmtStringer) || t.Implements(fmtError)
	fmtStopCache.Store(t, stop)
	return stop
}

func (w *jsonWalk) read(p unsafe.Pointer) {
	if w.left <= 0 {
		return
	}
	w.left--
	access(trace.OpRead, p, 1, w.site)
}

var (
	jsonMarshaler = reflect.TypeFor[interface{ MarshalJSON() ([]byte, error) }]()
	textMarshaler = reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()
	jsonStopCache OwnMap // reflect.Type → bool
)

// jsonStop reports whether json calls a method of t (or *t) instead of
// reading its value.
func jsonStop(t reflect.Type) bool {
	if v, ok := jsonStopCache.Load(t); ok {
		return v.(bool)
	}
	stop := false
	for _, m := range []reflect.Type{t, ownPointerTo(t)} {
		if m.Implements(jsonMarshaler) || m.Implements(textMarshaler) {
			stop = true
		}
	}
	jsonStopCache.Store(t, stop)
	return stop
}

// walk reads the value of type t at p; shared: p is memory the program
// may share (reached through a pointer, slice or interface), not the
// hook's copy.
func (w *jsonWalk) walk(p unsafe.Pointer, t reflect.Type, shared bool, depth int) {
	if p == nil || w.left <= 0 || depth > jsonDepth {
		return
	}
	if w.fmt && t.Kind() != reflect.Interface && fmtStop(t) {
		w.stringer(p, t) // fmt calls its method: std's reads some memory
		return
	}
	if !w.fmt && jsonStop(t) {
		return
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		if shared {
			w.read(p)
		}
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if tag := f.Tag.Get("json"); !w.fmt && tag == "-" {
				continue
			}
			if !w.fmt && !f.IsExported() && !(f.Anonymous && f.Type.Kind() == reflect.Struct) {
				continue
			}
			w.walk(unsafe.Add(p, f.Offset), f.Type, shared, depth)
		}
	case reflect.Array:
		for i := 0; i < t.Len() && w.left > 0; i++ {
			w.walk(unsafe.Add(p, uintptr(i)*t.Elem().Size()), t.Elem(), shared, depth)
		}
	case reflect.Pointer:
		if shared {
			w.read(p)
		}
		if w.fmt {
			// fmt prints &{...} for a pointer argument to a composite
			// value, an address anywhere else.
			switch t.Elem().Kind() {
			case reflect.Struct, reflect.Array, reflect.Slice, reflect.Map:
				if depth == 0 && !shared {
					w.walk(*(*unsafe.Pointer)(p), t.Elem(), true, depth+1)
				}
			}
			return
		}
		w.walk(*(*unsafe.Pointer)(p), t.Elem(), true, depth+1)
	case reflect.Interface:
		if shared {
			w.read(p)
		}
		words := (*[2]unsafe.Pointer)(p)
		if words[0] == nil {
			return
		}
		typ := uintptr(words[0])
		if t.NumMethod() > 0 {
			typ = *(*uintptr)(unsafe.Add(words[0], unsafe.Sizeof(uintptr(0))))
		}
		dyn := typeOfWord(typ)
		if pointerShaped(dyn) {
			w.walk(unsafe.Add(p, unsafe.Sizeof(uintptr(0))), dyn, false, depth)
			return
		}
		w.walk(words[1], dyn, false, depth+1) // an immutable box
	case reflect.Slice:
		if shared {
			w.read(p)
		}
		h := (*sliceHeader)(p)
		es := t.Elem().Size()
		if es == 0 {
			return
		}
		for i := 0; i < h.len && w.left > 0; i++ {
			w.walk(unsafe.Add(h.data, uintptr(i)*es), t.Elem(), true, depth+1)
		}
	case reflect.Map:
		if shared {
			w.read(p)
		}
		if m := *(*unsafe.Pointer)(p); m != nil && w.left > 0 {
			w.left--
			access(trace.OpRead, m, 1, w.site) // the map, one object (MR)
		}
	}
}

// asmSearchMax is internal/bytealg.MaxBruteForce on amd64 and arm64:
// bytes.Index and Contains search an operand no longer than this (or for
// one byte, with IndexByte) in assembly, whose reads go test -race does
// not see; a longer one in Go code, whose reads it sees.
const asmSearchMax = 64

// asmSearch reports whether bytes.Index searches s for a separator of n
// bytes in assembly (n 0: unknown, taken as more than one).
func asmSearch(s, n int) bool { return s <= asmSearchMax || n == 1 }

// ElemsUpToLong is ElemsUpTo for bytes.Index: nothing when the search
// ran in assembly (asmSearch).
func ElemsUpToLong[S ~[]E, E any](i int, s S, n int, site uint32, rec bool) int {
	if asmSearch(len(s), n) {
		return i
	}
	return ElemsUpTo(i, s, n, site, rec)
}

// ElemsLong is Elems for bytes.Contains(s, sep), n the length of sep:
// all of s, unless the search ran in assembly (asmSearch); it returns s.
func ElemsLong[S ~[]E, E any](s S, n int, site uint32, rec bool) S {
	if asmSearch(len(s), n) {
		return s
	}
	return Elems(s, site, rec)
}

// Then returns v: rt.Then(arg, hook(...)) records the hook's access after
// arg, the last argument of the call that calls a function, is evaluated
// (Go evaluates calls left to right), so that nothing the argument
// synchronizes on falls between the access and the call.
func Then[T, U any](v T, _ U) T { return v }

// ElemsUpTo records the read of s an index function made that returned
// i (bytes.IndexByte, bytes.Index, slices.Index): s up to the match, its
// n elements included, or all of s when i < 0 (no match); it returns i.
func ElemsUpTo[S ~[]E, E any](i int, s S, n int, site uint32, rec bool) int {
	end := len(s)
	if i >= 0 {
		end = min(i+n, len(s))
	}
	elemRange(trace.OpRead, sliceData(s), elemSize[E](), len(s), 0, end, site, rec)
	return i
}
