package lockset

import (
	"encoding/binary"
	"slices"
)

// Ent is one element of an interned lockset: a lock and whether it is held
// in write (exclusive) mode.
type Ent struct {
	Lock  uint64
	Write bool
}

// Interner interns lock lists sorted by lock into small dense IDs, so that
// a detector keeps one word per lockset (this package's shadow entries,
// detect/anomaly's events). ID 0 is the empty set. Not safe for
// concurrent use.
type Interner struct {
	sets  [][]Ent
	index map[string]uint32
	key   []byte
}

// NewInterner returns an interner holding the empty set, ID 0.
func NewInterner() Interner {
	s := Interner{index: map[string]uint32{}}
	s.Intern(nil)
	return s
}

// Intern returns the ID of the sorted list l (which it does not retain),
// and whether the list was new.
func (s *Interner) Intern(l []Ent) (id uint32, fresh bool) {
	s.key = s.key[:0]
	for _, e := range l {
		s.key = binary.LittleEndian.AppendUint64(s.key, e.Lock)
		if e.Write {
			s.key = append(s.key, 1)
		} else {
			s.key = append(s.key, 0)
		}
	}
	if id, ok := s.index[string(s.key)]; ok {
		return id, false
	}
	id = uint32(len(s.sets))
	s.index[string(s.key)] = id
	s.sets = append(s.sets, slices.Clone(l))
	return id, true
}

// Set returns the list of ID id (not to be modified).
func (s *Interner) Set(id uint32) []Ent { return s.sets[id] }

// Len is the number of sets interned.
func (s *Interner) Len() int { return len(s.sets) }
