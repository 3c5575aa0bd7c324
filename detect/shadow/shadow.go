// Package shadow holds racekit's address-keyed tables: Table, an open
// addressing hash table with its values inline, and Mem, the paged shadow
// memory of the access detectors built on it. The happens-before tracker
// (package clock) keeps its lock, sync-object and atomic-word clocks in
// Tables; the hb detectors keep their per-address state in a Mem.
//
// Both are built for the per-event path: one probe (one cache line) per
// lookup in the common case, no allocation once an address has been seen.
package shadow

import "math/bits"

// Table maps addresses to state V held inline: open addressing, linear
// probing, Fibonacci hashing, kept at most half full. Where a Go map costs
// a hash, a group match and a separate load of the value, a Table costs one
// probe in the common case. The zero Table is empty and ready to use.
//
// A pointer returned by Get is valid until the next Get.
type Table[V any] struct {
	slots []slot[V]
	shift uint // 64 - log2(len(slots))
	n     int
	zero  *V // address 0, which the empty-slot marker cannot hold
}

type slot[V any] struct {
	addr uint64 // 0: empty
	v    V
}

const (
	fibonacci = 0x9E3779B97F4A7C15
	minShift  = 64 - 10 // 1024 slots to start
)

// Get returns addr's state, adding a zero V if addr is new.
func (t *Table[V]) Get(addr uint64) *V {
	if addr != 0 && t.slots != nil {
		mask := uint64(len(t.slots) - 1)
		for i := (addr * fibonacci) >> t.shift; ; i = (i + 1) & mask {
			s := &t.slots[i]
			if s.addr == addr {
				return &s.v
			}
			if s.addr == 0 {
				break
			}
		}
	}
	return t.add(addr)
}

func (t *Table[V]) add(addr uint64) *V {
	if addr == 0 {
		if t.zero == nil {
			t.zero = new(V)
			t.n++
		}
		return t.zero
	}
	if t.slots == nil || 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	t.n++
	return &t.slots[t.place(addr)].v
}

// place returns the empty slot where addr goes and claims it.
func (t *Table[V]) place(addr uint64) uint64 {
	mask := uint64(len(t.slots) - 1)
	i := (addr * fibonacci) >> t.shift
	for t.slots[i].addr != 0 {
		i = (i + 1) & mask
	}
	t.slots[i].addr = addr
	return i
}

func (t *Table[V]) grow() {
	old := t.slots
	if old == nil {
		t.shift = minShift
	} else {
		t.shift--
	}
	t.slots = make([]slot[V], 1<<(64-t.shift))
	for i := range old {
		if s := &old[i]; s.addr != 0 {
			t.slots[t.place(s.addr)].v = s.v
		}
	}
}

// Len is the number of addresses held.
func (t *Table[V]) Len() int { return t.n }

// Mem is shadow memory: state V per address, held in pages that each cover
// pageWords consecutive 8-byte-aligned words, so that the states of
// neighbouring words are neighbours in memory (the locality of the
// program's own accesses carries over) and most lookups hit the page of the
// previous access. Addresses that are not 8-byte aligned (byte and
// half-word objects, a copy's words from an odd offset) live in pages of
// their own, a short list per page: every address has exactly one state,
// whatever its alignment, and clearing a range costs the pages in it,
// not its bytes (a Table of single odd addresses cost both a probe per
// byte of every allocation and a rehash of millions of addresses, on a
// stream multiplexer's copies at odd offsets). The zero Mem is empty and
// ready to use.
//
// A pointer returned by Get is valid until the next Get.
type Mem[V any] struct {
	lastKey  uint64 // page key of lastPage (0: none)
	lastPage *page[V]
	lastUsed *uint16 // lastPage's use bits, in its group
	lastGK   uint64  // group key of lastGrp (0: none)
	lastGrp  *group
	lastOddK uint64 // page key of lastOdd (0: none): byte-wise loops stay in one
	lastOdd  *oddPage[V]
	groups   Table[*group]          // the pages, by group key (groupKey)
	odd      Table[*oddPage[V]]     // the unaligned addresses, by page key
	chunks   []*[chunkPages]page[V] // the pages, a chunk at a time: group.pages indexes them
	npages   uint32                 // pages made
	// The odd pages' state arrays, allocated a chunk at a time too, in
	// sizes of powers of two: oddFree[k] holds arrays of 1<<k states an
	// odd page outgrew, for the next page that grows to that size. An
	// array left to the garbage collector at each doubling (append) cost
	// twice the states' memory, and zeroing fresh memory for it, on a
	// trace of byte-wise copies and compares (a radix tree's keys).
	oddSlab []V
	oddFree [oddSizes][][]V
	// Indexed odd pages' indexes, allocated a chunk at a time; those of
	// pages that turned dense, zeroed, for the next.
	idxSlab [][1 << pageShift]uint8
	idxFree []*[1 << pageShift]uint8
	n       int // aligned addresses touched
	nOdd    int // unaligned addresses touched
	// made and madeOdd: a bit per group key and per odd page key (modulo
	// their size) set when a group or odd page of that key is made, so
	// that Clear, called at every allocation and mostly over memory no
	// access has touched yet, skips the probe of a large table (a cache
	// miss) for a key whose bit is clear. A set bit may be another key's:
	// Clear then probes.
	made, madeOdd *[madeWords]uint64
}

// madeWords is the size of Mem's made bitmaps, in words, 128 KiB each: a
// bit per key of 2^20 (8 GiB of address space in groups, 128 MiB in odd
// pages) before they wrap.
const madeWords = 1 << 14

func markMade(b **[madeWords]uint64, key uint64) {
	if *b == nil {
		*b = new([madeWords]uint64)
	}
	(*b)[key>>6&(madeWords-1)] |= 1 << (key & 63)
}

func isMade(b *[madeWords]uint64, key uint64) bool {
	return b != nil && b[key>>6&(madeWords-1)]&(1<<(key&63)) != 0
}

// oddPage holds the states of a page's unaligned addresses. A page
// starts sparse: offs[i] is the offset in the page of the address whose
// state is vals[i], scanned at each lookup. Its (oddScan+1)-th address
// makes it dense or indexed, and offs nil. Dense, when its first oddScan
// offsets lie side by side (a byte-wise loop's): vals holds a state per
// offset of the page, at that offset. Indexed, when they do not: idx[o]
// is 1 + the index in vals of offset o's state (0: none), and vals grows
// by doubling, up to indexedMax states, after which the page turns dense.
// Most pages of odd addresses hold a few byte and bool fields, or every
// byte of a buffer that a byte-wise loop names (all 112 odd offsets): a
// scan of offs per access was most of the analysis of a trace of masked
// buffers (coder/websocket's TestMask), and growing a page's array by
// doubling up to 128 states, then an index beside it, was a third of the
// analysis of a compressor's trace (klauspost/pgzip), whose byte-wise
// loops touch hundreds of thousands of pages once each: those turn dense
// at once. A tiny allocator's short byte slices (go-immutable-radix's
// keys, a few bytes each, at odd offsets of 16-byte blocks) touch 9 to 31
// odd offsets of most of their pages: dense, those pages held seven
// times the states they used, half of the analysis's memory.
type oddPage[V any] struct {
	offs  []uint8
	vals  []V
	idx   *[1 << pageShift]uint8
	dense bool
	// live: bit o set when the address at offset o is in use; Clear lets
	// go of addresses by clearing bits, and getOdd zeroes a state when
	// it hands it out again (as page's used bits).
	live [2]uint64
}

func (op *oddPage[V]) isLive(off uint8) bool { return op.live[off>>6]&(1<<(off&63)) != 0 }

// oddScan is the number of addresses a sparse odd page holds.
const oddScan = 8

// indexedMax is the most states an indexed odd page holds: at half a
// dense page's, the index is not worth its cost.
const indexedMax = 1 << (pageShift - 1)

// find returns the index in vals of off's state, or -1.
func (op *oddPage[V]) find(off uint8) int {
	if op.dense {
		return int(off)
	}
	if op.idx != nil {
		return int(op.idx[off]) - 1
	}
	for i, o := range op.offs {
		if o == off {
			return i
		}
	}
	return -1
}

const (
	pageWords = 16
	pageShift = 7 // log2(pageWords * 8)
)

// A page's use bits (bit i: cells[i] has been handed out) are in its
// group, which page and lookupPage return with it: a page holds no
// pointer, so that its slabs cost the allocator and the collector nothing
// to type and scan when V holds none.
type page[V any] struct {
	cells [pageWords]V
}

// A group holds groupPages consecutive pages (8 KiB of address space):
// their use bits side by side, so that Clear of a large allocation, whose
// pages the garbage collector handed out before, clears a few cache lines
// per group rather than a hash probe and a cache miss per page; and the
// pages themselves, so that finding a page is a probe of the groups'
// table, 64 times smaller than a table of pages (on an allocating
// parser's trace, a probe of a table of pages missed the cache at most
// page changes), or none when the page is in the group of the last one.
// The pages are indexes into Mem's chunks, not pointers: a group then
// holds no pointer, and the collector neither types nor scans it (a
// trace of scattered words makes a group per word).
type group struct {
	used  [groupPages]uint16
	pages [groupPages]uint32 // 1 + the page's index in Mem.chunks; 0: none
}

// chunkPages is the number of pages allocated at a time.
const chunkPages = 32

// pageAt returns the page of index idx (group.pages' value, not 0).
func (m *Mem[V]) pageAt(idx uint32) *page[V] {
	idx--
	return &m.chunks[idx/chunkPages][idx%chunkPages]
}

const (
	groupPages = 64
	groupShift = 6 // log2(groupPages)
)

// groupKey is the key of the group of page key key.
func groupKey(key uint64) uint64 { return key>>groupShift + 1 }

// Get returns addr's state (the zero V if addr is new).
func (m *Mem[V]) Get(addr uint64) *V {
	if addr&7 != 0 {
		return m.getOdd(addr)
	}
	p, used := m.lastPage, m.lastUsed
	if key := addr>>pageShift + 1; key != m.lastKey {
		p, used = m.page(key)
	}
	i := (addr >> 3) & (pageWords - 1)
	if *used&(1<<i) == 0 {
		// A cell not in use holds whatever it had when Clear let it go.
		var zero V
		p.cells[i] = zero
		*used |= 1 << i
		m.n++
	}
	return &p.cells[i]
}

// Run returns the states of the aligned words addr, addr+8, ... up to n
// of them and at most to the end of addr's page, side by side (the zero
// V for words new): a range access walks its words a page at a time
// instead of a lookup per word. addr must be 8-byte aligned and n > 0.
// The slice is valid until the next Clear.
func (m *Mem[V]) Run(addr uint64, n uint64) []V {
	p, used := m.lastPage, m.lastUsed
	if key := addr>>pageShift + 1; key != m.lastKey {
		p, used = m.page(key)
	}
	i := (addr >> 3) & (pageWords - 1)
	k := min(n, pageWords-i)
	want := uint16(1<<k-1) << i
	if fresh := want &^ *used; fresh != 0 {
		var zero V
		for j := i; j < i+k; j++ {
			if fresh&(1<<j) != 0 {
				p.cells[j] = zero
				m.n++
			}
		}
		*used |= fresh
	}
	return p.cells[i : i+k]
}

// Strided is Run for every step-th word: the states of the aligned words
// addr, addr+8*step, ... up to n of them and at most to the end of addr's
// page, at cells[0], cells[step], ..., and how many there are (k). Only
// those words are handed out (counted by Len): a sparse range's words.
// step must be at least 1.
func (m *Mem[V]) Strided(addr, n, step uint64) (cells []V, k uint64) {
	p, used := m.lastPage, m.lastUsed
	if key := addr>>pageShift + 1; key != m.lastKey {
		p, used = m.page(key)
	}
	i := (addr >> 3) & (pageWords - 1)
	k = min(n, (pageWords-i+step-1)/step)
	var want uint16
	for j := uint64(0); j < k; j++ {
		want |= 1 << (i + j*step)
	}
	if fresh := want &^ *used; fresh != 0 {
		var zero V
		for j := i; j < pageWords; j++ {
			if fresh&(1<<j) != 0 {
				p.cells[j] = zero
				m.n++
			}
		}
		*used |= fresh
	}
	return p.cells[i:], k
}

func (m *Mem[V]) page(key uint64) (*page[V], *uint16) {
	g := m.lastGrp
	if gk := groupKey(key); gk != m.lastGK {
		g = m.group(gk)
		m.lastGK, m.lastGrp = gk, g
	}
	i := key & (groupPages - 1)
	if g.pages[i] == 0 {
		if m.npages%chunkPages == 0 {
			m.chunks = append(m.chunks, new([chunkPages]page[V]))
		}
		m.npages++
		g.pages[i] = m.npages
	}
	p := m.pageAt(g.pages[i])
	m.lastKey, m.lastPage, m.lastUsed = key, p, &g.used[i]
	return p, m.lastUsed
}

// group returns the group of group key gk, made if new.
func (m *Mem[V]) group(gk uint64) *group {
	gp := m.groups.Get(gk)
	if *gp == nil {
		*gp = new(group)
		markMade(&m.made, gk)
	}
	return *gp
}

// lookupPage returns the page of page key key and its use bits, or nil
// if it was never made. It adds nothing.
func (m *Mem[V]) lookupPage(key uint64) (*page[V], *uint16) {
	if key == m.lastKey {
		return m.lastPage, m.lastUsed
	}
	gk := groupKey(key)
	g := m.lastGrp
	if gk != m.lastGK {
		gp := m.groups.Lookup(gk)
		if gp == nil || *gp == nil {
			return nil, nil
		}
		g = *gp
	}
	i := key & (groupPages - 1)
	if g.pages[i] == 0 {
		return nil, nil
	}
	return m.pageAt(g.pages[i]), &g.used[i]
}

// getOdd is Get of an unaligned address.
func (m *Mem[V]) getOdd(addr uint64) *V {
	op := m.lastOdd
	if key := addr>>pageShift + 1; key != m.lastOddK {
		pp := m.odd.Get(key)
		if *pp == nil {
			*pp = &oddPage[V]{}
			markMade(&m.madeOdd, key)
		}
		op = *pp
		m.lastOddK, m.lastOdd = key, op
	}
	off := uint8(addr & (1<<pageShift - 1))
	live := op.isLive(off)
	if !live {
		op.live[off>>6] |= 1 << (off & 63)
		m.nOdd++
	}
	if i := op.find(off); i >= 0 {
		if !live {
			var zero V
			op.vals[i] = zero
		}
		return &op.vals[i]
	}
	if len(op.offs) == oddScan {
		if sideBySide(op.offs) {
			m.densify(op)
		} else {
			m.index(op)
		}
	}
	if op.idx != nil && len(op.vals) == indexedMax {
		m.densify(op)
	}
	var zero V
	if op.dense {
		op.vals[off] = zero // an array another page outgrew holds its states
		return &op.vals[off]
	}
	if len(op.vals) == cap(op.vals) {
		m.growOdd(op, 2*cap(op.vals))
	}
	op.vals = append(op.vals, zero)
	if op.idx != nil {
		op.idx[off] = uint8(len(op.vals))
	} else {
		op.offs = append(op.offs, off)
	}
	return &op.vals[len(op.vals)-1]
}

// sideBySide reports whether offs, a sparse page's offsets in the order
// they came, are those of a byte-wise walk: each one or two (over an
// aligned address, whose state is a word's) past the one before.
func sideBySide(offs []uint8) bool {
	for i := 1; i < len(offs); i++ {
		if d := offs[i] - offs[i-1]; d != 1 && !(d == 2 && (offs[i]-1)&7 == 0) {
			return false
		}
	}
	return true
}

// index makes sparse page op indexed: its states stay where they are,
// and idx names them.
func (m *Mem[V]) index(op *oddPage[V]) {
	if n := len(m.idxFree); n > 0 {
		op.idx, m.idxFree = m.idxFree[n-1], m.idxFree[:n-1]
	} else {
		if len(m.idxSlab) == 0 {
			m.idxSlab = make([][1 << pageShift]uint8, 64)
		}
		op.idx, m.idxSlab = &m.idxSlab[0], m.idxSlab[1:]
	}
	for i, o := range op.offs {
		op.idx[o] = uint8(i + 1)
	}
	op.offs = nil
}

// densify makes sparse or indexed page op dense: its states move to the
// offsets of an array of a state per offset. The other cells hold
// whatever they held: their live bits are clear, and getOdd zeroes a
// state it hands out for the first time.
func (m *Mem[V]) densify(op *oddPage[V]) {
	old := op.vals
	op.vals = m.oddArray(1 << pageShift)[:1<<pageShift]
	if op.idx != nil {
		for o, i := range op.idx {
			if i != 0 {
				op.vals[o] = old[i-1]
			}
		}
		*op.idx = [1 << pageShift]uint8{}
		m.idxFree = append(m.idxFree, op.idx)
	} else {
		for i, o := range op.offs {
			op.vals[o] = old[i]
		}
	}
	m.freeOdd(old)
	op.offs, op.idx, op.dense = nil, nil, true
}

// oddSizes is the number of sizes of odd pages' state arrays: 1 to
// 1<<pageShift states, doubling.
const (
	oddSizes     = pageShift + 1
	oddSlabCells = 4096
)

// growOdd gives op a state array of n states (a power of two, at most
// 1<<pageShift), from oddFree or the slab, holding op's states, and puts
// its old one in oddFree.
func (m *Mem[V]) growOdd(op *oddPage[V], n int) {
	nv := append(m.oddArray(n), op.vals...)
	m.freeOdd(op.vals)
	op.vals = nv
}

// oddArray returns an empty state array of capacity n (a power of two, at
// most 1<<pageShift; 0 counts as 1), from oddFree or the slab.
func (m *Mem[V]) oddArray(n int) []V {
	n = max(n, 1)
	k := bits.TrailingZeros(uint(n))
	if free := m.oddFree[k]; len(free) > 0 {
		m.oddFree[k] = free[:len(free)-1]
		return free[len(free)-1]
	}
	if len(m.oddSlab) < n {
		m.oddSlab = make([]V, oddSlabCells)
	}
	nv := m.oddSlab[:0:n]
	m.oddSlab = m.oddSlab[n:]
	return nv
}

// freeOdd puts state array vals (from oddArray) in oddFree.
func (m *Mem[V]) freeOdd(vals []V) {
	if c := cap(vals); c > 0 {
		j := bits.TrailingZeros(uint(c))
		m.oddFree[j] = append(m.oddFree[j], vals[:0:c])
	}
}

// lookupOdd is Lookup of an unaligned address.
func (m *Mem[V]) lookupOdd(addr uint64) *V {
	pp := m.odd.Lookup(addr>>pageShift + 1)
	if pp == nil || *pp == nil {
		return nil
	}
	off := uint8(addr & (1<<pageShift - 1))
	if !(*pp).isLive(off) {
		return nil
	}
	if i := (*pp).find(off); i >= 0 {
		return &(*pp).vals[i]
	}
	return nil
}

// OddLive returns which unaligned addresses of addr's page have a state:
// bit o of word o/64 for the address at offset o from the page's start
// (pageWords words). It adds nothing.
func (m *Mem[V]) OddLive(addr uint64) [2]uint64 {
	op := m.lastOdd
	if key := addr>>pageShift + 1; key != m.lastOddK {
		pp := m.odd.Lookup(key)
		if pp == nil || *pp == nil {
			return [2]uint64{}
		}
		op = *pp
	}
	return op.live
}

// OddBits returns, from OddLive's result for the page of 8-byte-aligned
// x, the bits of x+1 ... x+7 (bit b for x+b; bit 0 clear).
func OddBits(live [2]uint64, x uint64) uint64 {
	off := x & (1<<pageShift - 1)
	return live[off>>6] >> (off & 63) & 0xfe
}

// Len is the number of addresses whose state was asked for.
func (m *Mem[V]) Len() int { return m.n + m.nOdd }

// Lookup returns addr's state, or nil if addr was never asked for. It
// adds nothing.
func (m *Mem[V]) Lookup(addr uint64) *V {
	if addr&7 != 0 {
		return m.lookupOdd(addr)
	}
	p, used := m.lookupPage(addr>>pageShift + 1)
	if p == nil {
		return nil
	}
	i := (addr >> 3) & (pageWords - 1)
	if *used&(1<<i) == 0 {
		return nil
	}
	return &p.cells[i]
}

// Each calls f with every address whose state was asked for, in no
// particular order.
func (m *Mem[V]) Each(f func(addr uint64, v *V)) {
	m.groups.Each(func(gk uint64, gp **group) {
		if *gp == nil {
			return
		}
		for j, idx := range (*gp).pages {
			if idx == 0 {
				continue
			}
			p := m.pageAt(idx)
			used := (*gp).used[j]
			key := (gk-1)<<groupShift + uint64(j)
			base := (key - 1) << pageShift
			for i := range p.cells {
				if used&(1<<i) != 0 {
					f(base+uint64(i)*8, &p.cells[i])
				}
			}
		}
	})
	m.odd.Each(func(key uint64, pp **oddPage[V]) {
		if op := *pp; op != nil {
			base := (key - 1) << pageShift
			if op.dense {
				for o := range op.vals {
					if op.isLive(uint8(o)) {
						f(base+uint64(o), &op.vals[o])
					}
				}
				return
			}
			if op.idx != nil {
				for o, i := range op.idx {
					if i != 0 && op.isLive(uint8(o)) {
						f(base+uint64(o), &op.vals[i-1])
					}
				}
				return
			}
			for i, o := range op.offs {
				if op.isLive(o) {
					f(base+uint64(o), &op.vals[i])
				}
			}
		}
	})
}

// Each calls f with every address held, in no particular order.
func (t *Table[V]) Each(f func(addr uint64, v *V)) {
	if t.zero != nil {
		f(0, t.zero)
	}
	for i := range t.slots {
		if s := &t.slots[i]; s.addr != 0 {
			f(s.addr, &s.v)
		}
	}
}

// Lookup returns addr's state, or nil if addr was never added.
func (t *Table[V]) Lookup(addr uint64) *V {
	if addr == 0 {
		return t.zero
	}
	if t.slots == nil {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	for i := (addr * fibonacci) >> t.shift; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.addr == addr {
			return &s.v
		}
		if s.addr == 0 {
			return nil
		}
	}
}

// ClearRange resets to the zero V the state of every address a in
// [lo, hi) that passes keep (nil: every address). The addresses stay in
// the table. It costs the smaller of the range's length and the table's
// size.
func (t *Table[V]) ClearRange(lo, hi uint64, keep func(addr uint64) bool) {
	if hi <= lo {
		return
	}
	var zero V
	if lo == 0 && t.zero != nil && (keep == nil || keep(0)) {
		*t.zero = zero
	}
	if hi-lo <= uint64(len(t.slots)) {
		for a := max(lo, 1); a < hi && a != 0; a++ {
			if keep != nil && !keep(a) {
				continue
			}
			if v := t.Lookup(a); v != nil {
				*v = zero
			}
		}
		return
	}
	for i := range t.slots {
		if s := &t.slots[i]; s.addr >= lo && s.addr < hi && s.addr != 0 && (keep == nil || keep(s.addr)) {
			s.v = zero
		}
	}
}

// Clear resets to the zero V the state of every address in [lo, hi): the
// memory was freed and allocated anew, so nothing recorded about it before
// applies: their states are let go, Lookup and Each no longer see them,
// Len no longer counts them, and Get hands each out anew, zero.
func (m *Mem[V]) Clear(lo, hi uint64) {
	if hi <= lo {
		return
	}
	firstKey, lastKey := lo>>pageShift+1, (hi-1)>>pageShift+1
	firstG, lastG := groupKey(firstKey), groupKey(lastKey)
	clearGroup := func(gk uint64, g *group) {
		// Its pages' keys within [firstKey, lastKey].
		k0, k1 := (gk-1)<<groupShift, (gk-1)<<groupShift+groupPages-1
		for key := max(k0, firstKey); key <= min(k1, lastKey); key++ {
			m.clearUsed(&g.used[key&(groupPages-1)], key, lo, hi)
		}
	}
	if lastG-firstG < uint64(m.groups.Len()) {
		for gk := firstG; gk <= lastG; gk++ {
			if !isMade(m.made, gk) {
				continue
			}
			if gp := m.groups.Lookup(gk); gp != nil && *gp != nil {
				clearGroup(gk, *gp)
			}
		}
	} else {
		for i := range m.groups.slots {
			s := &m.groups.slots[i]
			if s.addr >= firstG && s.addr <= lastG && s.v != nil {
				clearGroup(s.addr, s.v)
			}
		}
	}
	if m.odd.Len() == 0 {
		return // most programs touch no odd address: allocations are many
	}
	clearOdd := func(key uint64, op *oddPage[V]) {
		// The offsets o with lo <= base+o < hi, as bits.
		base := (key - 1) << pageShift
		o0, o1 := uint64(0), uint64(1<<pageShift)
		if lo > base {
			o0 = lo - base
		}
		if end := base + 1<<pageShift; hi < end {
			o1 = hi - base
		}
		for w := range op.live {
			wlo, whi := max(o0, uint64(w)*64), min(o1, uint64(w+1)*64)
			if wlo >= whi {
				continue
			}
			var mask uint64
			if n := whi - wlo; n == 64 {
				mask = ^uint64(0)
			} else {
				mask = (1<<n - 1) << (wlo - uint64(w)*64)
			}
			m.nOdd -= bits.OnesCount64(op.live[w] & mask)
			op.live[w] &^= mask
		}
	}
	if lastKey-firstKey < uint64(m.odd.Len()) {
		for key := firstKey; key <= lastKey; key++ {
			if !isMade(m.madeOdd, key) {
				continue
			}
			if pp := m.odd.Lookup(key); pp != nil && *pp != nil {
				clearOdd(key, *pp)
			}
		}
		return
	}
	for i := range m.odd.slots {
		if s := &m.odd.slots[i]; s.addr >= firstKey && s.addr <= lastKey && s.v != nil {
			clearOdd(s.addr, s.v)
		}
	}
}

// clearUsed lets go of the cells of the page of page key key, whose use
// bits are *used, whose words lie in [lo, hi): their use bits are cleared,
// and Get zeroes a cell when it hands it out again, so that an allocation
// costs a word per page, not the page's cells (most of the analysis of an
// allocating program's trace was spent zeroing them).
func (m *Mem[V]) clearUsed(used *uint16, key, lo, hi uint64) {
	base := (key - 1) << pageShift
	// The cells of words a with lo <= a < hi: from the first word at or
	// above lo to the last below hi.
	i0, i1 := uint64(0), uint64(pageWords)
	if lo > base {
		i0 = (lo - base + 7) >> 3
	}
	if end := base + pageWords*8; hi < end {
		i1 = (hi - base + 7) >> 3
	}
	if i0 >= i1 {
		return
	}
	mask := uint16((1<<(i1-i0))-1) << i0
	m.n -= bits.OnesCount16(*used & mask)
	*used &^= mask
}
