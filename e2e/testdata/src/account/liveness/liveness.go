// Package liveness plays the part of Java's Thread.isAlive in the thesis'
// Account case study (RDIT, section 4.5): a goroutine's liveness, kept
// with synchronization of its own. The e2e test runs the account program
// with this package excluded from tracing, so that its synchronization is
// missing from the trace, as the JVM's native code is in the thesis: each
// call into it is a BarrierPair whose D reaches the Thread.
package liveness

import "sync/atomic"

// Thread is the liveness of one goroutine.
type Thread struct {
	done atomic.Bool
}

// New returns the liveness of a goroutine that has not ended.
func New() *Thread { return &Thread{} }

// Exit marks the goroutine as ended: everything it did before is visible
// to a goroutine that then sees IsAlive return false.
func (t *Thread) Exit() { t.done.Store(true) }

// IsAlive reports whether the goroutine has not called Exit yet.
func (t *Thread) IsAlive() bool { return !t.done.Load() }
