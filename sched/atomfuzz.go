package sched

import (
	"fmt"
	"strings"
)

// Split is an atomic region's two critical sections on one lock: a
// goroutine took the lock at First, released it, and took it again at
// Second within one invocation of the region's function. Code that checks
// in the first section and acts in the second (`if s.available() {
// s.take() }`, each method locked) is atomic only if no other goroutine
// runs the first section in between (AtomFuzzer: Park and Sen, FSE'08,
// section 3, the lock-release-acquire pattern of an atomic block).
type Split struct {
	First, Second Stmt
}

// ParseSplit parses "first>second", each statement a file:line[:col]
// (ParseStmt).
func ParseSplit(s string) (Split, error) {
	f, sec, ok := strings.Cut(strings.TrimSpace(s), ">")
	fs, ok1 := ParseStmt(strings.TrimSpace(f))
	ss, ok2 := ParseStmt(strings.TrimSpace(sec))
	if !ok || !ok1 || !ok2 {
		return Split{}, fmt.Errorf("split %q: want first>second, each file:line", s)
	}
	return Split{fs, ss}, nil
}

// String is the split as ParseSplit reads it.
func (s Split) String() string { return s.First.String() + ">" + s.Second.String() }

// AtomFuzzer is AtomFuzzer's directed scheduler (Park and Sen, FSE'08,
// section 3) for one Split: a goroutine about to take the lock at Second
// whose last critical section on that lock began at First is paused, so
// that others run meanwhile; when another goroutine takes the same lock
// at First while it waits, the region's atomicity is violated for real
// (Violations), and what the test does next (a failed check, a panic) is
// that violation's effect. Elsewhere the choice is random. As in
// RaceFuzzer, when every enabled goroutine is paused one is released at
// random, and one paused for more than MaxWait decisions is released.
type AtomFuzzer struct {
	holdBack
	split Split
	// last is, per goroutine and lock, the statement that took the lock
	// for the goroutine's last critical section on it: while it holds the
	// lock, the current one's.
	last map[string]map[uint64]heldLock
	// open is, per goroutine between the sections (it released a lock
	// taken at First), that lock; entered, the point of another goroutine
	// that took it at First meanwhile.
	open       map[string]uint64
	entered    map[string]Point
	violations []Violation
	// pausedAt is, per goroutine, the point (Point.N) it was last paused
	// at: once released there it goes on, or a goroutine released while
	// another spins on the lock would be paused again at once, forever.
	pausedAt map[string]int
}

// atomMaxWait bounds the decisions a goroutine stays paused between its
// sections: the others get that long to enter the first section; one that
// waits on the paused goroutine (spinning on the lock, say) should not
// wait longer.
const atomMaxWait = 200

// Violation is an interleaving AtomFuzzer made: Other took the lock at the
// split's first statement between Paused's two sections (Paused's point
// is the taking of its second).
type Violation struct {
	Step          int // decision number
	Paused, Other Point
}

// NewAtomFuzzer returns the AtomFuzzer strategy for split, seeded with
// seed.
func NewAtomFuzzer(seed uint64, split Split) *AtomFuzzer {
	s := &AtomFuzzer{holdBack: newHoldBack(seed), split: split, last: map[string]map[uint64]heldLock{}, open: map[string]uint64{}, entered: map[string]Point{}, pausedAt: map[string]int{}}
	s.MaxWait = atomMaxWait
	return s
}

// Violations returns the interleavings made so far.
func (s *AtomFuzzer) Violations() []Violation { return s.violations }

// WouldPause implements Pauser.
func (s *AtomFuzzer) WouldPause(p Point) bool { return p.Enabled && s.pauses(p) }

// pauses reports whether p is a point to pause at: between the sections,
// and not the point the goroutine was paused at and released from.
func (s *AtomFuzzer) pauses(p Point) bool {
	n, ok := s.pausedAt[p.G]
	return s.between(p) && (!ok || n != p.N)
}

// waiting reports whether the goroutine at p, held back, still waits at
// the point it was paused at.
func (s *AtomFuzzer) waiting(p Point) bool {
	n, ok := s.pausedAt[p.G]
	return ok && n == p.N && s.between(p)
}

// between reports whether p takes a lock at the split's second statement
// after a critical section on it that began at the first.
func (s *AtomFuzzer) between(p Point) bool {
	if (p.Kind != KindLock && p.Kind != KindRLock) || p.Obj == 0 {
		return false
	}
	h, ok := s.last[p.G][p.Obj]
	return ok && s.split.Second.AtSite(p.Site, p.Col) && s.split.First.AtSite(h.site, h.col)
}

// atFirst reports whether p takes a lock at the split's first statement.
func (s *AtomFuzzer) atFirst(p Point) bool {
	if p.Kind != KindLock && p.Kind != KindRLock {
		return false
	}
	return s.split.First.AtSite(p.Site, p.Col)
}

// Next implements Strategy.
func (s *AtomFuzzer) Next(w []Point) int {
	// A paused goroutine stays paused while it waits at its second
	// section, enabled or not (the lock taken by the one it lets in).
	return s.chose(w, s.next(w, s.waiting, "paused", func(p Point) (string, bool) {
		if !s.pauses(p) {
			return "", false
		}
		s.pausedAt[p.G] = p.N
		return fmt.Sprintf("%s between the sections of %s", p, s.split), true
	}))
}

// chose keeps the critical sections of the goroutine w[i] lets run and
// notes a violation, and returns i.
func (s *AtomFuzzer) chose(w []Point, i int) int {
	p := w[i]
	switch p.Kind {
	case KindLock, KindRLock:
		if p.Obj == 0 {
			break
		}
		if s.between(p) {
			if o, ok := s.entered[p.G]; ok {
				s.violations = append(s.violations, Violation{Step: s.step, Paused: p, Other: o})
				s.notes = append(s.notes, Note{"violation", fmt.Sprintf("%s took the lock at %s between %s's sections of %s", o.G, s.split.First, p.G, s.split)})
			}
		}
		if obj, ok := s.open[p.G]; ok && obj == p.Obj {
			delete(s.open, p.G)
			delete(s.entered, p.G)
		}
		if s.atFirst(p) {
			for g, obj := range s.open {
				if _, ok := s.entered[g]; !ok && obj == p.Obj && g != p.G {
					s.entered[g] = p
				}
			}
		}
		if s.last[p.G] == nil {
			s.last[p.G] = map[uint64]heldLock{}
		}
		s.last[p.G][p.Obj] = heldLock{p.Obj, p.Site, p.Col}
	case KindUnlock, KindRUnlock:
		if h, ok := s.last[p.G][p.Obj]; ok && p.Obj != 0 && s.split.First.AtSite(h.site, h.col) {
			s.open[p.G] = p.Obj
		}
	case KindEnd:
		delete(s.last, p.G)
		delete(s.open, p.G)
		delete(s.entered, p.G)
		delete(s.pausedAt, p.G)
	}
	return i
}

// byG is the index of goroutine g's point in w, -1 if absent.
func byG(w []Point, g string) int {
	for i := range w {
		if w[i].G == g {
			return i
		}
	}
	return -1
}
