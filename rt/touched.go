package rt

import (
	"sync/atomic"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// Touched memory. An allocation's event (mallochook.go) is needed only where
// the detectors hold state for its bytes: where an event of the trace named
// an address before. Most allocations of a program whose own code is small
// beside the standard library it calls (net/http's buffers, fmt's state)
// land on memory no traced code ever named, and writing an event for each
// doubled the events of an HTTP service. rt keeps one bit per 16-byte
// granule of the heap's usual addresses, set before an event naming an
// address in it is written and never cleared, and skips the event of an
// allocation none of whose granules is set. Never clearing keeps this
// simple to trust: a skipped allocation's bytes have no state to forget, in
// any detector, whatever order goroutines run in (the bit is set before the
// event that makes the state, and the memory of the object that event named
// is handed out again only after a GC cycle, which orders the two).
// The window is the 48-bit address space above 4 GiB, where 64-bit heaps
// are (Go 1.26 places the heap at a random base); addresses outside it
// (32-bit platforms, goroutine ids and keys that are not addresses) are
// never marked and always treated as touched. The bits are in three
// levels, each made the first time an address under it is marked: a small
// root (scanned by every GC cycle, as all of rt's globals are), a middle
// level per 128 GiB, and a leaf of 128 KiB of bits per 16 MiB.

const (
	granuleShift = 4                                                       // 16-byte granules
	leafShift    = 24                                                      // 16 MiB of addresses per leaf
	midShift     = 37                                                      // 128 GiB per middle level
	touchedLo    = uint64(1) << 32                                         // below: never marked
	touchedHi    = touchedLo + (uint64(1)<<48-touchedLo)*uint64(ptrSize/8) // empty on 32-bit
	ptrSize      = unsafe.Sizeof(uintptr(0))
	leafWords    = 1 << (leafShift - granuleShift - 5)
	midLeaves    = 1 << (midShift - leafShift)
)

type (
	touchedLeaf [leafWords]atomic.Uint32
	touchedMid  [midLeaves]atomic.Pointer[touchedLeaf]
)

var touchedRoot [1 << (48 - midShift)]atomic.Pointer[touchedMid]

// namesMemory reports whether op's Obj is an address of memory whose state
// a detector keeps: a data or atomic word, a lock, a channel or other
// synchronization object. (Other Objs are goroutine ids and function
// names.)
func namesMemory(op trace.Op) bool {
	switch op {
	case trace.OpRead, trace.OpWrite, trace.OpAcquire, trace.OpRelease,
		trace.OpSyncRelease, trace.OpSyncAcquire,
		trace.OpAtomicLoad, trace.OpAtomicStore, trace.OpAtomicRMW:
		return true
	}
	return false
}

// leafOf returns the leaf of address a (in the window), made if make is
// set, else nil when none was.
func leafOf(a uint64, make bool) *touchedLeaf {
	r := &touchedRoot[a>>midShift]
	m := r.Load()
	if m == nil {
		if !make {
			return nil
		}
		m = new(touchedMid)
		if !r.CompareAndSwap(nil, m) {
			m = r.Load()
		}
	}
	p := &m[(a>>leafShift)&(midLeaves-1)]
	l := p.Load()
	if l == nil && make {
		l = new(touchedLeaf)
		if !p.CompareAndSwap(nil, l) {
			l = p.Load()
		}
	}
	return l
}

// markTouched notes that an event names address a; the caller marks before
// it writes the event.
func markTouched(a uint64) {
	if a-touchedLo >= touchedHi-touchedLo {
		return
	}
	l := leafOf(a, true)
	gr := (a >> granuleShift) & (leafWords*32 - 1)
	w, bit := &l[gr>>5], uint32(1)<<(gr&31)
	for {
		old := w.Load()
		if old&bit != 0 || w.CompareAndSwap(old, old|bit) {
			return
		}
	}
}

// touched reports whether an event may have named an address in [lo, hi).
func touched(lo, hi uint64) bool {
	if lo < touchedLo || hi > touchedHi || hi <= lo {
		return true
	}
	for g, end := lo>>granuleShift, (hi-1)>>granuleShift; g <= end; {
		leafEnd := g | (leafWords*32 - 1) // the leaf's last granule
		l := leafOf(g<<granuleShift, false)
		if l == nil {
			g = leafEnd + 1
			continue
		}
		for ; g <= end && g <= leafEnd; g = (g | 31) + 1 {
			mask := ^uint32(0) << (g & 31)
			if last := g | 31; last > end {
				mask &= ^uint32(0) >> (31 - end&31)
			}
			if l[(g>>5)&(leafWords-1)].Load()&mask != 0 {
				return true
			}
		}
	}
	return false
}
