package rt

import (
	"runtime"
	"testing"
	"time"
)

// While rttest.AllocsPerRun counts (CountAllocs), racekit allocates
// nothing the count sees: the writer's rounds wait (their timer, a wake
// round, a goroutine's help), a walk takes a spare walker, the dedup table
// does not grow, and the counting goroutine's pending frames have room. A
// garbage collection before each count empties the sync.Pools rt draws on
// (a new walker, the pool's per-P array), and a busy wait lets the writer's
// timer fire in the window. go test counts 0; so must racekit (e2e
// TestTestUnchanged's AllocsPerRun(1, ...) counted 1 under GOGC=1).
func TestCountAddsNoAllocation(t *testing.T) {
	words := make([]uint64, 4096)
	type node struct {
		v    int
		next *node
	}
	list := &node{1, &node{2, &node{3, nil}}}
	escapeSink = words
	var extra []uint64
	record(t, true, func(site uint32) {
		var nested func(d int)
		nested = func(d int) {
			if d == 0 {
				for i := range words {
					*W(&words[i], site, true) = uint64(i) // the table would grow
				}
				CallBegin(site, list) // a walk, at a call of untraced code
				CallEnd(site)
				return
			}
			Enter(site)
			defer Leave(site)
			nested(d - 1)
		}
		nested(3)                                       // warm-up: this goroutine's state, its first chunks
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // as testing.AllocsPerRun
		var m runtime.MemStats
		for i := 0; i < 10; i++ {
			runtime.GC()
			CountAllocs(1)
			runtime.ReadMemStats(&m)
			before := m.Mallocs
			SyncRelease(NewObject(), site) // a new epoch: every word again
			nested(8)
			for end := time.Now().Add(2 * tick); time.Now().Before(end); {
				// The writer's timer comes due, and its callback may run
				// when this goroutine is preempted.
			}
			runtime.ReadMemStats(&m)
			CountAllocs(-1)
			extra = append(extra, m.Mallocs-before)

		}
	})
	for i, n := range extra {
		if n != 0 {
			t.Errorf("count %d: %d allocations, want 0 (all: %v)", i, n, extra)
			break
		}
	}
}

// A count holds the writer's timer, and the round due meanwhile runs when
// the count ends: what was recorded in the window is written without a
// Flush.
func TestCountHoldsWriter(t *testing.T) {
	var x uint64
	escapeSink = &x
	record(t, true, func(site uint32) {
		written := func() uint64 {
			wmu.Lock()
			defer wmu.Unlock()
			return outSeq
		}
		CountAllocs(1)
		time.Sleep(tick) // a round under way when the count began ends
		held := written()
		for i := 0; i < 100; i++ {
			*W(&x, site, true) = uint64(i)
			SyncRelease(NewObject(), site)
		}
		time.Sleep(5 * tick)
		if n := written(); n != held {
			t.Errorf("the writer wrote %d events while a count held it", n-held)
		}
		CountAllocs(-1)
		deadline := time.Now().Add(10 * time.Second)
		for written() == held && time.Now().Before(deadline) {
			time.Sleep(tick)
		}
		if written() == held {
			t.Errorf("no round ran after the count ended")
		}
	})
}
