package anomaly

import "sort"

// lockEnt is one lock of a lockset with its strongest mode.
type lockEnt struct {
	lock  uint64
	write bool
}

// locksets interns the sets of locks a goroutine holds, so that an event's
// lockset l(i) is one word and the protection test is memoized.
type locksets struct {
	sets  [][]lockEnt
	index map[string]uint32
	memo  map[[2]uint32]bool
	buf   []lockEnt
	key   []byte
}

func newLocksets() locksets {
	return locksets{sets: [][]lockEnt{nil}, index: map[string]uint32{"": 0}, memo: map[[2]uint32]bool{}}
}

// of interns the set held (a lock held in both modes counts as write).
func (s *locksets) of(held []hold) uint32 {
	if len(held) == 0 {
		return 0
	}
	s.buf = s.buf[:0]
	for _, h := range held {
		found := false
		for i := range s.buf {
			if s.buf[i].lock == h.lock {
				s.buf[i].write = s.buf[i].write || !h.read
				found = true
			}
		}
		if !found {
			s.buf = append(s.buf, lockEnt{h.lock, !h.read})
		}
	}
	sort.Slice(s.buf, func(i, j int) bool { return s.buf[i].lock < s.buf[j].lock })
	s.key = s.key[:0]
	for _, e := range s.buf {
		for k := 0; k < 8; k++ {
			s.key = append(s.key, byte(e.lock>>(8*k)))
		}
		if e.write {
			s.key = append(s.key, 1)
		} else {
			s.key = append(s.key, 0)
		}
	}
	if id, ok := s.index[string(s.key)]; ok {
		return id
	}
	id := uint32(len(s.sets))
	s.sets = append(s.sets, append([]lockEnt(nil), s.buf...))
	s.index[string(s.key)] = id
	return id
}

// protects reports whether sets a and b share a lock that at least one of
// them holds in write mode (read locks do not exclude each other).
func (s *locksets) protects(a, b uint32) bool {
	if a == 0 || b == 0 {
		return false
	}
	if a > b {
		a, b = b, a
	}
	k := [2]uint32{a, b}
	if v, ok := s.memo[k]; ok {
		return v
	}
	v := false
	for _, x := range s.sets[a] {
		for _, y := range s.sets[b] {
			if x.lock == y.lock && (x.write || y.write) {
				v = true
			}
		}
	}
	s.memo[k] = v
	return v
}
