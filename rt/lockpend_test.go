package rt

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// lockHolders logs, in lockWorkload, which goroutine (k) holds smpMu, in
// the real order (appended under the lock).
var lockHolders []int

// lockWorkload: ngor goroutines (forked, run at once) each take smpMu
// iters times around a write of a shared counter word, in frames of A that
// the sampler samples or not; goroutine 0 also releases ioObj before and
// inside one critical section, with nothing recorded between the two
// releases but the lock's acquisition.
func lockWorkload(ngor, iters int) func(uint32) {
	lockHolders = nil
	return func(uint32) {
		base := RegisterFile("k.go", []string{"A", "B", "C"}, make([]uint32, 3*smpNSites))
		var ended sync.WaitGroup
		for k := 0; k < ngor; k++ {
			c := Fork(base + smpSiteFork)
			ended.Add(1)
			go func() {
				defer ended.Done()
				Begin(c)
				defer End(c)
				for i := 0; i < iters; i++ {
					a := Enter(base + smpFnA)
					MutexLock(&smpMu, base+smpSiteLock, a)
					W(&smpArr[1000], base+smpSiteA, a)
					lockHolders = append(lockHolders, k)
					MutexUnlock(&smpMu, base+smpSiteLock, a)
					Leave(base + smpFnA)
				}
				if k == 0 {
					IOWrite(base + smpSiteB)
					MutexLock(&smpMu, base+smpSiteLock, true)
					IOWrite(base + smpSiteB) // not redundant: the acquisition grew the clock
					lockHolders = append(lockHolders, k)
					MutexUnlock(&smpMu, base+smpSiteLock, true)
				}
				c.Ok()
			}()
		}
		ended.Wait()
	}
}

// A sampled run records an exclusive lock's acquisition with the
// goroutine's next event (acquireLock). The trace stays exact: the lock's
// events are well formed in the global order (never two holders), each
// goroutine's events are in program order with the acquisition right
// before what followed it, and a release of a global object after a lock
// taken since is kept. Every acquisition is recorded but the critical
// sections sample.Edges drops, a goroutine taking the lock again with
// nothing recorded since its release: every handover (the lock taken by
// another goroutine than its last holder) is in the trace, as in the real
// order of holders, and every critical section holding a sampled write.
func TestLockAcquisitionDelayed(t *testing.T) {
	const ngor, iters = 4, 400
	for _, name := range []string{"tl-ad", "rnd25"} {
		t.Run(name, func(t *testing.T) {
			tr := recordSampled(t, false, name, 2, "", lockWorkload(ngor, iters))
			mu := ptr(unsafe.Pointer(&smpMu))
			holder := map[uint64]trace.GID{}
			acqs, writes := 0, 0
			var recHolders []int             // the recorded acquisitions' goroutines, in order
			last := map[trace.GID]trace.Op{} // each goroutine's previous event on mu or the counter
			for i, e := range tr.Events {
				switch {
				case e.Op == trace.OpAcquire && e.Obj == mu:
					if h, held := holder[mu]; held {
						t.Fatalf("event %d: %v acquires the lock held by %v", i, e.G, h)
					}
					holder[mu] = e.G
					acqs++
					recHolders = append(recHolders, int(e.G))
					last[e.G] = e.Op
				case e.Op == trace.OpRelease && e.Obj == mu:
					if h, held := holder[mu]; !held || h != e.G {
						t.Fatalf("event %d: %v releases the lock, held by %v (%v)", i, e.G, h, held)
					}
					if last[e.G] != trace.OpAcquire && last[e.G] != trace.OpWrite {
						t.Fatalf("event %d: release by %v after %v", i, e.G, last[e.G])
					}
					delete(holder, mu)
					last[e.G] = e.Op
				case e.Op == trace.OpWrite && e.Obj == ptr(unsafe.Pointer(&smpArr[1000])):
					if holder[mu] != e.G || last[e.G] != trace.OpAcquire {
						t.Fatalf("event %d: the counter written by %v outside its critical section", i, e.G)
					}
					writes++
					last[e.G] = e.Op
				}
			}
			handovers := func(hs []int) (n int) {
				for i := 1; i < len(hs); i++ {
					if hs[i] != hs[i-1] {
						n++
					}
				}
				return n
			}
			if len(lockHolders) != ngor*iters+1 {
				t.Fatalf("%d critical sections logged, want %d", len(lockHolders), ngor*iters+1)
			}
			if got, want := handovers(recHolders), handovers(lockHolders); got != want || acqs > len(lockHolders) || acqs < writes {
				t.Fatalf("%d acquisitions recorded with %d handovers, want %d handovers, %d to %d acquisitions", acqs, got, want, writes, len(lockHolders))
			}
			t.Logf("%d of %d acquisitions recorded, %d handovers", acqs, len(lockHolders), handovers(lockHolders))
			if writes == 0 || writes == ngor*iters {
				t.Fatalf("%d of %d writes sampled: the workload does not exercise sampling", writes, ngor*iters)
			}
			io := 0
			for _, e := range tr.Events {
				if e.Op == trace.OpSyncRelease && e.Obj == ioObj {
					io++
				}
			}
			if io != 2 {
				t.Fatalf("%d releases of I/O recorded, want 2 (a lock was taken between them)", io)
			}
		})
	}
	// The mechanism itself: after Lock, the acquisition waits in the
	// goroutine's state, and Unlock records both.
	tr := recordSampled(t, false, "tl-ad", 1, "", func(uint32) {
		MutexLock(&smpMu, 0, true)
		if g := cur(); !g.lockPend.on {
			panic("the acquisition was recorded at once")
		}
		MutexUnlock(&smpMu, 0, true)
		if g := cur(); g.lockPend.on {
			panic("the acquisition is still pending after Unlock")
		}
	})
	var ops []string
	for _, e := range tr.Events {
		if e.Obj == ptr(unsafe.Pointer(&smpMu)) && (e.Op == trace.OpAcquire || e.Op == trace.OpRelease) {
			ops = append(ops, fmt.Sprint(e.Op))
		}
	}
	if fmt.Sprint(ops) != "[acq rel]" {
		t.Fatalf("lock events %v, want [acq rel]", ops)
	}
}
