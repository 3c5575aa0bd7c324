package vc

import (
	"sync"

	"github.com/racekit/racekit/trace"
)

// Shared clocks: the clocks of sync objects, channels' messages and
// pending operations are copies and joins of goroutines' clocks, each as
// wide as the goroutines alive at once. A program with ten thousand
// goroutines passing work over a channel each (a worker pool) made every
// such clock 80 KB, most of it the same knowledge in every one of them:
// ants' tests took the analysis past 9 GB. A Shared clock is kept in
// chunks of chunkLen entries that clocks copied from one another share,
// and a join skips a chunk the other side shares with it.
//
// A chunk reachable from more than one clock is never modified (copy on
// write); a chunk a Shared made for itself is, in place, until it hands
// it on (the chunk's owner is the Shared's token).

const (
	chunkShift = 6
	chunkLen   = 1 << chunkShift
)

type chunk struct {
	v     [chunkLen]uint32
	n     int   // v[n:] is zeros: loops stop there (a clock of 8 goroutines is 8 entries of work, not 64)
	owner *byte // the token of the one Shared that may modify it; nil: frozen
}

// use is v[:n], the part of c that may be nonzero.
func (c *chunk) use() []uint32 { return c.v[:c.n] }

// chunks is the number of chunks n entries take.
func chunks(n int) int { return (n + chunkLen - 1) >> chunkShift }

// SharedBytes is what a Shared copied from a goroutine's clock of width
// entries takes beyond the chunks it shares with it: a pointer per chunk
// and its own copy of the chunk of the goroutine's own entry.
func SharedBytes(width int) int64 {
	return int64(chunks(width))*8 + int64(chunkLen)*4 + 8
}

// Shared is a vector clock of shared chunks; the zero value is ⊥. Like a
// VectorClock, a Shared value is a handle: a copy of it aliases the same
// storage (Clone makes an independent one).
type Shared struct {
	ch  []*chunk // nil: a chunk of zeros
	tok *byte    // ownership token, made at the first chunk it owns
}

// Get returns the clock of g.
func (s Shared) Get(g trace.GID) uint32 {
	if i := int(g >> chunkShift); i < len(s.ch) && s.ch[i] != nil {
		return s.ch[i].v[g&(chunkLen-1)]
	}
	return 0
}

// Len is the number of entries s may hold (a multiple of chunkLen).
func (s Shared) Len() int { return len(s.ch) << chunkShift }

// Reset sets s to ⊥, keeping its storage.
func (s *Shared) Reset() {
	clear(s.ch)
	s.ch = s.ch[:0]
}

// grow makes s hold at least n chunks (new ones ⊥).
func (s *Shared) grow(n int) {
	if len(s.ch) >= n {
		return
	}
	if cap(s.ch) >= n {
		old := len(s.ch)
		s.ch = s.ch[:n]
		clear(s.ch[old:])
		return
	}
	nc := make([]*chunk, n, max(n, 2*cap(s.ch)))
	copy(nc, s.ch)
	s.ch = nc
}

// own returns chunk i of s modifiable in place: its own, or a copy of
// what is there.
func (s *Shared) own(i int) *chunk {
	c := s.ch[i]
	if c != nil && c.owner == s.tok && s.tok != nil {
		return c
	}
	if s.tok == nil {
		s.tok = new(byte)
	}
	n := chunkPool.Get().(*chunk)
	n.owner = s.tok
	if c != nil {
		n.n = copy(n.v[:], c.use())
	}
	s.ch[i] = n
	return n
}

// chunkPool holds zeroed chunks no clock refers to (Release): a channel
// message's clock, made at its send and dropped after its receive, took a
// new chunk each time, which with the garbage collector's share was half
// the analysis of a trace of a million messages.
var chunkPool = sync.Pool{New: func() any { return new(chunk) }}

// Release sets s to ⊥ and hands back the chunks s made for itself and
// never shared, for a later own to take: for a clock no other handle to
// s's storage will use again.
func (s *Shared) Release() {
	for _, c := range s.ch {
		if c != nil && s.tok != nil && c.owner == s.tok {
			clear(c.v[:c.n])
			c.n, c.owner = 0, nil
			chunkPool.Put(c)
		}
	}
	s.Reset()
}

// JoinCopy is Join, but a chunk of o's own is copied rather than shared,
// so that it stays o's to update in place and to Release: for an
// accumulator made again at every message (the Tracker's incoming clock),
// which would otherwise freeze each message's chunk.
func (s *Shared) JoinCopy(o Shared) bool {
	s.grow(len(o.ch))
	changed := false
	for i, b := range o.ch {
		if b == nil || b.owner == nil {
			if s.joinChunk(i, b) {
				changed = true
			}
			continue
		}
		if zeros(b.use()) {
			continue
		}
		if a := s.ch[i]; a != nil {
			if _, bLeq := cmpChunks(a, b); bLeq {
				continue
			}
			s.own(i).join(b)
		} else {
			s.own(i).set(b.use())
		}
		changed = true
	}
	return changed
}

// share returns c to be referenced by another clock: frozen.
func share(c *chunk) *chunk {
	if c != nil {
		c.owner = nil
	}
	return c
}

// Set sets the clock of g.
func (s *Shared) Set(g trace.GID, c uint32) {
	i := int(g >> chunkShift)
	s.grow(i + 1)
	w, j := s.own(i), int(g&(chunkLen-1))
	w.v[j] = c
	w.n = max(w.n, j+1)
}

// Join sets s to s ⊔ o and reports whether s changed.
func (s *Shared) Join(o Shared) bool {
	s.grow(len(o.ch))
	changed := false
	for i, b := range o.ch {
		if s.joinChunk(i, b) {
			changed = true
		}
	}
	return changed
}

// joinChunk is chunk i of s ⊔= b: b itself when it is at least what s
// has, shared rather than copied.
func (s *Shared) joinChunk(i int, b *chunk) bool {
	a := s.ch[i]
	if a == b || b == nil {
		return false
	}
	if a == nil {
		s.ch[i] = share(b)
		return true
	}
	aLeq, bLeq := cmpChunks(a, b)
	switch {
	case aLeq:
		s.ch[i] = share(b) // equal or not: one chunk for both
		return !bLeq
	case bLeq:
		return false
	}
	s.own(i).join(b)
	return true
}

// cmpChunks reports whether a ⊑ b and whether b ⊑ a, in one pass.
func cmpChunks(a, b *chunk) (aLeq, bLeq bool) {
	if max(a.n, b.n) > chunkLen/2 {
		// Past n both are zeros: the whole arrays compare the same.
		aOver, bOver := cmpFull(&a.v, &b.v)
		return aOver == 0, bOver == 0
	}
	var aOver, bOver uint32
	for j := range max(a.n, b.n) {
		x, y := a.v[j], b.v[j]
		aOver |= b2u(x > y)
		bOver |= b2u(y > x)
	}
	return aOver == 0, bOver == 0
}

// Whole chunks go through cmpFull and joinFull: array equality (the
// runtime's vectorized compare) answers the equal case and the flags,
// and the loop left only takes maxima, with fixed bounds and no bounds
// checks. A clock of a thousand goroutines is 16 such chunks, and their
// joins were most of the analysis of a worker pool's trace
// (panjf2000/ants; BenchmarkJoinSharedWide against the entry-by-entry
// loop, docs/benchmarks.md).

// cmpFull is cmpChunks of whole chunks: nonzero aOver where some a[j] >
// b[j] (a ⊔ b is not b), nonzero bOver where some b[j] > a[j].
func cmpFull(a, b *[chunkLen]uint32) (aOver, bOver uint32) {
	if *a == *b {
		return 0, 0
	}
	var m [chunkLen]uint32
	for j := 0; j < chunkLen; j += 4 {
		m[j], m[j+1], m[j+2], m[j+3] = max(a[j], b[j]), max(a[j+1], b[j+1]), max(a[j+2], b[j+2]), max(a[j+3], b[j+3])
	}
	return b2u(m != *b), b2u(m != *a)
}

// joinFull is w ⊔= b of whole chunks: nonzero up where b raised an entry
// of w, nonzero down where w held more than b.
func joinFull(w, b *[chunkLen]uint32) (up, down uint32) {
	if *w == *b {
		return 0, 0
	}
	old := *w
	for j := 0; j < chunkLen; j += 4 {
		w[j], w[j+1], w[j+2], w[j+3] = max(w[j], b[j]), max(w[j+1], b[j+1]), max(w[j+2], b[j+2]), max(w[j+3], b[j+3])
	}
	return b2u(*w != old), b2u(*w != *b)
}

// b2u is 1 for true, 0 for false (the compiler makes it a SETcc).
func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// join is c ⊔= b.
func (c *chunk) join(b *chunk) {
	for j, x := range b.use() {
		c.v[j] = max(c.v[j], x)
	}
	c.n = max(c.n, b.n)
}

// Clone returns an independent copy of s (sharing its chunks, frozen).
func (s Shared) Clone() Shared {
	n := Shared{ch: make([]*chunk, len(s.ch))}
	for i, c := range s.ch {
		n.ch[i] = share(c)
	}
	return n
}

// Flat returns s as a VectorClock.
func (s Shared) Flat() VectorClock { return s.FlatInto(nil) }

// FlatInto returns s as a VectorClock, in dst's storage.
func (s Shared) FlatInto(dst VectorClock) VectorClock {
	dst = dst[:0]
	dst.grow(s.Len())
	for i, c := range s.ch {
		if c != nil {
			copy(dst[i<<chunkShift:], c.use())
		}
	}
	return dst
}

func (s Shared) String() string { return s.Flat().String() }

// Image is the chunked picture of a VectorClock that only grows (a
// goroutine's), kept so that the clocks copied from it share its chunks.
// Each chunk is at most the clock's chunk, and equal after Sync until the
// clock changes; all but the chunk of the clock's own entry, which
// changes at every tick: CopyTo and JoinTo read that one from the clock
// itself, into a chunk of the target's own, updated in place at the next
// copy. A goroutine that releases again and again then copies what it
// would copy without chunks (with fewer than chunkLen goroutines, every
// clock is that one chunk: no allocation per event, no image to keep).
type Image struct {
	ch    []*chunk
	tok   *byte  // owner of the chunks m may still update in place
	own   int    // the chunk of the own entry Sync was given
	ver   uint64 // the version Sync was told the clock had,
	valid bool   // if Sync ran since the image was made or forked
	dirty []int  // chunks JoinShared changed in the clock since (Advance)
}

// Sync makes m equal v but for the chunk of entry own. ver is v's version:
// it changes whenever v does other than at entry own, or by a
// JoinShared(_, m) that Advance reported.
func (m *Image) Sync(v VectorClock, ver uint64, own trace.GID) {
	n := chunks(len(v))
	m.own = int(own >> chunkShift)
	if m.valid && ver == m.ver && len(m.ch) == n {
		for _, i := range m.dirty {
			if i != m.own {
				m.syncChunk(v, i)
			}
		}
		m.dirty = m.dirty[:0]
		return
	}
	m.dirty = m.dirty[:0]
	if len(m.ch) > n { // only after a Fork from a wider clock than v
		clear(m.ch[n:])
		m.ch = m.ch[:n]
	}
	for len(m.ch) < n {
		m.ch = append(m.ch, nil)
	}
	for i := range n {
		if i != m.own {
			m.syncChunk(v, i)
		}
	}
	m.ver, m.valid = ver, true
}

// part is chunk i of v.
func part(v VectorClock, i int) []uint32 {
	lo := i << chunkShift
	return v[lo:min(lo+chunkLen, len(v))]
}

// syncChunk makes chunk i of m equal chunk i of v.
func (m *Image) syncChunk(v VectorClock, i int) {
	p := part(v, i)
	if c := m.ch[i]; c != nil && eqPart(c, p) {
		return
	}
	if zeros(p) {
		m.ch[i] = nil
		return
	}
	if m.tok == nil {
		m.tok = new(byte)
	}
	c := m.ch[i]
	if c == nil || c.owner != m.tok {
		c = &chunk{owner: m.tok}
		m.ch[i] = c
	}
	c.set(p)
}

// set makes c hold p, zeros after it.
func (c *chunk) set(p []uint32) {
	n := copy(c.v[:], p)
	clear(c.v[n:max(n, c.n)])
	c.n = n
}

// eqPart reports whether c holds p, zeros after it.
func eqPart(c *chunk, p []uint32) bool {
	if len(p) == chunkLen {
		return [chunkLen]uint32(p) == c.v
	}
	for j, x := range c.use() {
		if j < len(p) {
			if x != p[j] {
				return false
			}
		} else if x != 0 {
			return false
		}
	}
	for _, x := range p[min(c.n, len(p)):] {
		if x != 0 {
			return false
		}
	}
	return true
}

// Advance tells m its clock's version went from old to new by
// JoinShared(_, m) alone, which noted the chunks it changed: if m was in
// step with old, the next Sync looks at those only.
func (m *Image) Advance(old, new uint64) {
	if m.valid && m.ver == old {
		m.ver = new
	}
}

// Fork starts m, the image of a new clock that is at least the clock of
// parent's image, from parent's chunks.
func (m *Image) Fork(parent *Image) {
	m.ch = m.ch[:0]
	for _, c := range parent.ch {
		m.ch = append(m.ch, share(c))
	}
	m.valid = false
}

// CopyTo sets dst to v, the clock m pictures (call Sync first).
func (m *Image) CopyTo(dst *Shared, v VectorClock) {
	dst.grow(len(m.ch))
	for i, b := range m.ch {
		if i == m.own {
			dst.own(i).set(part(v, i)) // in place when dst has its own copy
			continue
		}
		dst.ch[i] = share(b)
	}
	clear(dst.ch[len(m.ch):])
	dst.ch = dst.ch[:len(m.ch)]
}

// JoinTo sets dst to dst ⊔ v, the clock m pictures (call Sync first), and
// reports whether dst changed.
func (m *Image) JoinTo(dst *Shared, v VectorClock) bool {
	dst.grow(len(m.ch))
	changed := false
	for i, b := range m.ch {
		if i == m.own {
			p := part(v, i)
			if a := dst.ch[i]; a != nil && leqPart(p, a) || a == nil && zeros(p) {
				continue
			}
			w := dst.own(i)
			for j, x := range p {
				w.v[j] = max(w.v[j], x)
			}
			w.n = max(w.n, len(p))
			changed = true
			continue
		}
		if dst.joinChunk(i, b) {
			changed = true
		}
	}
	return changed
}

// zeros reports whether p is all zeros.
func zeros(p []uint32) bool {
	for _, x := range p {
		if x != 0 {
			return false
		}
	}
	return true
}

// leqPart reports whether p ⊑ c.
func leqPart(p []uint32, c *chunk) bool {
	for j, x := range p {
		if x > c.v[j] {
			return false
		}
	}
	return true
}

// JoinShared sets v to v ⊔ s and reports whether v changed. m, v's image
// (nil: none), lets it skip the chunks s shares with v, and takes s's
// chunk where v ends up equal to it.
func (v *VectorClock) JoinShared(s Shared, m *Image) bool {
	changed := false
	for i, b := range s.ch {
		if b == nil {
			continue
		}
		if m != nil && i < len(m.ch) && m.ch[i] == b {
			continue // v ⊒ m's chunk, which is b
		}
		lo := i << chunkShift
		need := lo + b.n
		if need == lo {
			continue // a chunk of zeros
		}
		v.grow(need)
		w := (*v)[lo:min(lo+chunkLen, len(*v))]
		// One pass, without branches on the data: does b raise v's chunk
		// (grew), does v's chunk hold more than b (!same).
		var up, down uint32
		if b.n > chunkLen/2 && len(w) == chunkLen {
			// down also sees w's entries past b.n, as the recheck below would
			up, down = joinFull((*[chunkLen]uint32)(w), &b.v)
		} else {
			for j, c := range b.use() { // len(w) >= b.n: v grew to need
				x := w[j]
				up |= b2u(c > x)
				down |= b2u(x > c)
				w[j] = max(x, c)
			}
		}
		grew, same := up != 0, down == 0
		changed = changed || grew
		if m != nil && i < len(m.ch) {
			if same && b.owner == nil {
				for _, x := range w[b.n:] { // zeros past b.n, in b
					if x != 0 {
						same = false
						break
					}
				}
			}
			switch {
			case same && b.owner == nil:
				m.ch[i] = b // frozen already: taking it freezes no one's chunk
			case grew:
				if len(m.dirty) < len(m.ch) {
					m.dirty = append(m.dirty, i)
				} else {
					m.valid = false // many acquires, no release: Sync compares all
				}
			}
		}
	}
	return changed
}
