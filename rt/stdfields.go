package rt

import (
	"sync"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// Fields records what a std function does to the struct at p field by
// field (the O effect of instrument/stdfields.go): layout is a sequence of
// items, each a kind byte and uvarints. First, if the function takes the
// struct's own mutex, 'l' (Lock) or 's' (RLock) and the mutex's offset;
// then 'r' or 'w', an offset, an element size and a count: the elements
// read or written from p+offset. The accesses are recorded as a critical
// section of that mutex (an acquire, the accesses, a release), which
// orders them after the sections other calls recorded on it, as the
// function's own Lock does.
func Fields[T any](p *T, layout string, site uint32, rec bool) *T {
	if p != nil && (ctl || on && rec) {
		fieldsAccess(unsafe.Pointer(p), layout, site, rec)
	}
	return p
}

// objectLocks keep each recorded section whole: two goroutines calling
// into one struct record their sections one after the other, so that no
// acquire of the mutex falls inside another goroutine's section. (The
// function's real Lock comes after, in std; rt's own stripes never wait on
// it.)
var objectLocks [64]sync.Mutex

func fieldsAccess(base unsafe.Pointer, layout string, site uint32, rec bool) {
	var lockKind byte
	var lockOff uint64
	items := layout
	if len(items) > 0 && (items[0] == 'l' || items[0] == 's') {
		lockKind = items[0]
		items = items[1:]
		lockOff, items = layoutUvarint(items)
	}
	if ctl { // controlled mode: a scheduling point per field (sched.go)
		eachLayoutItem(items, func(op byte, off, elem, n uint64) {
			if op == 'w' {
				ctlWrite(unsafe.Add(base, off), uintptr(elem*n), site)
			} else {
				ctlRead(unsafe.Add(base, off), uintptr(elem*n), site)
			}
		})
	}
	if !on || !rec || !live.Load() {
		return
	}
	var mu *sync.Mutex
	var flags trace.Flags
	m := unsafe.Add(base, lockOff)
	if lockKind != 0 {
		if lockKind == 's' {
			flags = trace.FlagReadLock
		}
		mu = &objectLocks[(ptr(m)>>3)%uint64(len(objectLocks))]
		mu.Lock()
		emit(trace.OpAcquire, flags, site, ptr(m))
	}
	eachLayoutItem(items, func(op byte, off, elem, n uint64) {
		top := trace.OpRead
		if op == 'w' {
			top = trace.OpWrite
		}
		rangeAccess(top, unsafe.Add(base, off), uintptr(elem), int(n), site)
	})
	if mu != nil {
		emit(trace.OpRelease, flags, site, ptr(m))
		mu.Unlock()
	}
}

// eachLayoutItem calls f for each access item of a Fields layout.
func eachLayoutItem(items string, f func(op byte, off, elem, n uint64)) {
	for len(items) > 0 {
		op := items[0]
		var off, elem, n uint64
		off, items = layoutUvarint(items[1:])
		elem, items = layoutUvarint(items)
		n, items = layoutUvarint(items)
		f(op, off, elem, n)
	}
}

// layoutUvarint decodes a uvarint at the start of s (the instrumenter's
// encoding/binary one) and returns it with the rest of s.
func layoutUvarint(s string) (uint64, string) {
	var x uint64
	for i, shift := 0, uint(0); i < len(s) && shift < 64; i, shift = i+1, shift+7 {
		b := s[i]
		x |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return x, s[i+1:]
		}
	}
	return x, ""
}
