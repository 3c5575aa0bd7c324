package rt

import (
	"math/bits"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// Every allocation, seen where Go's race detector sees it. racekit patches
// the Go runtime of the build so that mallocgc calls a hook after each
// allocation, where it would call racemalloc in a race build
// (instrument/runtimehook.go); setAllocHook, set by the file racekit adds
// to rt's copy, installs onMalloc there. The allocation becomes an alloc
// event, which clears the detectors' shadow state for its bytes: the
// accesses of the dead object that was at that address do not meet the new
// one (issue 28, memory reuse: a std object at the address of a dead
// object of the program was a false race). Without the patch (rt's own
// tests, a runtime racekit cannot patch) only the allocations rt sees
// otherwise are recorded (New, Alloc, internalArray, ...).

// setAllocHook installs the runtime's allocation hook; nil without the
// patched runtime.
var setAllocHook func(h func(p unsafe.Pointer, size uintptr))

// allocRange is a span of bytes allocated since the goroutine's last
// event.
type allocRange struct {
	lo, hi uint64
}

// maxPendingAllocs bounds the ranges a goroutine notes between two of its
// events; past it an allocation is dropped.
// Adjacent allocations, the common case (one span's objects in order),
// join one range.
const maxPendingAllocs = 1 << 14

var (
	// Allocations by goroutines rt has no state for (born in untraced code
	// that never ran traced code: net/http's, the framework's), written by
	// the next goroutine that records an event; in shards by goroutine, so
	// that such goroutines do not all take one lock at every allocation.
	// Bit k of untracedMask is set, under shard k's lock, while shard k
	// holds a range.
	untracedShards [64]allocShard
	untracedMask   OwnUint64
)

func installAllocHook() {
	if setAllocHook != nil {
		setAllocHook(onMalloc)
	}
}

// onMalloc runs in the runtime's mallocgc on the goroutine that allocated,
// never inside itself (the runtime's guard). It may interrupt rt in the
// middle of writing one of that goroutine's events (rt allocates a chunk),
// so it writes nothing: it notes the range, and the goroutine's next event
// writes it first (flushAllocs, from prepSlow, which tick 0 brings the
// next plain event to, and from sync). The alloc event then sorts after
// the allocation, never before: it comes after every access to the dead
// object that was there.
//
// Written late, it may also come after accesses to an object allocated at
// that address later still: when the goroutine stays in untraced code
// through a GC cycle, the object it allocated dies in that code, and its
// memory goes to another object that traced code then accesses. The alloc
// event forgets those accesses, and a race with them may be missed. Such a
// range used to be dropped instead once a GC cycle's marking had ended
// since the allocation (the runtime's cycle counts, which the hook
// then took). But the object is nearly always alive (a std call's
// result, which the caller goes on to use), and a dropped range left its
// bytes with the accesses of the dead object that was there: a false race
// (e2e's TestNoRaceGCChurn; bench/results/memreuse.md). A missed race on a
// doubly reused address is the rarer and the lesser harm. An exact rule
// needs the allocation's place in the trace (the global seq when the hook
// ran) in the alloc event, which .rkt has no field for.
func onMalloc(p unsafe.Pointer, size uintptr) {
	noteAlloc(uint64(uintptr(p)), uint64(size))
}

// noteAlloc is onMalloc's work, on the allocation's address as a number.
func noteAlloc(a, size uint64) {
	if !live.Load() || size == 0 {
		return
	}
	r := allocRange{a, a + size}
	if !touched(r.lo, r.hi) {
		return // no event named these bytes: no state to forget (touched.go)
	}
	id := goid()
	s := gtab[id&(gtabSize-1)].Load()
	if s == nil || s.goid != id {
		s = slotTaken(id)
	}
	if s != nil && s.traceNo == traceCount.Load() {
		s.allocs = pushAlloc(s.allocs, r)
		s.tick = 0
		return
	}
	k := id % uint64(len(untracedShards))
	sh := &untracedShards[k]
	sh.mu.Lock()
	if len(sh.rs) == 0 {
		untracedMask.Or(1 << k)
	}
	sh.rs = pushAlloc(sh.rs, r)
	sh.mu.Unlock()
}

// slotTaken is the state of goroutine id when its gtab slot holds another
// goroutine's (gtab is direct-mapped: 4,096 slots, and a test may run
// 10,000 goroutines at once), looked up in gmap as known does, or nil. Its
// allocation must go to its own state, not to the shards: a range there is
// written by whichever goroutine takes the shards next, at that one's next
// event, which may come after the allocating goroutine's own accesses to
// the object, and those then met the dead object's (rt's
// TestAllocHookSlotTaken; the likely cause of a false race seen in 2 of 11
// runs of held-out bytedance/sonic's TestGC, two goroutines' decoders at
// one address, not reproduced since). Only the goroutines the runtime's g
// marks as known (chanKnown's field, where the patched runtime has it)
// take the lock, and only if it is free: the goroutine may be allocating
// while it holds it (curSlow's append); the shards then, as before.
func slotTaken(id uint64) *gstate {
	if o := chanGOffsets[1]; o != 0 && haveGetg && *(*uint64)(unsafe.Add(getg(), o)) != id {
		return nil // rt has no state for it
	}
	if !defMu.TryLock() {
		return nil
	}
	s := gmap[id]
	defMu.Unlock()
	return s
}

type allocShard struct {
	mu OwnMutex
	rs []allocRange
	_  [32]byte // a cache line of its own, about
}

// pushAlloc adds r to rs, joining it to the last range when they touch.
func pushAlloc(rs []allocRange, r allocRange) []allocRange {
	if n := len(rs); n > 0 {
		if l := &rs[n-1]; l.hi == r.lo {
			l.hi = r.hi
			return rs
		} else if r.hi == l.lo {
			l.lo = r.lo
			return rs
		}
		if n >= maxPendingAllocs {
			return rs
		}
	}
	return append(rs, r)
}

// hasAllocs reports whether g has allocations to write before its next
// event.
func (g *gstate) hasAllocs() bool {
	return len(g.allocs) > 0 || untracedMask.Load() != 0
}

// flushAllocs writes the allocations noted for g (and those of goroutines
// without state) as alloc events at one fresh seq (onMalloc). A range is
// taken off the list before it is written: writing may allocate, and
// onMalloc appends.
func (g *gstate) flushAllocs() {
	for mask := untracedMask.Load(); mask != 0; mask &= mask - 1 {
		// The shard's ranges are taken out under its lock and pushed
		// after: pushing may allocate, and the allocation's hook
		// (noteAlloc) takes this shard's lock when it does not find this
		// goroutine's state (gtab is direct-mapped): a deadlock
		// (watermill's gochannel tests, with thousands of goroutines).
		k := bits.TrailingZeros64(mask)
		sh := &untracedShards[k]
		sh.mu.Lock()
		rs := sh.rs
		sh.rs = nil
		untracedMask.And(^uint64(1 << k))
		sh.mu.Unlock()
		for _, r := range rs {
			g.allocs = pushAlloc(g.allocs, r)
		}
		sh.mu.Lock()
		if sh.rs == nil {
			sh.rs = rs[:0] // its storage again, for the next ranges
		}
		sh.mu.Unlock()
	}
	if len(g.allocs) == 0 {
		return
	}
	if isIdle(g.last) {
		g.open(false)
	}
	// The ranges' bits are cleared before the seq is taken (touched.go).
	for _, r := range g.allocs {
		clearTouched(r.lo, r.hi)
	}
	s := seq.Add(1)
	if g.lockPend.on {
		g.raiseTo(s - 1)
		g.putPending()
	}
	g.raiseTo(s)
	for n := len(g.allocs); n > 0; n = len(g.allocs) {
		r := g.allocs[n-1]
		g.allocs = g.allocs[:n-1]
		g.forget(r.lo, r.hi-r.lo)
		g.putEvent(trace.OpAlloc, 0, 0, r.lo, r.hi-r.lo)
	}
	g.commit(false)
}
