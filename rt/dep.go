package rt

import (
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// DepBefore is x, the receiver (a pointer) of a call into an untraced
// dependency, after recording a release of the object it points to;
// DepAfter records its acquire after the call returns. Only the main
// module is traced, so a dependency's own locks are unseen: an object of
// its (a cache, a pool, a client) orders the calls made on it, as those
// locks do, so what a goroutine did before a call on it is ordered before
// what another does after a later call on it (cschleiden/go-workflows hands
// an executor from one worker to the next through a jellydator/ttlcache
// Cache: corpus, session 26). Only adds order: races may be hidden, none
// invented.
func DepBefore[T any](x T, site uint32) T {
	if on {
		if p := *(*uintptr)(unsafe.Pointer(&x)); p != 0 {
			emitEdge(trace.OpSyncRelease, site, uint64(p))
		}
	}
	return x
}

// DepArgBefore is a, the last argument of a call into an untraced
// dependency on x, after recording DepBefore's release: the release comes
// after the arguments are evaluated (b.Put(fresh()): what fresh writes is
// handed over with its result).
func DepArgBefore[A, T any](a A, x T, site uint32) A {
	DepBefore(x, site)
	return a
}

// DepAfter records the acquire that follows a call into an untraced
// dependency on x (see DepBefore).
func DepAfter[T any](x T, site uint32) {
	if on {
		if p := *(*uintptr)(unsafe.Pointer(&x)); p != 0 {
			emitEdge(trace.OpSyncAcquire, site, uint64(p))
		}
	}
}

// DepAfterV is DepAfter around a call with one result: DepAfterV(f(), x, site).
func DepAfterV[V, T any](v V, x T, site uint32) V {
	DepAfter(x, site)
	return v
}
