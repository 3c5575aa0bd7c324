package rt

import (
	"sync/atomic"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// The atomics of untraced code. racekit patches package sync/atomic so
// that each method of an atomic.Value (instrument/synchook.go,
// valueFuncs) and of its typed atomics, Bool, Int32, Int64, Uint32,
// Uint64, Uintptr and Pointer (typedPatch), calls a hook before and after
// it; setValueHook and setTypedHook, set by the files racekit adds to
// rt's copy with the patch, install onValue and onTyped there. Go's race
// detector sees the atomic operations of std, so a Store there (an
// expvar.String's or expvar.Int's, slog.SetDefault's, a sync.Once's done
// flag) is ordered before the Load on another goroutine that sees its
// value; rt saw only traced code's. Each untraced method is recorded as
// traced code's are (AtomicValueLoad, AtomicInt64Add...: atomic_gen.go):
// under the word's stripe, an operation on the word (a Value: on its type
// word, valueTypeOp, and on its data word). Traced code's methods pass
// through the wrappers with their stripe held, which skips them, and so
// do rt's own looks (ctxtree.go's peekDone; rt's own words are not
// sync/atomic's: ownatomic.go) and the atomics inside package sync that
// the race build does not see (an RWMutex's reader counts, a WaitGroup's
// state, between its race.Disable and race.Enable: the patched package
// sync brackets them, syncSkipEnter); only goroutines rt has a state for
// record.
//
// A Load is recorded only when it can add an edge: context.Done loads its
// Value at every call, and net/http calls it on every request, so that
// one record per Load cost httpsvc a sixth of its run
// (bench/results/overhead/session84-before-after.md). The wrapper loads
// first, then asks (atomicLoaded) whether a store on the word began since
// this goroutine last recorded a Load of it (storeCounts counts the stores
// that pass through the wrappers, by address, traced and untraced, under
// the word's stripe when recorded); only then does it load again under
// the stripe and record. A Load that finds the count unchanged read a
// value whose store the goroutine had already acquired (the store counted
// before it stored, and the count is read after the load), so its edge is
// redundant, as a second acquire of an unchanged release is in FastTrack.
// What such a Load also drops is its access: a plain write racing with the
// second Load and not the first goes unseen. Traced code's sync/atomic
// functions (atomic.AddInt64(&x, 1)) do not count: a typed atomic's word
// is the type's own.

// setValueHook and setTypedHook install sync/atomic's hooks; nil without
// the patched package.
var (
	setValueHook func(h func(v unsafe.Pointer, op uint8) bool)
	setTypedHook func(h func(x unsafe.Pointer, op uint8) bool)
)

func installValueHook() {
	if setValueHook != nil {
		setValueHook(onValue)
	}
	if setTypedHook != nil {
		setTypedHook(onTyped)
	}
}

// The operations sync/atomic's hooks pass.
const (
	atomicLoaded     = 0 // a Load done: does rt record it? (then the wrapper loads again, under the stripe)
	atomicBeginStore = 1 // a Store begins
	atomicBeginRMW   = 2 // a Swap, CompareAndSwap, Add, And or Or begins
	atomicEndLoad    = 3 // the method recorded ends: a load
	atomicEndStore   = 4 // a store
	atomicEndRMW     = 5 // a read-modify-write (a Swap, a CompareAndSwap that swapped, an Add...)
	atomicEndFailed  = 6 // a CompareAndSwap that did not swap: a load
)

// storeCounts counts, by address, the stores of atomic words that passed
// through sync/atomic's wrappers.
var storeCounts [1024]OwnUint64

func storeCount(a uint64) *OwnUint64 {
	return &storeCounts[(a>>3^a>>13)%uint64(len(storeCounts))]
}

// atomicSeen is a word whose untraced Load a goroutine recorded, and its
// store count then.
type atomicSeen struct{ a, stores uint64 }

// atomicSlot is where a goroutine keeps what it saw of the word at a.
func (g *gstate) atomicSlot(a uint64) *atomicSeen {
	return &g.atomicSeen[(a>>3)%uint64(len(g.atomicSeen))]
}

// loadSkipped is an untraced Load's fast path (math/rand's functions load
// their generator's Pointer at every call): true when rt records nothing
// for it, because it skips the goroutine, has no state for it, or the
// goroutine's last recorded Load of the word saw its last counted store;
// false leaves it to atomicBeginUntraced. lockHookG's and known()'s
// checks, from one look at the g.
func loadSkipped(a uint64) bool {
	if !lockHooked || !on || ctl {
		return true
	}
	gp := getg()
	if *(*uint32)(unsafe.Add(gp, chanGOffsets[2])) != 0 {
		return true // skipped (syncSkipped)
	}
	if goidOff == 0 {
		return false
	}
	id := *(*uint64)(unsafe.Add(gp, chanGOffsets[1]))
	if id != *(*uint64)(unsafe.Add(gp, goidOff)) {
		return true // no state of rt's (lockHookG)
	}
	s := gtab[id&(gtabSize-1)].Load()
	if s == nil || s.goid != id || s.traceNo != traceCount.Load() {
		return false
	}
	seen := s.atomicSlot(a)
	return seen.a == a && seen.stores == storeCount(a).Load()
}

// atomicBeginUntraced is the start of a method of sync/atomic's: whether
// rt records it, and then with the stripe of a locked until its end.
func atomicBeginUntraced(p unsafe.Pointer, op uint8) *gstate {
	if p == nil {
		return nil // the method panics
	}
	a := ptr(p)
	g := lockHookG()
	if g == nil {
		if op != atomicLoaded {
			// Traced code's store, inside its hook with the stripe
			// held, or one rt does not record: counted all the same.
			storeCount(a).Add(1)
		}
		return nil
	}
	n := storeCount(a)
	if op == atomicLoaded {
		if seen := g.atomicSlot(a); seen.a == a && seen.stores == n.Load() {
			return nil
		}
	}
	stripeOf(a).Lock()
	if op == atomicLoaded {
		*g.atomicSlot(a) = atomicSeen{a, n.Load()}
	} else {
		n.Add(1)
	}
	return g
}

// atomicEndOp is what a method recorded did to its word.
func atomicEndOp(op uint8) (trace.Op, trace.Flags) {
	switch op {
	case atomicEndStore:
		return trace.OpAtomicStore, trace.FlagValueUnknown
	case atomicEndRMW:
		return trace.OpAtomicRMW, trace.FlagValueUnknown
	case atomicEndFailed:
		return trace.OpAtomicLoad, trace.FlagValueUnknown | trace.FlagCASFailed
	}
	return trace.OpAtomicLoad, trace.FlagValueUnknown
}

// onTyped runs in package sync/atomic on the goroutine of a typed
// atomic's method.
func onTyped(p unsafe.Pointer, op uint8) bool {
	if op == atomicLoaded && loadSkipped(ptr(p)) {
		return false
	}
	if op <= atomicBeginRMW {
		return atomicBeginUntraced(p, op) != nil
	}
	// The stripe is held since the begin: released whatever happened to
	// the trace meanwhile.
	a := ptr(p)
	if g := known(); g != nil && on && live.Load() {
		o, flags := atomicEndOp(op)
		atomicRecord(g, o, flags, 0, a, 0)
	}
	stripeOf(a).Unlock()
	return true
}

// onValue runs in package sync/atomic on the goroutine of an
// atomic.Value's method.
func onValue(p unsafe.Pointer, op uint8) bool {
	a := ptr(p)
	if op == atomicLoaded && loadSkipped(a) {
		return false
	}
	if op <= atomicBeginRMW {
		g := atomicBeginUntraced(p, op)
		if g == nil {
			return false
		}
		// Load within the stripe: the wrapper skips it.
		g.valueTyp = valueTypeOp((*atomic.Value)(p), op != atomicLoaded)
		return true
	}
	if g := known(); g != nil && on && live.Load() {
		typ := g.valueTyp
		if op == atomicEndFailed {
			typ = trace.OpAtomicLoad
		}
		data, _ := atomicEndOp(op)
		atomicRecord(g, typ, trace.FlagValueUnknown, 0, a, 0)
		atomicRecord(g, data, trace.FlagValueUnknown, 0, a+8, 0)
	}
	stripeOf(a).Unlock()
	return true
}
