package rt

import (
	"sync/atomic"
	"unsafe"
)

// rt's own atomic words. racekit patches sync/atomic's typed atomics
// (Bool, Int32, ..., Pointer) so that their methods report to rt
// (atomichook.go), as Go's race detector sees them inside the standard
// library; rt's own words must not report, nor cost a call into the hook
// at every event. These types are sync/atomic's, with the same layout
// and methods, built on its functions, which the patch leaves alone (the
// compiler's intrinsics).

// OwnBool is an atomic.Bool of rt's.
type OwnBool struct{ v uint32 }

func (x *OwnBool) Load() bool         { return atomic.LoadUint32(&x.v) != 0 }
func (x *OwnBool) Store(val bool)     { atomic.StoreUint32(&x.v, b32(val)) }
func (x *OwnBool) Swap(new bool) bool { return atomic.SwapUint32(&x.v, b32(new)) != 0 }
func (x *OwnBool) CompareAndSwap(old, new bool) bool {
	return atomic.CompareAndSwapUint32(&x.v, b32(old), b32(new))
}

func b32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// OwnInt32 is an atomic.Int32 of rt's.
type OwnInt32 struct{ v int32 }

func (x *OwnInt32) Load() int32           { return atomic.LoadInt32(&x.v) }
func (x *OwnInt32) Store(val int32)       { atomic.StoreInt32(&x.v, val) }
func (x *OwnInt32) Swap(new int32) int32  { return atomic.SwapInt32(&x.v, new) }
func (x *OwnInt32) Add(delta int32) int32 { return atomic.AddInt32(&x.v, delta) }
func (x *OwnInt32) CompareAndSwap(old, new int32) bool {
	return atomic.CompareAndSwapInt32(&x.v, old, new)
}

// OwnInt64 is an atomic.Int64 of rt's.
type OwnInt64 struct{ v int64 }

func (x *OwnInt64) Load() int64           { return atomic.LoadInt64(&x.v) }
func (x *OwnInt64) Store(val int64)       { atomic.StoreInt64(&x.v, val) }
func (x *OwnInt64) Swap(new int64) int64  { return atomic.SwapInt64(&x.v, new) }
func (x *OwnInt64) Add(delta int64) int64 { return atomic.AddInt64(&x.v, delta) }
func (x *OwnInt64) CompareAndSwap(old, new int64) bool {
	return atomic.CompareAndSwapInt64(&x.v, old, new)
}

// OwnUint32 is an atomic.Uint32 of rt's.
type OwnUint32 struct{ v uint32 }

func (x *OwnUint32) Load() uint32            { return atomic.LoadUint32(&x.v) }
func (x *OwnUint32) Store(val uint32)        { atomic.StoreUint32(&x.v, val) }
func (x *OwnUint32) Swap(new uint32) uint32  { return atomic.SwapUint32(&x.v, new) }
func (x *OwnUint32) Add(delta uint32) uint32 { return atomic.AddUint32(&x.v, delta) }
func (x *OwnUint32) And(mask uint32) uint32  { return atomic.AndUint32(&x.v, mask) }
func (x *OwnUint32) Or(mask uint32) uint32   { return atomic.OrUint32(&x.v, mask) }
func (x *OwnUint32) CompareAndSwap(old, new uint32) bool {
	return atomic.CompareAndSwapUint32(&x.v, old, new)
}

// OwnUint64 is an atomic.Uint64 of rt's.
type OwnUint64 struct{ v uint64 }

func (x *OwnUint64) Load() uint64            { return atomic.LoadUint64(&x.v) }
func (x *OwnUint64) Store(val uint64)        { atomic.StoreUint64(&x.v, val) }
func (x *OwnUint64) Swap(new uint64) uint64  { return atomic.SwapUint64(&x.v, new) }
func (x *OwnUint64) Add(delta uint64) uint64 { return atomic.AddUint64(&x.v, delta) }
func (x *OwnUint64) And(mask uint64) uint64  { return atomic.AndUint64(&x.v, mask) }
func (x *OwnUint64) Or(mask uint64) uint64   { return atomic.OrUint64(&x.v, mask) }
func (x *OwnUint64) CompareAndSwap(old, new uint64) bool {
	return atomic.CompareAndSwapUint64(&x.v, old, new)
}

// OwnPointer is an atomic.Pointer of rt's.
type OwnPointer[T any] struct{ v unsafe.Pointer }

func (x *OwnPointer[T]) Load() *T     { return (*T)(atomic.LoadPointer(&x.v)) }
func (x *OwnPointer[T]) Store(val *T) { atomic.StorePointer(&x.v, unsafe.Pointer(val)) }
func (x *OwnPointer[T]) Swap(new *T) *T {
	return (*T)(atomic.SwapPointer(&x.v, unsafe.Pointer(new)))
}
func (x *OwnPointer[T]) CompareAndSwap(old, new *T) bool {
	return atomic.CompareAndSwapPointer(&x.v, unsafe.Pointer(old), unsafe.Pointer(new))
}

// OwnOnce is a sync.Once of rt's (and rttest's): sync.Once's done flag is
// a typed atomic, whose store by the first caller and loads by later ones
// the patched sync/atomic reports, which would order the program's
// goroutines that reach rt's lazy initializations.
type OwnOnce struct {
	done OwnBool
	mu   OwnMutex
}

// Do calls f if and only if Do is being called for the first time on o.
func (o *OwnOnce) Do(f func()) {
	if o.done.Load() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.done.Load() {
		defer o.done.Store(true)
		f()
	}
}

// OwnOnceValue is sync.OnceValue on an OwnOnce.
func OwnOnceValue[T any](f func() T) func() T {
	var (
		o OwnOnce
		v T
	)
	return func() T {
		o.Do(func() { v = f() })
		return v
	}
}

// OwnOnceValues is sync.OnceValues on an OwnOnce.
func OwnOnceValues[T1, T2 any](f func() (T1, T2)) func() (T1, T2) {
	var (
		o  OwnOnce
		v1 T1
		v2 T2
	)
	return func() (T1, T2) {
		o.Do(func() { v1, v2 = f() })
		return v1, v2
	}
}
