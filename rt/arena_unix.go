//go:build unix

package rt

import (
	"syscall"
	"unsafe"
)

// newRecs returns n zeroed records in memory mapped from the OS (outside
// the Go heap), or on the heap if the mapping fails.
func newRecs(n int) []rec {
	b, err := syscall.Mmap(-1, 0, n*int(unsafe.Sizeof(rec{})), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]rec, n)
	}
	return unsafe.Slice((*rec)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
