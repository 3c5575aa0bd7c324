// Package liveness plays the part of Java's Thread.isAlive in the thesis'
// Account case study (RDIT, section 4.5): a goroutine's liveness, kept
// with synchronization of its own. The e2e test runs the account program
// with this package excluded from tracing, so that its synchronization is
// missing from the trace, as the JVM's native code is in the thesis: each
// call into it is a BarrierPair whose D reaches the Thread. Its word is
// kept with sync/atomic's functions, compiler intrinsics that racekit does
// not see in untraced code (its typed atomics, atomic.Bool..., it sees).
package liveness

import "sync/atomic"

// Thread is the liveness of one goroutine.
type Thread struct {
	done uint32
}

// New returns the liveness of a goroutine that has not ended.
func New() *Thread { return &Thread{} }

// Exit marks the goroutine as ended: everything it did before is visible
// to a goroutine that then sees IsAlive return false.
func (t *Thread) Exit() { atomic.StoreUint32(&t.done, 1) }

// IsAlive reports whether the goroutine has not called Exit yet.
func (t *Thread) IsAlive() bool { return atomic.LoadUint32(&t.done) == 0 }
