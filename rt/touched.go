package rt

import (
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// Touched memory. An allocation's event (mallochook.go) is needed only where
// the detectors hold state for its bytes: where an event of the trace named
// an address since the last alloc event there. Most allocations of a
// program whose own code is small beside the standard library it calls
// (net/http's buffers, fmt's state) land on memory no traced code named,
// and writing an event for each doubled the events of an HTTP service. rt
// keeps one bit per 16-byte granule, set before an event naming an address
// in it is put (after its key is chosen), and cleared for the granules an
// alloc event covers whole, before that event's seq is taken; an
// allocation none of whose granules is set writes no event. Why that
// loses nothing: an event that names an address after the alloc event
// there has a key above that event's seq, so it was keyed, and marked,
// after the clear; an event marked before the clear has a key below it
// and is forgotten by it. So a clear bit at an allocation means no
// detector holds state for the granule, whatever order goroutines ran in
// (the memory of an object that an event named is handed out again only
// after a GC cycle, which orders the mark before the allocation's check).
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
	touchedLeaf [leafWords]OwnUint32
	touchedMid  [midLeaves]OwnPointer[touchedLeaf]
)

var touchedRoot [1 << (48 - midShift)]OwnPointer[touchedMid]

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

// markTouched notes that an event of g names address a; the caller marks
// before it writes the event. g keeps the leaf it marked last: a
// goroutine's accesses stay in one leaf for long.
func (g *gstate) markTouched(a uint64) {
	if a-touchedLo >= touchedHi-touchedLo {
		return
	}
	setTouched(g.leaf(a), a)
}

// leaf returns the leaf of a (in the window), made if need be, through
// g's cache of the last one.
func (g *gstate) leaf(a uint64) *touchedLeaf {
	if a>>leafShift+1 != g.tleafNum {
		g.newLeaf(a)
	}
	return g.tleaf
}

// newLeaf is leaf's slow path, kept out of line so that leaf inlines
// into the per-event markTouched.
//
//go:noinline
func (g *gstate) newLeaf(a uint64) { g.tleaf, g.tleafNum = leafOf(a, true), a>>leafShift+1 }

// markTouchedRange is markTouched for every granule of [lo, hi): the
// memory a range event names. It sets the bits of one leaf word (32
// granules) at a time: a copy of a megabyte names 65,536 granules.
func (g *gstate) markTouchedRange(lo, hi uint64) {
	const wordSpan = 32 << granuleShift // the addresses of one leaf word's bits
	if hi <= lo || lo < touchedLo || hi > touchedHi {
		for a := lo &^ (1<<granuleShift - 1); a < hi && a >= lo&^(1<<granuleShift-1); a += 1 << granuleShift {
			g.markTouched(a) // (outside the window: nothing)
		}
		return
	}
	for a := lo; a < hi; {
		end := min(hi, a&^(wordSpan-1)+wordSpan)
		first, last := (a>>granuleShift)&31, ((end-1)>>granuleShift)&31
		mask := ^uint32(0) << first & (^uint32(0) >> (31 - last))
		setBits(&g.leaf(a)[((a>>granuleShift)&(leafWords*32-1))>>5], mask)
		a = end
	}
}

// markTouched notes that an event names address a (markTouched of a
// goroutine, without its cache).
func markTouched(a uint64) {
	if a-touchedLo >= touchedHi-touchedLo {
		return
	}
	setTouched(leafOf(a, true), a)
}

// setTouched sets a's bit in its leaf l.
func setTouched(l *touchedLeaf, a uint64) {
	gr := (a >> granuleShift) & (leafWords*32 - 1)
	setBits(&l[gr>>5], uint32(1)<<(gr&31))
}

// setBits sets the bits of mask in w.
func setBits(w *OwnUint32, mask uint32) {
	for {
		old := w.Load()
		if old&mask == mask || w.CompareAndSwap(old, old|mask) {
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

// clearTouched clears the bits of the granules [lo, hi) covers whole (a
// granule shared with another object keeps its bit); the caller then
// takes the seq of the alloc event of [lo, hi).
func clearTouched(lo, hi uint64) {
	if lo < touchedLo || hi > touchedHi || hi <= lo {
		return
	}
	first, end := (lo+1<<granuleShift-1)>>granuleShift, hi>>granuleShift // [first, end)
	for g := first; g < end; {
		leafEnd := g | (leafWords*32 - 1)
		l := leafOf(g<<granuleShift, false)
		if l == nil {
			g = leafEnd + 1
			continue
		}
		for ; g < end && g <= leafEnd; g = (g | 31) + 1 {
			mask := ^uint32(0) << (g & 31)
			if last := g | 31; last >= end {
				mask &= ^uint32(0) >> (31 - (end-1)&31)
			}
			w := &l[(g>>5)&(leafWords-1)]
			if w.Load()&mask != 0 {
				w.And(^mask)
			}
		}
	}
}
