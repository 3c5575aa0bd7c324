package anomaly

import (
	"sort"

	"github.com/racekit/racekit/detect/lockset"
)

// locksets interns the sets of locks a goroutine holds (each lock with its
// strongest mode), so that an event's lockset l(i) is one word, and
// memoizes the protection test.
type locksets struct {
	lockset.Interner
	memo map[[2]uint32]bool
	buf  []lockset.Ent
}

func newLocksets() locksets {
	return locksets{Interner: lockset.NewInterner(), memo: map[[2]uint32]bool{}}
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
			if s.buf[i].Lock == h.lock {
				s.buf[i].Write = s.buf[i].Write || !h.read
				found = true
			}
		}
		if !found {
			s.buf = append(s.buf, lockset.Ent{Lock: h.lock, Write: !h.read})
		}
	}
	sort.Slice(s.buf, func(i, j int) bool { return s.buf[i].Lock < s.buf[j].Lock })
	id, _ := s.Intern(s.buf)
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
	for _, x := range s.Set(a) {
		for _, y := range s.Set(b) {
			if x.Lock == y.Lock && (x.Write || y.Write) {
				v = true
			}
		}
	}
	s.memo[k] = v
	return v
}
