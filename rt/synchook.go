package rt

import (
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// WaitGroups of untraced code. racekit patches package sync so that a
// WaitGroup's decrement and the return of its Wait call a hook
// (instrument/synchook.go), where the race build has its annotations;
// setSyncHook, set by the file racekit adds to rt's copy, installs onSync
// there. httptest.Server.Close waits, on a WaitGroup, for the connections
// its handlers ran on: what a handler did is ordered before Close returns
// under go test -race, which instruments std, and was a false race under
// racekit. The edges go on the WaitGroup itself, the object traced code's
// WaitGroupDone and WaitGroupWait release and acquire, so that a Done of
// traced code orders before a Wait inside std and the other way round; a
// traced operation also passes through the hook, which records its edge
// a second time, a no-op. As for channels (chanhook.go), only goroutines
// rt has a state for record, and the hook makes none. The same hook
// reports the Mutex and RWMutex operations of every goroutine (onSync);
// sync.Map's methods have a hook of their own (maphook.go).

// setSyncHook installs sync's WaitGroup and mutex hook; nil without the
// patched package sync.
var setSyncHook func(h func(p unsafe.Pointer, op uint8))

func installSyncHook() {
	if setSyncHook != nil {
		lockHooked = haveGetg && goidOff != 0 && chanGOffsets[1] != 0 && chanGOffsets[2] != 0
		setSyncHook(onSync)
	}
}

// The operations sync's hook passes (instrument/synchook.go).
const (
	syncWGDone   = 0 // a WaitGroup's counter decremented (Add < 0, Done)
	syncWGWait   = 1 // a WaitGroup's Wait returns
	syncLock     = 2 // a Mutex locked (Lock, TryLock that succeeded)
	syncUnlock   = 3 // a Mutex about to be unlocked
	syncRLock    = 4 // an RWMutex read-locked
	syncRUnlock  = 5 // an RWMutex about to be read-unlocked
	syncRWLock   = 6 // an RWMutex write-locked
	syncRWUnlock = 7 // an RWMutex about to be write-unlocked
	// The atomics inside an RWMutex's and a WaitGroup's methods, which
	// the race build does not see (race.Disable), between these two:
	// skipped by the hooks as rt's own (atomichook.go).
	syncSkipEnter = 8
	syncSkipExit  = 9
)

// lockHookG is the goroutine an untraced mutex operation or sync.Map
// method (maphook.go) records for, or nil: none when rt skips it
// (ownmutex.go) or has no state for the goroutine (the runtime's mark,
// checked before any lock of rt's).
func lockHookG() *gstate {
	if !lockHooked || !on || ctl || syncSkipped() || *(*uint64)(unsafe.Add(getg(), chanGOffsets[1])) != goid() {
		return nil
	}
	return hookG()
}

// onSync runs in package sync on the goroutine of the operation.
//
// A mutex's edges are the race build's, on objects of the mutex's own
// (sync edges, not lock events: the lock events of traced code's mutexes
// are the hooks' to record, and std's critical sections are not ones
// prediction may reorder): a Mutex's Unlock releases and its Lock
// acquires the mutex's address; an RWMutex's write Unlock releases its
// address + 1 (the race build's readerSem), which RLock and Lock acquire,
// and its RUnlock releases its address + 2 (writerSem), which Lock
// acquires, so that readers are not ordered with each other. (A mutex's
// address is only ever a mutex's; no other object's edges are a few bytes
// into one.) Operations lockHookG turns away record nothing.
func onSync(p unsafe.Pointer, op uint8) {
	switch op {
	case syncSkipEnter:
		skipSync(1)
		return
	case syncSkipExit:
		skipSync(-1)
		return
	}
	var g *gstate
	if op >= syncLock {
		g = lockHookG()
	} else {
		g = hookG()
	}
	if g == nil {
		return
	}
	a := uint64(uintptr(p))
	switch op {
	case syncWGDone, syncUnlock:
		g.edge(trace.OpSyncRelease, 0, a)
	case syncWGWait, syncLock:
		g.edge(trace.OpSyncAcquire, 0, a)
	case syncRLock:
		g.edge(trace.OpSyncAcquire, 0, a+1)
	case syncRUnlock:
		g.edge(trace.OpSyncRelease, 0, a+2)
	case syncRWLock:
		g.edge(trace.OpSyncAcquire, 0, a+1)
		g.edge(trace.OpSyncAcquire, 0, a+2)
	case syncRWUnlock:
		g.edge(trace.OpSyncRelease, 0, a+1)
	}
}
