// sync/atomic functions and types.
package p

import (
	"sync/atomic"
	"unsafe"
)

type cfg struct{ n int }

var (
	hits  int64
	flag  atomic.Bool
	cur   atomic.Pointer[cfg]
	total atomic.Uint64
	val   atomic.Value
	raw   unsafe.Pointer
)

func atomics() int64 {
	atomic.AddInt64(&hits, 1)
	if atomic.CompareAndSwapInt64(&hits, 1, 2) {
		atomic.StoreInt64(&hits, 3)
	}
	flag.Store(true)
	cur.Store(&cfg{n: 1})
	total.Add(2)
	val.Store("v")
	atomic.StorePointer(&raw, nil)
	if flag.Load() && cur.Load().n == 1 {
		return atomic.LoadInt64(&hits) + int64(total.Load())
	}
	return 0
}
