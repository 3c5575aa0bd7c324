package rt

import (
	"runtime"
	"sync"
	"testing"

	"github.com/racekit/racekit/trace"
)

// The Go race detector's WaitGroup annotations: an Add that takes the
// counter from 0 reads the group's sema word, the first Wait while it is
// above 0 writes it, and the group starts over once the counter is back at
// 0 (the next Add from 0 reads again).
func TestWaitGroupMisuse(t *testing.T) {
	var wg sync.WaitGroup
	sema := wgSema(&wg)
	tr := record(t, true, func(site uint32) {
		WaitGroupAdd(&wg, 1, site, true) // 0 -> 1: read
		WaitGroupAdd(&wg, 1, site, true) // 1 -> 2: nothing
		child := Fork(site)
		done := make(chan struct{}) // untraced
		go func() {
			defer close(done)
			Begin(child)
			defer End(child)
			WaitGroupWait(&wg, site, true) // first waiter: write
		}()
		for !waiting(&wg) {
			runtime.Gosched()
		}
		WaitGroupDone(&wg, site, true)
		WaitGroupAdd(&wg, -1, site, true) // 0: the group starts over
		<-done
		WaitGroupAdd(&wg, 1, site, true) // 0 -> 1 again: read
		WaitGroupDone(&wg, site, true)
		WaitGroupWait(&wg, site, true) // counter 0: nothing
	})
	got := ops(tr, func(e *trace.Event) bool {
		return e.Obj == sema && (e.Op == trace.OpRead || e.Op == trace.OpWrite)
	})
	if len(got) != 3 || got[0][2:] != "r a" || got[1][2:] != "w a" || got[2][2:] != "r a" ||
		got[0][:1] != got[2][:1] || got[0][:1] == got[1][:1] {
		t.Errorf("accesses of the sema word: %q, want a read by the test, a write by the waiter, a read by the test", got)
	}
	if _, ok := wgShadows.Load(&wg); ok {
		t.Error("the group's count is kept after it went back to 0")
	}
}

// waiting reports whether a Wait of wg was recorded while its counter is
// above 0.
func waiting(wg *sync.WaitGroup) bool {
	v, ok := wgShadows.Load(wg)
	if !ok {
		return false
	}
	s := v.(*wgShadow)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiters
}

// A channel traced code returns to a goroutine born in untraced code
// (ChanOut at depth 0 or 1) is acquired at that goroutine's next entry
// from untraced code (a close it waited on unseen orders what follows);
// one returned to a traced caller is not kept.
func TestChanOutAcquiredOnReentry(t *testing.T) {
	c := make(chan struct{})
	other := make(chan int)
	var gid trace.GID
	tr := record(t, true, func(site uint32) {
		done := make(chan struct{}) // untraced
		go func() {                 // born in untraced code
			defer close(done)
			Enter(site)
			Enter(site)
			ChanOut(other) // returned to a traced caller
			Leave(site)
			Leave(site)
			ChanOut(c) // returned to untraced code
			<-c        // an untraced wait
			Enter(site)
			gid = cur().gid
			Leave(site)
		}()
		Close(c, site, true)
		<-done
	})
	var acq []uint64
	for _, e := range tr.Events {
		if e.G == gid && e.Op == trace.OpSyncAcquire && e.Obj != ioObj {
			acq = append(acq, e.Obj)
		}
	}
	if len(acq) != 1 || acq[0] != chanAddr(c) {
		t.Errorf("acquires at the re-entry: %#x, want only the channel returned to untraced code %#x", acq, chanAddr(c))
	}
}
