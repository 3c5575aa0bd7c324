//go:build unix

package rt

import (
	"syscall"
	"unsafe"
)

// newRecs returns n zeroed records in memory mapped from the OS (outside
// the Go heap), or on the heap if the mapping fails.
func newRecs(n int) []rec { return mapped[rec](n) }

// newChunks returns n zeroed chunk headers, as newRecs.
func newChunks(n int) []chunk { return mapped[chunk](n) }

// mapped returns n zeroed values of T in memory mapped from the OS, or on
// the heap if the mapping fails. T holds no pointer into the Go heap.
func mapped[T any](n int) []T {
	var t T
	b, err := syscall.Mmap(-1, 0, n*int(unsafe.Sizeof(t)), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]T, n)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
