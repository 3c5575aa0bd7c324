package p

import (
	"reflect"
	"unsafe"
)

var shared []byte

// An assignment to a reflect header's Data field stays an assignment to
// it (the compiler's pointer store), its write recorded by a call before
// the statement; none before an if's init statement.
func headers(s string, p *reflect.SliceHeader, hs []reflect.SliceHeader, i int) []byte {
	var b []byte
	h := (*reflect.SliceHeader)(unsafe.Pointer(&b))
	h.Data = (*reflect.StringHeader)(unsafe.Pointer(&s)).Data
	h.Len, h.Cap = len(s), len(s)
	p.Data += 1
	hs[i].Data = h.Data
	if h.Data = 0; h.Len > 0 {
		h.Data = uintptr(unsafe.Pointer(&shared[0]))
	}
	go func() { p.Data = 0 }()
	return b
}
