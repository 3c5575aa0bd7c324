package rt

import (
	"sync/atomic"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// atomic.Values of untraced code. racekit patches package sync/atomic so
// that each method of an atomic.Value calls a hook before and after it
// (instrument/synchook.go, valueFuncs); setValueHook, set by the file
// racekit adds to rt's copy with the patch, installs onValue there. Go's
// race detector sees the atomic operations inside a Value, so a Store in
// std (an expvar.String's Set, a context's cancel) is ordered before the
// Load on another goroutine that sees its value; rt saw only traced
// code's. Each untraced method is recorded as traced code's are
// (AtomicValueLoad...: atomic_gen.go): under the Value's stripe, an
// operation on its type word (valueTypeOp) and one on its data word. As
// for sync.Maps (maphook.go), traced code's methods pass through the
// wrappers with their stripe held, which skips them, and so do rt's own
// looks (ctxtree.go's peekDone); only goroutines rt has a state for
// record.

// setValueHook installs sync/atomic's Value hook; nil without the patched
// package.
var setValueHook func(h func(v unsafe.Pointer, op uint8) bool)

func installValueHook() {
	if setValueHook != nil {
		setValueHook(onValue)
	}
}

// The operations sync/atomic's Value hook passes.
const (
	valueBeginLoad  = 0 // a Load begins: does rt record it?
	valueBeginStore = 1 // a Store begins
	valueBeginRMW   = 2 // a Swap or CompareAndSwap begins
	valueEndLoad    = 3 // the method recorded ends: a load of the data word
	valueEndStore   = 4 // a store
	valueEndRMW     = 5 // a read-modify-write (a Swap, a CompareAndSwap that swapped)
	valueEndFailed  = 6 // a CompareAndSwap that did not swap: a load of both words
)

// onValue runs in package sync/atomic on the goroutine of the method.
func onValue(p unsafe.Pointer, op uint8) bool {
	a := ptr(p)
	switch op {
	case valueBeginLoad, valueBeginStore, valueBeginRMW:
		g := mapHookOn()
		if g == nil {
			return false
		}
		stripeOf(a).Lock()
		// Load within the stripe: the wrapper skips it.
		g.valueTyp = valueTypeOp((*atomic.Value)(p), op != valueBeginLoad)
	default:
		// The stripe is held since the begin: released whatever happened
		// to the trace meanwhile.
		if g := known(); g != nil && on && live.Load() {
			typ, data := g.valueTyp, trace.OpAtomicLoad
			switch op {
			case valueEndStore:
				data = trace.OpAtomicStore
			case valueEndRMW:
				data = trace.OpAtomicRMW
			case valueEndFailed:
				typ = trace.OpAtomicLoad
			}
			atomicRecord(g, typ, trace.FlagValueUnknown, 0, a, 0)
			atomicRecord(g, data, trace.FlagValueUnknown, 0, a+8, 0)
		}
		stripeOf(a).Unlock()
	}
	return true
}
