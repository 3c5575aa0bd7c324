package clock

import (
	"math/rand"
	"testing"

	"github.com/racekit/racekit/trace"
)

// BenchmarkSyncWide is the Tracker's synchronization on wide clocks, the
// shape of an atomics- and lock-heavy test binary (maypok86/otter: 1,762
// goroutines, 6.5M lock acquires and 6.5M atomic operations in 68M events):
// 512 goroutines, each mostly re-taking its own locks and loading words it
// stored, sometimes another's. "exact" makes every join; "skip" skips
// those objVC knows to change nothing. Same run, same events.
func BenchmarkSyncWide(b *testing.B) {
	const gs = 512
	r := rand.New(rand.NewSource(1))
	var evs []trace.Event
	for g := 1; g <= gs; g++ {
		evs = append(evs, trace.Event{G: 0, Op: trace.OpFork, Obj: uint64(g)})
	}
	for i := 0; i < 20000; i++ {
		g := trace.GID(1 + r.Intn(gs))
		own := uint64(g)*8 + uint64(r.Intn(4)) // its own lock or word
		if r.Intn(10) == 0 {
			own = uint64(1+r.Intn(gs))*8 + uint64(r.Intn(4)) // another's
		}
		evs = append(evs,
			trace.Event{G: g, Op: trace.OpAcquire, Obj: own},
			trace.Event{G: g, Op: trace.OpRelease, Obj: own},
			trace.Event{G: g, Op: trace.OpAtomicLoad, Obj: own},
			trace.Event{G: g, Op: trace.OpAtomicStore, Obj: own})
	}
	for _, mode := range []string{"exact", "skip"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				k := New(AllEdges)
				k.exact = mode == "exact"
				for i := range evs {
					e := &evs[i]
					t := k.Running(e)
					if t == nil {
						t = k.Start(e.G)
					}
					k.Sync(t, e)
				}
			}
			b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
