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
// rt has a state for record, and the hook makes none.

// setSyncHook installs sync's WaitGroup hook; nil without the patched
// package sync.
var setSyncHook func(h func(p unsafe.Pointer, op uint8))

func installSyncHook() {
	if setSyncHook != nil {
		setSyncHook(onSync)
	}
}

// The operations sync's hook passes.
const (
	syncWGDone = 0 // a WaitGroup's counter decremented (Add < 0, Done)
	syncWGWait = 1 // a WaitGroup's Wait returns
)

// onSync runs in package sync on the goroutine of the operation.
func onSync(p unsafe.Pointer, op uint8) {
	g := hookG()
	if g == nil {
		return
	}
	switch op {
	case syncWGDone:
		g.edge(trace.OpSyncRelease, 0, uint64(uintptr(p)))
	case syncWGWait:
		g.edge(trace.OpSyncAcquire, 0, uint64(uintptr(p)))
	}
}
