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
//
// A Load is recorded only when it can add an edge: context.Done loads its
// Value at every call, and net/http calls it on every request, so that
// one record per Load cost httpsvc a sixth of its run
// (bench/results/overhead/session84-before-after.md). The wrapper loads
// first, then asks (valueLoaded) whether a store on the Value's stripe
// began since this goroutine last recorded a Load of it (each stripe
// counts its stores: valueTypeOp, under the stripe, for traced and
// untraced stores alike); only then does it load again under the stripe
// and record. A Load that finds the count unchanged read a value whose
// store the goroutine had already acquired (the store counted before it
// stored, and the count is read after the load), so its edge is
// redundant, as a second acquire of an unchanged release is in FastTrack.
// What such a Load also drops is its access: a plain write racing with the
// second Load and not the first goes unseen.

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
	valueLoaded     = 0 // a Load done: does rt record it? (then the wrapper loads again, under the stripe)
	valueBeginStore = 1 // a Store begins
	valueBeginRMW   = 2 // a Swap or CompareAndSwap begins
	valueEndLoad    = 3 // the method recorded ends: a load of the data word
	valueEndStore   = 4 // a store
	valueEndRMW     = 5 // a read-modify-write (a Swap, a CompareAndSwap that swapped)
	valueEndFailed  = 6 // a CompareAndSwap that did not swap: a load of both words
)

// valueSeen is a Value whose Load a goroutine recorded, and its stripe's
// store count then.
type valueSeen struct{ a, stores uint64 }

// valueSlot is where a goroutine keeps what it saw of the Value at a.
func (g *gstate) valueSlot(a uint64) *valueSeen {
	return &g.valueSeen[(a>>4)%uint64(len(g.valueSeen))]
}

// onValue runs in package sync/atomic on the goroutine of the method.
func onValue(p unsafe.Pointer, op uint8) bool {
	a := ptr(p)
	switch op {
	case valueLoaded, valueBeginStore, valueBeginRMW:
		g := lockHookG()
		if g == nil {
			return false
		}
		st := stripeAt(a)
		if op == valueLoaded {
			if seen := g.valueSlot(a); seen.a == a && seen.stores == st.valueStores.Load() {
				return false
			}
		}
		st.Lock()
		// Load within the stripe: the wrapper skips it.
		g.valueTyp = valueTypeOp((*atomic.Value)(p), op != valueLoaded)
		if op == valueLoaded {
			*g.valueSlot(a) = valueSeen{a, st.valueStores.Load()}
		}
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
