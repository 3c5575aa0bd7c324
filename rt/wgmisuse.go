package rt

import (
	"sync"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// WaitGroup misuse. The Go race detector reports a WaitGroup reused
// before a Wait returned, or an Add that takes the counter from 0 racing
// with a Wait, through two annotations inside sync.WaitGroup: such an Add
// reads the group's sema word, and the first Wait of a non-zero counter
// writes it (only the first, since concurrent Waits are correct). rt
// records the same accesses, at the same word. It cannot read the group's
// counter, so it keeps its own count of each group in use (wgShadows, the
// entry dropped when the count is back at 0): the updates are serialized
// by the entry's lock, an order in which the real ones could have run.
// The accesses are the caller's frame's, recorded when rec says so (as a
// lock's word: lockRead); the counts are kept whatever rec says.

type wgShadow struct {
	mu      OwnMutex
	count   int64
	waiters bool
	dead    bool // dropped from wgShadows: look again
}

var wgShadows OwnMap // *sync.WaitGroup -> *wgShadow

// wgMisuse turns the annotations on; RACEKIT_WGMISUSE=0 turns them off,
// for tests that compare the events of two runs, which must not depend on
// how workers interleave (which Add finds the counter at 0 does).
var wgMisuse = true

// wgSema is the address of wg's sema word (after its 8-byte state).
func wgSema(wg *sync.WaitGroup) uint64 {
	a := uint64(uintptr(unsafe.Pointer(wg)))
	if unsafe.Sizeof(*wg) >= 16 {
		a += 8
	}
	return a
}

// wgShadowOf returns wg's entry, locked (create: made if missing; else nil
// when missing).
func wgShadowOf(wg *sync.WaitGroup, create bool) *wgShadow {
	for {
		v, ok := wgShadows.Load(wg)
		if !ok {
			if !create {
				return nil
			}
			v, _ = wgShadows.LoadOrStore(wg, new(wgShadow))
		}
		s := v.(*wgShadow)
		s.mu.Lock()
		if !s.dead {
			return s
		}
		s.mu.Unlock()
	}
}

// wgCount is Add(delta)'s annotation: a read of sema when the counter
// goes from 0 to delta.
func wgCount(wg *sync.WaitGroup, delta int, site uint32, rec bool) {
	if !on || !wgMisuse || delta == 0 {
		return
	}
	s := wgShadowOf(wg, delta > 0)
	if s == nil {
		return // a decrement of a group rt never saw incremented
	}
	s.count += int64(delta)
	first := delta > 0 && s.count == int64(delta)
	if s.count <= 0 {
		// Back at 0 (a negative count panics in wg.Add): waiters are
		// released and the group starts over, as sync.WaitGroup resets it.
		s.dead = true
		wgShadows.CompareAndDelete(wg, s)
	}
	s.mu.Unlock()
	if first && rec {
		accessAddr(trace.OpRead, wgSema(wg), 4, site)
	}
}

// wgWaiter is Wait's annotation: the first waiter of a non-zero counter
// writes sema.
func wgWaiter(wg *sync.WaitGroup, site uint32, rec bool) {
	if !on || !wgMisuse {
		return
	}
	s := wgShadowOf(wg, false)
	if s == nil {
		return // counter 0: Wait returns at once
	}
	first := !s.waiters
	s.waiters = true
	s.mu.Unlock()
	if first && rec {
		accessAddr(trace.OpWrite, wgSema(wg), 4, site)
	}
}
