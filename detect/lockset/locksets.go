package lockset

const (
	emptySet = 0              // ID of the empty lockset
	topSet   = ^uint32(0)     // Eraser's initial C(v): every lock
	noProj   = ^uint32(0) - 1 // projection not computed yet
)

type transOp uint8

const (
	opAddRead transOp = iota
	opAddWrite
	opRemove
)

type transKey struct {
	from uint32
	op   transOp
	lock uint64
}

type meetKey struct{ a, b uint32 }

// locksets interns sorted lock lists into small dense IDs (Interner;
// candidate sets, Eraser's C(v), with Write false: sets of locks, modes
// already applied), so that a shadow
// entry carries one word for its lockset, and caches the transitions
// (acquire, release, projection, intersection) between them so that the
// per-event work is a map lookup with no allocation once a set was seen.
type locksets struct {
	Interner          // the sets by ID; emptySet is the empty one
	hasWrite []bool   // by ID: some lock held in write mode
	projR    []uint32 // by ID: the set's locks, modes dropped (refines C(v) on reads)
	projW    []uint32 // by ID: its write-mode locks, modes dropped (refines C(v) on writes)
	trans    map[transKey]uint32
	meets    map[meetKey]uint32
	scratch  []Ent
}

func newLocksets() locksets {
	s := locksets{
		Interner: Interner{index: make(map[string]uint32)},
		trans:    make(map[transKey]uint32),
		meets:    make(map[meetKey]uint32),
	}
	s.intern(nil)
	return s
}

func (s *locksets) len() int { return s.Len() }

// intern returns the ID of the sorted list l (which it does not retain),
// with the set's derived tables grown for a new one.
func (s *locksets) intern(l []Ent) uint32 {
	id, fresh := s.Intern(l)
	if !fresh {
		return id
	}
	hw := false
	for _, e := range l {
		hw = hw || e.Write
	}
	s.hasWrite = append(s.hasWrite, hw)
	s.projR = append(s.projR, noProj)
	s.projW = append(s.projW, noProj)
	return id
}

// add returns the ID of set from with lock added in the given mode (any
// entry for lock already in from is replaced).
func (s *locksets) add(from uint32, lock uint64, write bool) uint32 {
	op := opAddRead
	if write {
		op = opAddWrite
	}
	k := transKey{from, op, lock}
	if id, ok := s.trans[k]; ok {
		return id
	}
	l := s.scratch[:0]
	done := false
	for _, e := range s.sets[from] {
		switch {
		case e.Lock == lock:
			continue
		case !done && e.Lock > lock:
			l = append(l, Ent{lock, write})
			done = true
		}
		l = append(l, e)
	}
	if !done {
		l = append(l, Ent{lock, write})
	}
	s.scratch = l
	id := s.intern(l)
	s.trans[k] = id
	return id
}

// remove returns the ID of set from without lock.
func (s *locksets) remove(from uint32, lock uint64) uint32 {
	k := transKey{from, opRemove, lock}
	if id, ok := s.trans[k]; ok {
		return id
	}
	l := s.scratch[:0]
	for _, e := range s.sets[from] {
		if e.Lock != lock {
			l = append(l, e)
		}
	}
	s.scratch = l
	id := s.intern(l)
	s.trans[k] = id
	return id
}

// protects reports whether some lock is held in both a and b, in write mode
// in at least one of them.
func (s *locksets) protects(a, b uint32) bool {
	if a == emptySet || b == emptySet {
		return false
	}
	if a == b {
		return s.hasWrite[a]
	}
	la, lb := s.sets[a], s.sets[b]
	i, j := 0, 0
	for i < len(la) && j < len(lb) {
		switch {
		case la[i].Lock < lb[j].Lock:
			i++
		case la[i].Lock > lb[j].Lock:
			j++
		default:
			if la[i].Write || lb[j].Write {
				return true
			}
			i++
			j++
		}
	}
	return false
}

// proj returns the candidate set an access holding set id refines C(v) to
// intersect with: every lock it holds for a read, only its write-mode locks
// for a write (a read lock does not protect a write).
func (s *locksets) proj(id uint32, write bool) uint32 {
	tab := s.projR
	if write {
		tab = s.projW
	}
	if p := tab[id]; p != noProj {
		return p
	}
	l := s.scratch[:0]
	for _, e := range s.sets[id] {
		if e.Write || !write {
			l = append(l, Ent{e.Lock, false})
		}
	}
	s.scratch = l
	p := s.intern(l)
	// intern may have grown the tables: index them afresh.
	if write {
		s.projW[id] = p
	} else {
		s.projR[id] = p
	}
	return p
}

// meet returns the ID of the intersection of candidate sets a and b; topSet
// is the set of every lock.
func (s *locksets) meet(a, b uint32) uint32 {
	switch {
	case a == topSet:
		return b
	case b == topSet || a == b:
		return a
	case a == emptySet || b == emptySet:
		return emptySet
	}
	if a > b {
		a, b = b, a
	}
	k := meetKey{a, b}
	if id, ok := s.meets[k]; ok {
		return id
	}
	la, lb := s.sets[a], s.sets[b]
	l := s.scratch[:0]
	i, j := 0, 0
	for i < len(la) && j < len(lb) {
		switch {
		case la[i].Lock < lb[j].Lock:
			i++
		case la[i].Lock > lb[j].Lock:
			j++
		default:
			l = append(l, la[i])
			i++
			j++
		}
	}
	s.scratch = l
	id := s.intern(l)
	s.meets[k] = id
	return id
}
