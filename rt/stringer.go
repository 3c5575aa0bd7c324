package rt

import (
	"reflect"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// String methods of std values reached through an interface.
//
// A call of String on an interface (c.LocalAddr().String() on a net.Addr,
// fmt printing a value through its String method) runs untraced std code
// when the dynamic value is std's. Most of those methods read only the
// value itself; net's addresses also read the bytes of the IP slice the
// program made and gave them (a copy another goroutine may still be
// writing: lesismal/nbio's TestUDP, corpus session 55). The interceptor
// table (instrument/stdcalls.go, "DP") records that read when the static
// type is known; RStringer and the fmt walk record it for the dynamic one.

// stringerKind is what the String method of a std type reads beyond the
// value it is called on: nothing rt records, the elements of the slices
// the struct a pointer points to holds (net.TCPAddr's IP: RDeepProgram),
// or a byte slice's elements (net.IP).
type stringerKind uint8

const (
	stringerNone stringerKind = iota
	stringerDeep
	stringerElems
)

// stdStringers are the std types whose String reads program-given slices,
// as instrument's table models the same methods (net.TCPAddr.String "r:DP",
// net.IP.String "r:ER").
var stdStringers = map[[2]string]stringerKind{
	{"net", "TCPAddr"}:      stringerDeep,
	{"net", "UDPAddr"}:      stringerDeep,
	{"net", "IPAddr"}:       stringerDeep,
	{"net", "IPNet"}:        stringerDeep,
	{"net", "IP"}:           stringerElems,
	{"net", "IPMask"}:       stringerElems,
	{"net", "HardwareAddr"}: stringerElems,
}

var stringerCache OwnMap // reflect.Type → stringerKind

// stringerOf returns what t's String method reads (t the dynamic type of
// an interface value): stringerDeep for a pointer to a struct of
// stdStringers, stringerElems for a slice type of them.
func stringerOf(t reflect.Type) stringerKind {
	if k, ok := stringerCache.Load(t); ok {
		return k.(stringerKind)
	}
	k := stringerNone
	switch t.Kind() {
	case reflect.Pointer:
		if e := t.Elem(); e.Kind() == reflect.Struct && stdStringers[[2]string{e.PkgPath(), e.Name()}] == stringerDeep {
			k = stringerDeep
		}
	case reflect.Slice:
		if stdStringers[[2]string{t.PkgPath(), t.Name()}] == stringerElems {
			k = stringerElems
		}
	}
	stringerCache.Store(t, k)
	return k
}

// RStringer records the reads of the String method of the value v holds
// (v an interface operand whose String is called: instrument's "DS"
// effect) when that method is one of stdStringers', and returns v.
func RStringer[T any](v T, site uint32, rec bool) T {
	if (ctl || on && rec) && any(v) != nil {
		stringerRead(any(v), site, rec)
	}
	return v
}

//go:noinline
func stringerRead(x any, site uint32, rec bool) {
	t := reflect.TypeOf(x)
	words := (*[2]unsafe.Pointer)(unsafe.Pointer(&x))
	switch stringerOf(t) {
	case stringerDeep:
		if words[1] != nil {
			readDeepOf(words[1], t.Elem(), site, rec, false)
		}
	case stringerElems:
		readElemsOf(words[1], t.Elem().Size(), site, rec)
	}
}

// readElemsOf is Elems of the slice whose header is at h (elements of
// elem bytes).
func readElemsOf(h unsafe.Pointer, elem uintptr, site uint32, rec bool) {
	s := (*sliceHeader)(h)
	if s == nil || s.len == 0 || s.data == nil {
		return
	}
	if ctl {
		ctlRead(s.data, uintptr(s.len)*elem, site)
	}
	if on && rec {
		rangeAccess(trace.OpRead, s.data, elem, s.len, site)
	}
}

// stringer records, for the fmt walk, the reads of the String method
// fmt calls on the value of type t at p, where the walk stops (fmtStop).
func (w *jsonWalk) stringer(p unsafe.Pointer, t reflect.Type) {
	if w.left <= 0 {
		return
	}
	switch stringerOf(t) {
	case stringerDeep:
		w.left--
		if q := *(*unsafe.Pointer)(p); q != nil {
			readDeepOf(q, t.Elem(), w.site, true, false)
		}
	case stringerElems:
		w.left--
		readElemsOf(p, t.Elem().Size(), w.site, true)
	}
}
