package rt

import (
	"reflect"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// Fields records what a std function does to the struct at p field by
// field (the O effect of instrument/stdfields.go): layout is a sequence of
// items, each a kind byte and uvarints. First, if the function takes the
// struct's own mutex, 'l' (Lock) or 's' (RLock) and the mutex's offset;
// then 'r' or 'w', an offset, an element size and a count: the elements
// read or written from p+offset; 'z' the same, each element written if its
// bytes are still zero and read if not (a field a lazy initializer sets);
// 'R' or 'W' and the same numbers: the object at the pointer (or the map)
// the word at p+offset holds, read or written at its first word. The accesses are recorded as a critical
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
var objectLocks [64]OwnMutex

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
			p, size := unsafe.Add(base, off), uintptr(elem*n)
			if op == 'R' || op == 'W' {
				if p, size = *(*unsafe.Pointer)(p), 1; p == nil {
					return
				}
			}
			if op == 'w' || op == 'W' {
				ctlWrite(p, size, site)
			} else {
				ctlRead(p, size, site)
			}
		})
	}
	if !on || !rec || !live.Load() {
		return
	}
	var mu *OwnMutex
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
		p := unsafe.Add(base, off)
		switch op {
		case 'r':
			rangeAccess(trace.OpRead, p, uintptr(elem), int(n), site)
		case 'w':
			rangeAccess(trace.OpWrite, p, uintptr(elem), int(n), site)
		case 'z':
			for i := uint64(0); i < n; i++ {
				e := unsafe.Add(p, i*elem)
				top := trace.OpRead
				if zeroBytes(e, uintptr(elem)) {
					top = trace.OpWrite
				}
				rangeAccess(top, e, uintptr(elem), 1, site)
			}
		case 'R', 'W':
			if q := *(*unsafe.Pointer)(p); q != nil {
				top := trace.OpRead
				if op == 'W' {
					top = trace.OpWrite
				}
				rangeAccess(top, q, 8, 1, site)
			}
		}
	})
	if mu != nil {
		emit(trace.OpRelease, flags, site, ptr(m))
		mu.Unlock()
	}
}

// zeroBytes reports whether the n bytes at p are all zero.
func zeroBytes(p unsafe.Pointer, n uintptr) bool {
	for _, b := range unsafe.Slice((*byte)(p), n) {
		if b != 0 {
			return false
		}
	}
	return true
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

// RAnyMap records a read of the map x holds, if it holds one, and returns
// x: a text/template's Execute reads the data it is given, and a map
// there is read as Go reads a map (one object, rt.MR).
func RAnyMap(x any, site uint32, rec bool) any {
	if x != nil && (ctl || on && rec) {
		if v := reflect.ValueOf(x); v.Kind() == reflect.Map && !v.IsNil() {
			mapHook(hookRead, v.UnsafePointer(), site, rec)
		}
	}
	return x
}
