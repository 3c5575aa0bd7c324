package rt

import (
	"sync"
	"testing"

	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/trace"
)

// edgeBody calls I/O, timer and context hooks in runs, as a loop over
// bufio or a poll of ctx.Done does, in frames of A (some sampled, some
// not) and between them, with a write and a lock now and then.
func edgeBody(base uint32, id int) {
	for i := 0; i < 200; i++ {
		a := Enter(base + smpFnA)
		for k := 0; k < 1+i%3; k++ {
			IOWrite(base + smpSiteA)
		}
		if i%5 == 0 {
			W(&smpArr[id*200+i], base+smpSiteA, a)
		}
		IORead(base + smpSiteA)
		IORead(base + smpSiteA)
		if i%7 == 0 {
			TimerStart(base + smpSiteB)
			MutexLock(&smpMu, base+smpSiteLock, true)
			MutexUnlock(&smpMu, base+smpSiteLock, true)
		}
		TimerFired(base + smpSiteB)
		CtxDone(base + smpSiteB)
		Leave(base + smpFnA)
		IOWrite(base + smpSiteRoot)
	}
}

// edgeWorkload runs edgeBody in the calling goroutine, then in a forked
// one, one after the other, so that which acquires find a new release is
// the same in every run.
func edgeWorkload(uint32) {
	base := RegisterFile("e.go", []string{"A", "B", "C"}, make([]uint32, 3*smpNSites))
	edgeBody(base, 0)
	c := Fork(base + smpSiteFork)
	var done sync.WaitGroup
	done.Add(1)
	go func() {
		defer done.Done()
		Begin(c)
		defer End(c)
		edgeBody(base, 1)
		c.Ok()
	}()
	done.Wait()
}

// globalEdges counts the events of tr on the runtime's global objects.
func globalEdges(tr *trace.Trace) int {
	global := sample.GlobalObjects(tr.M)
	n := 0
	for i := range tr.Events {
		if global[tr.Events[i].Obj] {
			n++
		}
	}
	return n
}

// A sampled run drops the redundant edges on the global objects as it
// records, by sample.Edges's rule exactly: a full run keeps every one;
// the sampled run records, goroutine by goroutine, what the offline
// sampler and Edges keep of the full run (sample.Shown applies both), and
// Edges finds nothing more to drop in what it recorded. Under every
// sampler, and with accesses off (sync mode).
func TestEdgesSampled(t *testing.T) {
	full := record(t, false, edgeWorkload)
	// Per goroutine: 200 iterations of 2..4 IOWrite, 2 IORead, TimerFired,
	// CtxDone's two acquires, every 7th a TimerStart, and the enter/leave
	// edges of the untraced-born caller.
	const perG = 200*(2+2+1+2) + 200/3*3 + 200/3*2 + 1 + (200+6)/7
	if n := globalEdges(full); n < 2*perG-10 {
		t.Fatalf("full run: %d events on the global objects, want about %d: a full run must keep every edge", n, 2*perG)
	}
	for _, name := range []string{"tl-ad", "tl-fx", "ucp", "rnd25"} {
		for _, mode := range []string{"", "sync"} {
			got := recordSampled(t, false, name, 3, mode, edgeWorkload)
			keep := all
			if mode == "sync" {
				keep = notAccess
			}
			want, _ := offline(t, full, name, 3)
			comparePerG(t, name+" "+mode, perGShown(got, keep), perGShown(want, keep))
			f := sample.NewEdges(func(o uint64) bool { return sample.GlobalObjects(got.M)[o] })
			for i := range got.Events {
				if !f.Keep(&got.Events[i]) {
					t.Fatalf("%s %s: the run recorded event %d (%v), which Edges drops", name, mode, i, got.Events[i].Op)
				}
			}
			if n, m := globalEdges(got), globalEdges(full); n*2 > m {
				t.Fatalf("%s %s: %d of %d edges on the global objects recorded: too few dropped", name, mode, n, m)
			}
		}
	}
}
