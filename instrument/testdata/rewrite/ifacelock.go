package p

import "sync"

// An interface with Lock and Unlock of its own, not sync.Locker
// (go-sqlmock's expectation), whose dynamic types embed a sync.Mutex: its
// calls are sync.Locker's, hooked (rt.LockerLock finds the mutex).
type expectation interface {
	fulfilled() bool
	Lock()
	Unlock()
}

type expected struct {
	sync.Mutex
	triggered bool
}

func (e *expected) fulfilled() bool { return e.triggered }

// A Lock without Unlock is no Locker: left as it is.
type halfLock interface{ Lock() }

func check(es []expectation, h halfLock) int {
	n := 0
	for _, e := range es {
		e.Lock()
		if e.fulfilled() {
			n++
		}
		e.Unlock()
	}
	h.Lock()
	return n
}
