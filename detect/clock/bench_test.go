package clock

import (
	"math/rand"
	"runtime"
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
				syncAll(&k, evs)
			}
			b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkSyncPool is a worker pool of 4,096 goroutines (ants' tests run
// 10,000): a dispatcher hands each task over the worker's own object, the
// worker takes the pool's lock and bumps a shared counter. Every clock
// gets as wide as the workers, and every worker's object keeps a copy of
// knowledge most of which all of them share. B/op is the memory the
// clocks took (vc.Shared keeps what copies share once).
func BenchmarkSyncPool(b *testing.B) {
	const workers, tasks = 4096, 40000
	const pool, counter = 1 << 40, 1<<40 + 8
	r := rand.New(rand.NewSource(1))
	var evs []trace.Event
	for w := 1; w <= workers; w++ {
		evs = append(evs, trace.Event{G: 0, Op: trace.OpFork, Obj: uint64(w)})
	}
	for i := 0; i < tasks; i++ {
		w := trace.GID(1 + r.Intn(workers))
		ch := uint64(w) * 16
		evs = append(evs,
			trace.Event{G: 0, Op: trace.OpAcquire, Obj: pool},
			trace.Event{G: 0, Op: trace.OpRelease, Obj: pool},
			trace.Event{G: 0, Op: trace.OpSyncRelease, Obj: ch},
			trace.Event{G: w, Op: trace.OpSyncAcquire, Obj: ch},
			trace.Event{G: w, Op: trace.OpAcquire, Obj: pool},
			trace.Event{G: w, Op: trace.OpRelease, Obj: pool},
			trace.Event{G: w, Op: trace.OpAtomicRMW, Obj: counter})
	}
	b.ReportAllocs()
	var kept uint64
	for b.Loop() {
		k := New(AllEdges)
		k.GoAtomics()
		syncAll(&k, evs)
		b.StopTimer()
		kept = max(kept, liveHeap())
		runtime.KeepAlive(k)
		b.StartTimer()
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(kept)/(1<<20), "live-MB")
}

// syncAll feeds evs, none of them a data access, to k.
func syncAll(k *Tracker, evs []trace.Event) {
	for i := range evs {
		e := &evs[i]
		t := k.Running(e)
		if t == nil {
			t = k.Start(e.G)
		}
		k.Sync(t, e)
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkChanBuffered is a buffered channel of a large capacity that
// 8 senders fill and one receiver drains, message by message with their
// numbers (the shape of prometheus/client_golang's concurrency tests,
// 150,000 slots): every receive's clock waits for the send C messages
// later, which never comes, and every send's for its receive.
func BenchmarkChanBuffered(b *testing.B) {
	const senders, msgs, capacity = 8, 100000, 1 << 20
	const ch = 1 << 40
	r := rand.New(rand.NewSource(1))
	var evs []trace.Event
	msg := func(g trace.GID, op trace.Op, obj uint64, m trace.ChanMsg) {
		evs = append(evs, trace.Event{G: g, Op: op, Obj: obj, Value: uint64(m), Flags: trace.FlagMessage})
	}
	for g := 1; g <= senders+1; g++ {
		evs = append(evs, trace.Event{G: 0, Op: trace.OpFork, Obj: uint64(g)})
	}
	recv := trace.GID(senders + 1)
	sent, got := uint64(0), uint64(0)
	for sent < msgs || got < sent {
		if sent < msgs && (got == sent || r.Intn(2) == 0) {
			sent++
			g := trace.GID(1 + r.Intn(senders))
			msg(g, trace.OpSyncRelease, ch, trace.MsgSendOf(capacity))
			msg(g, trace.OpSyncAcquire, ch+1, trace.MsgRange(trace.MsgSent, sent, sent))
			continue
		}
		got++
		msg(recv, trace.OpSyncRelease, ch+1, trace.MsgOf(trace.MsgRecv))
		msg(recv, trace.OpSyncAcquire, ch, trace.MsgRange(trace.MsgRecvd, got, got))
	}
	b.ReportAllocs()
	for b.Loop() {
		k := New(AllEdges)
		syncAll(&k, evs)
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkChanPipeline is a channel of capacity 64 between one sender
// and one receiver that keeps up (syncheavy's pipeline, a worker pool's
// queue): each message's clock is made at its send and dropped soon after
// its receive, so that a clock's storage can be used again by a later
// message (vc.Shared.Release) instead of being garbage.
func BenchmarkChanPipeline(b *testing.B) {
	const msgs, capacity = 200000, 64
	const ch = 1 << 40
	var evs []trace.Event
	msg := func(g trace.GID, op trace.Op, obj uint64, m trace.ChanMsg) {
		evs = append(evs, trace.Event{G: g, Op: op, Obj: obj, Value: uint64(m), Flags: trace.FlagMessage})
	}
	evs = append(evs, trace.Event{G: 0, Op: trace.OpFork, Obj: 1}, trace.Event{G: 0, Op: trace.OpFork, Obj: 2})
	sent, got := uint64(0), uint64(0)
	for got < msgs {
		for k := 0; k < 8 && sent < msgs && sent-got < capacity; k++ {
			sent++
			msg(1, trace.OpSyncRelease, ch, trace.MsgSendOf(capacity))
			msg(1, trace.OpSyncAcquire, ch+1, trace.MsgRange(trace.MsgSent, sent, sent))
		}
		for k := 0; k < 5 && got < sent; k++ {
			got++
			msg(2, trace.OpSyncRelease, ch+1, trace.MsgOf(trace.MsgRecv))
			msg(2, trace.OpSyncAcquire, ch, trace.MsgRange(trace.MsgRecvd, got, got))
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		k := New(AllEdges)
		syncAll(&k, evs)
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
