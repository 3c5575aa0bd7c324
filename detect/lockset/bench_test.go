package lockset

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// syntheticStream returns a well-formed stream of about n events shaped like
// a lock-based server: main forks 8 workers, which run chunks of work, each
// chunk one goroutine's at a time (so locks are never contended in the
// stream): 50% critical sections (Lock or, for reading, RLock of one of 16
// locks, 1-4 accesses to the 64 words that lock guards, unlock), 25%
// unlocked accesses (mostly to the worker's own words, 1 in 8 to a guarded
// word: the racy ones), 20% channel sends and receives on 8 channels, 5%
// atomics on 64 words. Then every worker ends and main joins it. Each word
// is accessed from 2 sites per kind.
func syntheticStream(n int) []trace.Event {
	const (
		workers = 8
		nlocks  = 16
		perLock = 64   // guarded words per lock
		private = 1024 // private words per worker
		chans   = 8
		words   = 64
	)
	r := rand.New(rand.NewPCG(1, 2))
	evs := make([]trace.Event, 0, n+2*workers)
	add := func(e trace.Event) {
		e.Seq = uint64(len(evs))
		evs = append(evs, e)
	}
	access := func(g trace.GID, addr uint64, write bool) {
		op, k := trace.OpRead, uint64(0)
		if write {
			op, k = trace.OpWrite, 1
		}
		site := trace.SiteID(1 + (addr/8%512)*4 + k*2 + uint64(r.IntN(2)))
		add(trace.Event{G: g, Op: op, Obj: addr, Site: site, Flags: trace.FlagValueUnknown})
	}
	guarded := func(l int) uint64 { return 0x100000 + 8*uint64(l+nlocks*r.IntN(perLock)) }
	for w := 1; w <= workers; w++ {
		add(trace.Event{G: 0, Op: trace.OpFork, Obj: uint64(w), Site: 1})
	}
	for len(evs) < n {
		g := trace.GID(1 + r.IntN(workers))
		switch k := r.IntN(100); {
		case k < 50:
			l := r.IntN(nlocks)
			lock := uint64(0x10 + l)
			var fl trace.Flags
			if r.IntN(4) == 0 {
				fl = trace.FlagReadLock
			}
			add(trace.Event{G: g, Op: trace.OpAcquire, Obj: lock, Flags: fl})
			for range 1 + r.IntN(4) {
				access(g, guarded(l), fl == 0 && r.IntN(10) < 3)
			}
			add(trace.Event{G: g, Op: trace.OpRelease, Obj: lock, Flags: fl})
		case k < 75:
			for range 1 + r.IntN(3) {
				addr := 0x1000000 + 8*uint64(int(g)*private+r.IntN(private))
				if r.IntN(8) == 0 {
					addr = guarded(r.IntN(nlocks))
				}
				access(g, addr, r.IntN(2) == 0)
			}
		case k < 85:
			add(trace.Event{G: g, Op: trace.OpSyncRelease, Obj: uint64(0x20 + r.IntN(chans))})
		case k < 95:
			add(trace.Event{G: g, Op: trace.OpSyncAcquire, Obj: uint64(0x20 + r.IntN(chans))})
		default:
			op := []trace.Op{trace.OpAtomicLoad, trace.OpAtomicStore, trace.OpAtomicRMW}[r.IntN(3)]
			add(trace.Event{G: g, Op: op, Obj: uint64(0x800000 + 8*r.IntN(words)), Flags: trace.FlagValueUnknown})
		}
	}
	for w := 1; w <= workers; w++ {
		add(trace.Event{G: trace.GID(w), Op: trace.OpEnd})
		add(trace.Event{G: 0, Op: trace.OpJoin, Obj: uint64(w)})
	}
	return evs
}

var (
	benchOnce   sync.Once
	benchEvents []trace.Event
)

func benchStream() []trace.Event {
	benchOnce.Do(func() { benchEvents = syntheticStream(1 << 20) })
	return benchEvents
}

// benchDetector feeds the in-memory stream to a fresh detector per
// iteration (so allocs/op is what one whole 1M-event run allocates) and
// reports events/s, ns/event and distinct-site-pair findings per run.
func benchDetector(b *testing.B, mk func(finding.Sink) detect.Detector) {
	evs := benchStream()
	var reports int64
	sink := finding.SinkFunc(func(*finding.Race) { reports++ })
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d := mk(sink)
		for i := range evs {
			d.Handle(&evs[i])
		}
		d.Finish()
	}
	total := float64(len(evs)) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/event")
	b.ReportMetric(float64(reports)/float64(b.N), "reports/op")
}

func BenchmarkEraser(b *testing.B) {
	benchDetector(b, func(s finding.Sink) detect.Detector { return New(s) })
}

func BenchmarkHybrid(b *testing.B) {
	benchDetector(b, func(s finding.Sink) detect.Detector { return NewHybrid(s) })
}

// Once every address, lockset, site and sync object of a stream has been
// seen, handling more of the same allocates nothing: the per-event path is
// allocation-free. (The replayed workers' events come after the joins, which
// is ill-formed but handled the same way.)
func TestHandleSteadyStateDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	evs := syntheticStream(20000)
	var body []trace.Event
	for _, e := range evs {
		if e.G != 0 && e.Op != trace.OpEnd {
			body = append(body, e)
		}
	}
	sink := finding.SinkFunc(func(*finding.Race) {})
	for _, d := range []detect.Detector{New(sink), NewHybrid(sink)} {
		for i := range evs {
			d.Handle(&evs[i])
		}
		d.Handle(&body[0]) // warm up the closure below
		allocs := testing.AllocsPerRun(3, func() {
			for i := range body {
				d.Handle(&body[i])
			}
		})
		if allocs != 0 {
			t.Errorf("%T: %.0f allocations per replay of %d events, want 0", d, allocs, len(body))
		}
	}
}
