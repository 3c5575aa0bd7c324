package callers

import (
	"reflect"
	"testing"
	"unsafe"
)

// hdrFromUTF16 makes a string of b's bytes without a copy, as
// dop251/goja's unistring.FromUtf16 does: the compiler takes the
// assignment to the header's Data field as a store of a pointer, so that
// b's array escapes and lives as long as the string.
func hdrFromUTF16(b []uint16) string {
	var s string
	h := (*reflect.StringHeader)(unsafe.Pointer(&s))
	h.Data = uintptr(unsafe.Pointer(&b[0]))
	h.Len = len(b) * 2
	return s
}

// hdrSliceOf is hdrFromUTF16's slice form.
func hdrSliceOf(s string) []byte {
	var b []byte
	h := (*reflect.SliceHeader)(unsafe.Pointer(&b))
	h.Data = (*reflect.StringHeader)(unsafe.Pointer(&s)).Data
	h.Len, h.Cap = len(s), len(s)
	return b
}

// hdrMade builds the array that hdrFromUTF16 makes a string of: small enough to
// be on the stack had it not escaped.
func hdrMade(n int) string {
	b := make([]uint16, n)
	for i := range b {
		b[i] = uint16('a' + i)
	}
	return hdrFromUTF16(b)
}

// hdrClobber overwrites the stack below its caller.
//
//go:noinline
func hdrClobber(n int) int {
	var buf [512]uint64
	for i := range buf {
		buf[i] = uint64(n) * 0x9E3779B97F4A7C15
	}
	return int(buf[n%512])
}

// TestHeaderDataKeepsMemory: a string made through a reflect.StringHeader
// (and a slice through a SliceHeader) keeps the memory its Data points to;
// racekit's hook around the assignment had let the array stay on the stack
// of made, which later calls overwrote.
func TestHeaderDataKeepsMemory(t *testing.T) {
	hdrClobber(1) // the stack grown first: the next call's frame stays where it is
	str := hdrMade(3)
	hdrClobber(7)
	if str != "a\x00b\x00c\x00" {
		t.Fatalf("string %q, want %q", str, "a\x00b\x00c\x00")
	}
	if b := hdrSliceOf(str); string(b) != str {
		t.Fatalf("slice %q, want %q", b, str)
	}
}

// hdrKept is the array hdrKeepByRead reaches through a header's Data.
var hdrKept unsafe.Pointer

// hdrKeepByRead keeps b's array through the pointer its header's Data
// holds: read from the field, the compiler follows it too (the array
// escapes), which it cannot through a hook's pointer to the field.
func hdrKeepByRead(n int) {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('x' + i)
	}
	hdrKept = unsafe.Pointer((*reflect.SliceHeader)(unsafe.Pointer(&b)).Data)
}

// TestHeaderDataReadKeepsMemory: the array a header's Data is read from
// lives on after its function returns.
func TestHeaderDataReadKeepsMemory(t *testing.T) {
	hdrClobber(1) // the stack grown first: the next call's frame stays where it is
	hdrKeepByRead(3)
	hdrClobber(9)
	if got := unsafe.Slice((*byte)(hdrKept), 3); string(got) != "xyz" {
		t.Fatalf("array %q, want %q", got, "xyz")
	}
}
