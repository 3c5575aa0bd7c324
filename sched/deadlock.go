package sched

import (
	"fmt"
	"strings"
)

// Link is one goroutine of a lock-order cycle (iGoodlock's dependency,
// package detect/deadlock): it holds a lock it took at Held and requests
// another at Request. For a lock held across a channel operation
// (detect/deadlock's LockChannel) Request may be a channel operation, and
// the link of the goroutine that requests the lock has no Held (the zero
// Stmt, written "*"): it holds nothing the cycle needs.
type Link struct {
	Held, Request Stmt
}

// anyHeld is how a Link with no Held is written.
const anyHeld = "*"

// Cycle is a potential deadlock's links, in cycle order: each link's
// requested lock is held by the next.
type Cycle []Link

// ParseCycle parses "held>request,held>request[,...]", each statement a
// file:line[:col] (ParseStmt).
func ParseCycle(s string) (Cycle, error) {
	var c Cycle
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		h, r, ok := strings.Cut(strings.TrimSpace(part), ">")
		hs, ok1 := ParseStmt(strings.TrimSpace(h))
		if strings.TrimSpace(h) == anyHeld {
			hs, ok1 = Stmt{}, true
		}
		rs, ok2 := ParseStmt(strings.TrimSpace(r))
		if !ok || !ok1 || !ok2 {
			return nil, fmt.Errorf("cycle %q: %q is not held>request (each file:line, held may be %s)", s, part, anyHeld)
		}
		c = append(c, Link{hs, rs})
	}
	if len(c) < 2 {
		return nil, fmt.Errorf("cycle %q: want two links or more, held>request,held>request", s)
	}
	return c, nil
}

// String is the cycle as ParseCycle reads it.
func (c Cycle) String() string {
	parts := make([]string, len(c))
	for i, l := range c {
		h := l.Held.String()
		if l.Held == (Stmt{}) {
			h = anyHeld
		}
		parts[i] = h + ">" + l.Request.String()
	}
	return strings.Join(parts, ",")
}

// DeadlockFuzzer is the directed scheduler of DeadlockFuzzer (Joshi, Park,
// Sen, Naik, PLDI'09, section 4): given a lock-order cycle predicted from
// an earlier run, a goroutine about to take a lock at one of the cycle's
// request statements while it holds a lock taken at that link's held
// statement is paused there, so that the other goroutines of the cycle
// can reach theirs; elsewhere the choice is random. Once each holds its
// lock and requests the next one's, none is enabled: the deadlock has
// happened, and rt reports it (each goroutine's blocked Lock). As in
// RaceFuzzer, when every enabled goroutine is paused one is released at
// random, and one paused for more than MaxWait decisions is released (a
// cycle that cannot form must not hang the run).
//
// The strategy keeps each goroutine's held locks itself, from the lock and
// unlock points it lets run (rt asks it at every point).
type DeadlockFuzzer struct {
	holdBack
	cycle Cycle
	locks map[string][]heldLock // each goroutine's held locks
}

type heldLock struct {
	obj  uint64
	site string
	col  int
}

// NewDeadlockFuzzer returns the DeadlockFuzzer strategy for cycle, seeded
// with seed.
func NewDeadlockFuzzer(seed uint64, cycle Cycle) *DeadlockFuzzer {
	return &DeadlockFuzzer{holdBack: newHoldBack(seed), cycle: cycle, locks: map[string][]heldLock{}}
}

// WouldPause implements Pauser.
func (s *DeadlockFuzzer) WouldPause(p Point) bool { return p.Enabled && s.link(p) >= 0 }

// link returns the index of the cycle's link p is a request of, with a
// lock held at that link's held statement (another lock than the one
// requested), or -1. A request is a Lock or RLock, or for a lock held
// across a channel operation a send or a receive; a link with no Held
// needs no lock held.
func (s *DeadlockFuzzer) link(p Point) int {
	if p.Kind != KindLock && p.Kind != KindRLock && p.Kind != KindSend && p.Kind != KindRecv {
		return -1
	}
	for i, l := range s.cycle {
		if !l.Request.AtSite(p.Site, p.Col) {
			continue
		}
		if l.Held == (Stmt{}) {
			if p.Kind == KindLock || p.Kind == KindRLock {
				return i
			}
			continue
		}
		for _, h := range s.locks[p.G] {
			if h.obj != p.Obj && l.Held.AtSite(h.site, h.col) {
				return i
			}
		}
	}
	return -1
}

// Next implements Strategy. A paused goroutine that can no longer
// proceed is blocked on its request (the lock was taken meanwhile: the
// cycle forming) or gone.
func (s *DeadlockFuzzer) Next(w []Point) int {
	return s.chose(w, s.next(w, func(p Point) bool { return p.Enabled }, "paused", func(p Point) (string, bool) {
		k := s.link(p)
		if k < 0 {
			return "", false
		}
		return fmt.Sprintf("%s at link %d (%s)", p, k+1, s.cycle[k].Request), true
	}))
}

// chose keeps the held locks of the goroutine w[i] lets run, and returns
// i.
func (s *DeadlockFuzzer) chose(w []Point, i int) int {
	p := w[i]
	switch p.Kind {
	case KindLock, KindRLock:
		if p.Obj != 0 {
			s.locks[p.G] = append(s.locks[p.G], heldLock{p.Obj, p.Site, p.Col})
		}
	case KindUnlock, KindRUnlock:
		h := s.locks[p.G]
		for j := len(h) - 1; j >= 0; j-- {
			if h[j].obj == p.Obj {
				s.locks[p.G] = append(h[:j], h[j+1:]...)
				break
			}
		}
	case KindEnd:
		delete(s.locks, p.G)
	}
	return i
}
