package hb

// shadowTable maps addresses to shadow state V held inline: open
// addressing, linear probing, Fibonacci hashing, kept at most half full.
// It is the detectors' shadow memory: one probe (one cache line) per access
// in the common case, where a Go map costs a hash, a group match and a
// separate load of the value.
//
// A pointer returned by get is valid until the next get.
type shadowTable[V any] struct {
	slots []shadowSlot[V]
	shift uint // 64 - log2(len(slots))
	n     int
	zero  *V // address 0, which the empty-slot marker cannot hold
}

type shadowSlot[V any] struct {
	addr uint64 // 0: empty
	v    V
}

const (
	fibonacci      = 0x9E3779B97F4A7C15
	shadowMinShift = 64 - 10 // 1024 slots to start
)

// get returns addr's state, adding a zero V if addr is new.
func (t *shadowTable[V]) get(addr uint64) *V {
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

func (t *shadowTable[V]) add(addr uint64) *V {
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
func (t *shadowTable[V]) place(addr uint64) uint64 {
	mask := uint64(len(t.slots) - 1)
	i := (addr * fibonacci) >> t.shift
	for t.slots[i].addr != 0 {
		i = (i + 1) & mask
	}
	t.slots[i].addr = addr
	return i
}

func (t *shadowTable[V]) grow() {
	old := t.slots
	if old == nil {
		t.shift = shadowMinShift
	} else {
		t.shift--
	}
	t.slots = make([]shadowSlot[V], 1<<(64-t.shift))
	for i := range old {
		if s := &old[i]; s.addr != 0 {
			t.slots[t.place(s.addr)].v = s.v
		}
	}
}

// len is the number of addresses held.
func (t *shadowTable[V]) len() int { return t.n }

// shadowMem is the detectors' shadow memory: state V per address, held in
// pages that each cover pageWords consecutive 8-byte-aligned words, so
// that the states of neighbouring words are neighbours in memory (the
// locality of the program's own accesses carries over) and most lookups
// hit the page of the previous access. Addresses that are not 8-byte
// aligned (byte and half-word objects) live in a hash table of their own:
// every address has exactly one state, whatever its alignment.
//
// A pointer returned by get is valid until the next get.
type shadowMem[V any] struct {
	lastKey  uint64 // page key of lastPage (0: none)
	lastPage *shadowPage[V]
	pages    shadowTable[*shadowPage[V]] // by page key: addr>>pageShift + 1
	odd      shadowTable[V]
	slab     []shadowPage[V] // pages allocated ahead, a chunk at a time
	n        int             // aligned addresses touched
}

const (
	pageWords = 16
	pageShift = 7 // log2(pageWords * 8)
)

type shadowPage[V any] struct {
	used  uint16 // bit i: cells[i] has been handed out
	cells [pageWords]V
}

// get returns addr's state (the zero V if addr is new).
func (m *shadowMem[V]) get(addr uint64) *V {
	if addr&7 != 0 {
		return m.odd.get(addr)
	}
	p := m.lastPage
	if key := addr>>pageShift + 1; key != m.lastKey {
		p = m.page(key)
	}
	i := (addr >> 3) & (pageWords - 1)
	if p.used&(1<<i) == 0 {
		p.used |= 1 << i
		m.n++
	}
	return &p.cells[i]
}

func (m *shadowMem[V]) page(key uint64) *shadowPage[V] {
	pp := m.pages.get(key)
	if *pp == nil {
		if len(m.slab) == 0 {
			m.slab = make([]shadowPage[V], 32)
		}
		*pp, m.slab = &m.slab[0], m.slab[1:]
	}
	m.lastKey, m.lastPage = key, *pp
	return *pp
}

// len is the number of addresses whose state was asked for.
func (m *shadowMem[V]) len() int { return m.n + m.odd.len() }
