package rt

import (
	"reflect"
	"slices"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// Allocations. The garbage collector reuses the memory of dead objects, so
// one address may hold many objects over a run; without a word that an
// address holds a new object, a detector would see the accesses to the old
// and the new object as accesses to one location, and could report a race
// between them (the Go race detector clears its shadow memory in malloc for
// the same reason). The instrumenter calls these hooks where traced code
// creates an object that may be shared: new(T), &T{...}, make of a slice or
// map, and the declaration of a local variable that escapes (captured by a
// closure or its address taken). Each records an OpAlloc of the object's
// bytes; detectors forget what they knew of those addresses.

// allocEvent records that the size bytes at p are a new object.
func allocEvent(p unsafe.Pointer, size uintptr, site uint32) {
	if p == nil || size == 0 || onStack(uint64(uintptr(p))) {
		return
	}
	emitVal(trace.OpAlloc, 0, site, uint64(uintptr(p)), uint64(size))
}

// Alloc records that the variable at p has just been created, and its
// initial value written: the declaration of an escaping local variable
// (or parameter, or loop or clause variable). Go's compiler stores the
// initial value, zero or not, into the new heap object, and the race
// detector sees that store as a write at the declaration (var h T;
// pub = &h, then another goroutine's unsynchronized h.x races with it).
// The write is recorded when rec is (a sampler's choice); the allocation
// always, since it clears the address's history.
func Alloc[T any](p *T, site uint32, rec bool) {
	if on {
		allocEvent(unsafe.Pointer(p), unsafe.Sizeof(*p), site)
	}
	if ctl || on && rec {
		accessHook(hookWrite, unsafe.Pointer(p), unsafe.Sizeof(*p), site, rec)
	}
}

// New records the allocation of the object p points to (new(T), or the
// fresh result of an untraced call) and returns p. new(T) is zeroed
// memory, and no write for the race detector either.
func New[T any](p *T, site uint32) *T {
	if on {
		allocEvent(unsafe.Pointer(p), unsafe.Sizeof(*p), site)
	}
	return p
}

// NewLit records the allocation of the object p points to, made by a
// composite literal (&T{...}), and the write of its value (the compiler
// stores every field, the zero ones too, where the race detector sees
// them), and returns p.
func NewLit[T any](p *T, site uint32, rec bool) *T {
	Alloc(p, site, rec)
	return p
}

// NewUnlessArg is New for the result of a call that returns its argument
// arg when that already is what it makes (bufio.NewWriter(w) of a big
// enough *bufio.Writer), and a new object otherwise.
func NewUnlessArg[T any](p *T, arg any, site uint32) *T {
	if on {
		if a, same := arg.(*T); !same || a != p {
			allocEvent(unsafe.Pointer(p), unsafe.Sizeof(*p), site)
		}
	}
	return p
}

// NewFields is New for the fresh result of an untraced call (package
// instrument's freshStd) that holds other new objects in the named fields
// (http.NewRequest's URL and Header): it records their allocations too.
func NewFields[T any](p *T, site uint32, fields ...string) *T {
	if on && p != nil {
		allocEvent(unsafe.Pointer(p), unsafe.Sizeof(*p), site)
		fieldObjects(p, fields, func(o unsafe.Pointer, size, _ uintptr) { allocEvent(o, size, site) })
	}
	return p
}

// fieldObjects calls f with each object the named fields of *p point to
// (a non-nil pointer, a slice's backing array, a map's own pointer, as
// MakeMap), its size, and how much of it holds values: a slice up to its
// length, a map 1 if it has entries. The fields' offsets and kinds are
// looked up once per type and list of names (fieldLayout): reflect's
// FieldByName at every call cost a big.Int-heavy test a tenth of its run.
func fieldObjects[T any](p *T, fields []string, f func(o unsafe.Pointer, size, filled uintptr)) {
	base := unsafe.Pointer(p)
	for _, fl := range fieldLayout(reflect.TypeFor[T](), fields) {
		at := unsafe.Add(base, fl.off)
		switch fl.kind {
		case reflect.Pointer:
			if o := *(*unsafe.Pointer)(at); o != nil {
				f(o, fl.elem, fl.elem)
			}
		case reflect.Slice:
			if h := (*sliceHeader)(at); h.cap > 0 {
				f(h.data, uintptr(h.cap)*fl.elem, uintptr(h.len)*fl.elem)
			}
		case reflect.Map:
			if m := reflect.NewAt(fl.typ, at).Elem(); !m.IsNil() {
				f(m.UnsafePointer(), 1, uintptr(min(m.Len(), 1)))
			}
		}
	}
}

// A fieldSlot is a named field of a struct type as fieldObjects reads it:
// its offset from the struct's start (through embedded structs, not
// embedded pointers), kind, element size (a pointer's or a slice's) and
// type.
type fieldSlot struct {
	off, elem uintptr
	kind      reflect.Kind
	typ       reflect.Type
}

// fieldLayoutKey names a type's list of fields by its first and last names
// and length; the entry keeps the whole list, checked at each lookup.
type fieldLayoutKey struct {
	t           reflect.Type
	first, last string
	n           int
}

type fieldLayoutEntry struct {
	names []string
	slots []fieldSlot
}

var fieldLayouts OwnMap // fieldLayoutKey -> *fieldLayoutEntry

// fieldLayout returns the slots of the named fields of struct type t, in
// order; a name that is not a field, or is reached through an embedded
// pointer, gets no slot (fieldObjects skips it, as FieldByName's invalid
// value was).
func fieldLayout(t reflect.Type, names []string) []fieldSlot {
	if len(names) == 0 {
		return nil
	}
	key := fieldLayoutKey{t, names[0], names[len(names)-1], len(names)}
	if v, ok := fieldLayouts.Load(key); ok {
		if e := v.(*fieldLayoutEntry); slices.Equal(e.names, names) {
			return e.slots
		}
	}
	var slots []fieldSlot
	for _, name := range names {
		sf, ok := t.FieldByName(name)
		if !ok {
			continue
		}
		off, direct, at := uintptr(0), true, t
		for _, i := range sf.Index {
			if at.Kind() != reflect.Struct {
				direct = false
				break
			}
			fi := at.Field(i)
			off += fi.Offset
			at = fi.Type
		}
		if !direct {
			continue
		}
		sl := fieldSlot{off: off, kind: sf.Type.Kind(), typ: sf.Type}
		if sl.kind == reflect.Pointer || sl.kind == reflect.Slice {
			sl.elem = sf.Type.Elem().Size()
		}
		slots = append(slots, sl)
	}
	fieldLayouts.Store(key, &fieldLayoutEntry{names: slices.Clone(names), slots: slots})
	return slots
}

// Made, MadeFields, MadeSlice and MadeMap record the fresh result of an
// untraced call (package instrument's freshStd): its allocation, as New,
// NewFields, MakeSlice and MakeMap do, and then the writes the call made
// to fill it in, which the Go race detector sees because it instruments
// the standard library (net.ResolveTCPAddr's &TCPAddr{IP: ip, Port: port};
// another goroutine's unsynchronized addr.String() races with them). The
// whole object counts as written, as a composite literal's is (NewLit):
// the call owns it until it returns it. A slice's written part is its
// length; a map's writes are on the map itself (MW).
func Made[T any](p *T, site uint32, rec bool) *T {
	if p != nil {
		Alloc(p, site, rec)
	}
	return p
}

// MadeFields is Made for a result that holds other new objects in the
// named fields: their allocations and writes are recorded too.
func MadeFields[T any](p *T, site uint32, rec bool, fields ...string) *T {
	if p == nil {
		return p
	}
	NewFields(p, site, fields...)
	if ctl || on && rec {
		accessHook(hookWrite, unsafe.Pointer(p), unsafe.Sizeof(*p), site, rec)
		fieldObjects(p, fields, func(o unsafe.Pointer, _, filled uintptr) {
			if filled > 0 {
				accessHook(hookWrite, o, filled, site, rec)
			}
		})
	}
	return p
}

// MadeSlice is Made for a slice: the allocation of its backing array and
// the write of its elements up to its length, element by element as the
// other hooks of slices record them (ElemsW): the bytes of a []byte, so
// that a read of any one of them races with the write (as a word access,
// only every eighth did), and a range of bytes the analysis keeps a
// granule at a time (FastTrack.rangeBytes).
func MadeSlice[S ~[]E, E any](s S, site uint32, rec bool) S {
	MakeSlice(s, site)
	return ElemsW(s, site, rec)
}

// MadeMap is Made for a map: its creation and, if the call put entries in
// it, a write of the map.
func MadeMap[M ~map[K]V, K comparable, V any](m M, site uint32, rec bool) M {
	MakeMap(m, site)
	if len(m) > 0 && (ctl || on && rec) {
		mapHook(hookWrite, mapPtr(m), site, rec)
	}
	return m
}

// MakeSlice records the allocation of s's backing array (make([]T, n, c))
// and returns s.
func MakeSlice[S ~[]E, E any](s S, site uint32) S {
	if on && cap(s) > 0 {
		var e E
		allocEvent(unsafe.Pointer(unsafe.SliceData(s)), uintptr(cap(s))*unsafe.Sizeof(e), site)
	}
	return s
}

// MakeMap records the creation of map m (make(map[K]V)), which accesses
// name by the map's own pointer (see MR), and returns m.
func MakeMap[M ~map[K]V, K comparable, V any](m M, site uint32) M {
	if on {
		allocEvent(mapPtr(m), 1, site)
	}
	return m
}

// MakeChan records the creation of channel c (make(chan T, n)) and returns
// c: its allocation, at the goroutine that made it, before any other
// goroutine can reach it. Its message counters are made at its first
// operation (chanCounts): many channels are never used (one per node of an
// immutable tree, closed only if someone watches it), and a counter costs a
// weak pointer, a map entry and a cleanup. madeChans tells that operation
// the allocation is recorded already, so that reports name the make as the
// channel's origin. C is a channel type of any direction (make(chan<- T)
// is legal; a union of the three would leave the element type
// uninferable).
func MakeChan[C any](c C, site uint32) C {
	if on && live.Load() {
		p := chanPtr(c)
		allocEvent(p, chanAllocSize, site)
		a := uint64(uintptr(p))
		madeChans[madeSlot(a)].Store(a)
	}
	return c
}

// madeChans holds, direct-mapped by address, channels MakeChan recorded
// whose first operation has not come yet (chanCounts takes them out). A
// slot a later make took over costs only a second allocation event at the
// first operation, which names the operation as the channel's origin.
var madeChans [4096]OwnUint64

func madeSlot(a uint64) uint64 { return chanHash(a) % uint64(len(madeChans)) }

// AllocTrue is Alloc in an expression, for a variable an if or switch
// statement's init declares: it records the creation and returns true
// (if v := f(); rt.AllocTrue(&v, s, rec) && (cond) { ... }).
func AllocTrue[T any](p *T, site uint32, rec bool) bool {
	Alloc(p, site, rec)
	return true
}

// TagAfter returns x: a switch's tag, evaluated after the allocations its
// init records (switch v := f(); rt.TagAfter(rt.AllocTrue(&v, s, rec), tag)).
func TagAfter[T any](_ bool, x T) T { return x }
