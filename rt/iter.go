package rt

import (
	"iter"

	"github.com/racekit/racekit/trace"
)

// iter.Pull and iter.Pull2 run the sequence in a coroutine: a goroutine of
// the runtime's, born in untraced code, that runs only while its caller
// waits in next or stop. Go's race detector orders the two at each switch
// (iter.go: race.Release before coroswitch, race.Acquire after it, and a
// race.Write of its racer word in next and stop, so that two goroutines
// calling them at once race); rt records the same on an object of the
// pull's own. Without it what the coroutine did was ordered after the
// events before its first one only, and raced with its caller's later
// lock holders (maypok86/otter's policy merges two lists' Backward
// sequences with iter.Pull under its eviction lock: a false alarm).

// IterPull is iter.Pull(seq).
func IterPull[V any](seq iter.Seq[V], site uint32) (func() (V, bool), func()) {
	obj := NewObject()
	racer := new(uint64)
	next, stop := iter.Pull(func(yield func(V) bool) {
		pullEdge(trace.OpSyncAcquire, site, obj) // started by the first next
		defer pullEdge(trace.OpSyncRelease, site, obj)
		seq(func(v V) bool {
			pullEdge(trace.OpSyncRelease, site, obj)
			more := yield(v)
			pullEdge(trace.OpSyncAcquire, site, obj)
			return more
		})
	})
	return func() (V, bool) {
			W(racer, site, true)
			pullEdge(trace.OpSyncRelease, site, obj)
			v, ok := next()
			pullEdge(trace.OpSyncAcquire, site, obj)
			return v, ok
		}, func() {
			W(racer, site, true)
			pullEdge(trace.OpSyncRelease, site, obj)
			stop()
			pullEdge(trace.OpSyncAcquire, site, obj)
		}
}

// IterPull2 is iter.Pull2(seq).
func IterPull2[K, V any](seq iter.Seq2[K, V], site uint32) (func() (K, V, bool), func()) {
	obj := NewObject()
	racer := new(uint64)
	next, stop := iter.Pull2(func(yield func(K, V) bool) {
		pullEdge(trace.OpSyncAcquire, site, obj)
		defer pullEdge(trace.OpSyncRelease, site, obj)
		seq(func(k K, v V) bool {
			pullEdge(trace.OpSyncRelease, site, obj)
			more := yield(k, v)
			pullEdge(trace.OpSyncAcquire, site, obj)
			return more
		})
	})
	return func() (K, V, bool) {
			W(racer, site, true)
			pullEdge(trace.OpSyncRelease, site, obj)
			k, v, ok := next()
			pullEdge(trace.OpSyncAcquire, site, obj)
			return k, v, ok
		}, func() {
			W(racer, site, true)
			pullEdge(trace.OpSyncRelease, site, obj)
			stop()
			pullEdge(trace.OpSyncAcquire, site, obj)
		}
}

// pullEdge records op on a pull's object, when recording.
func pullEdge(op trace.Op, site uint32, obj uint64) {
	if on {
		emitEdge(op, site, obj)
	}
}
