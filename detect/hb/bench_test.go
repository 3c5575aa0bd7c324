package hb_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// syntheticStream is an in-memory stream of about n events with the mix of
// a typical instrumented server: main writes a configuration, forks eight
// workers and joins them at the end; the workers, scheduled in bursts of
// 20..200 events, mostly touch their own heap words (55% of actions), run
// short critical sections over 16 locks guarding 256 words (25%), read the
// configuration concurrently (10%, read-shared), send and receive on
// channels (4%), update atomic counters (5%), and very rarely touch four
// words without synchronization (0.1%: a few races). As in real code, each
// word is accessed from a few sites (3 or 4), and sites are shared by many
// words.
func syntheticStream(n int) []trace.Event {
	r := rand.New(rand.NewPCG(1, 2))
	const (
		workers   = 8
		config    = 0x10_0000 // 64 words
		guarded   = 0x20_0000 // 16 locks × 16 words
		racy      = 0x30_0000 // 4 words
		lockBase  = 0x40_0000
		chanBase  = 0x50_0000
		atomBase  = 0x60_0000
		localBase = 0x100_0000 // worker g: localBase + g<<20, 4096 words
	)
	evs := make([]trace.Event, 0, n+1024)
	add := func(g trace.GID, op trace.Op, obj uint64, site trace.SiteID, flags trace.Flags) {
		evs = append(evs, trace.Event{Seq: uint64(len(evs)), G: g, Op: op, Obj: obj, Site: site, Flags: flags})
	}
	access := func(g trace.GID, obj uint64, write bool, site trace.SiteID) {
		op := trace.OpRead
		if write {
			op = trace.OpWrite
		}
		add(g, op, obj, site, trace.FlagValueUnknown)
	}
	add(0, trace.OpBegin, 0, 0, 0)
	for i := range uint64(64) {
		access(0, config+8*i, true, 1)
	}
	for g := trace.GID(1); g <= workers; g++ {
		add(0, trace.OpFork, uint64(g), 2, 0)
	}
	last := make([]uint64, workers+1) // each worker's current local word
	for len(evs) < n {
		g := trace.GID(1 + r.IntN(workers))
		for burst := 20 + r.IntN(180); burst > 0 && len(evs) < n; {
			before := len(evs)
			switch k := r.IntN(1000); {
			case k < 550: // own heap: a random walk with locality
				if r.IntN(8) == 0 {
					last[g] = uint64(r.IntN(4096))
				} else {
					last[g] = (last[g] + uint64(r.IntN(3))) % 4096
				}
				access(g, localBase+uint64(g)<<20+8*last[g], r.IntN(10) < 3, trace.SiteID(100+(last[g]+uint64(r.IntN(3)))%100))
			case k < 800: // critical section
				l := uint64(r.IntN(16))
				add(g, trace.OpAcquire, lockBase+8*l, 3, 0)
				for range 1 + r.IntN(6) {
					w := 16*l + uint64(r.IntN(16))
					access(g, guarded+8*w, r.IntN(2) == 0, trace.SiteID(200+(w+uint64(r.IntN(4)))%50))
				}
				add(g, trace.OpRelease, lockBase+8*l, 4, 0)
			case k < 900: // configuration, read by everyone
				w := uint64(r.IntN(64))
				access(g, config+8*w, false, trace.SiteID(300+(w+uint64(r.IntN(3)))%20))
			case k < 920:
				add(g, trace.OpSyncRelease, chanBase+8*uint64(r.IntN(4)), 5, 0)
			case k < 940:
				add(g, trace.OpSyncAcquire, chanBase+8*uint64(r.IntN(4)), 6, 0)
			case k < 990:
				op := trace.OpAtomicRMW
				if r.IntN(2) == 0 {
					op = trace.OpAtomicLoad
				}
				add(g, op, atomBase+8*uint64(r.IntN(4)), 7, trace.FlagValueUnknown)
			case k < 999:
				access(g, localBase+uint64(g)<<20+8*last[g], false, 8)
			default: // the bug
				access(g, racy+8*uint64(r.IntN(4)), r.IntN(2) == 0, trace.SiteID(400+r.IntN(4)))
			}
			burst -= len(evs) - before
		}
	}
	for g := trace.GID(1); g <= workers; g++ {
		add(g, trace.OpEnd, 0, 0, 0)
		add(0, trace.OpJoin, uint64(g), 9, 0)
	}
	return evs
}

var benchStream = sync.OnceValue(func() []trace.Event { return syntheticStream(1 << 20) })

// scatteredStream is benchStream with every data address moved by a
// bijection that scatters neighbouring words across the address space:
// the worst case for the paged shadow memory, which then holds one word
// per page.
var scatteredStream = sync.OnceValue(func() []trace.Event {
	evs := slices.Clone(benchStream())
	for i := range evs {
		if e := &evs[i]; e.Op.IsAccess() {
			e.Obj = (e.Obj >> 3 * 0x9E3779B97F4A7C15 & (1<<61 - 1)) << 3
		}
	}
	return evs
})

// benchDetector feeds the whole stream to a fresh detector per iteration,
// calling Handle directly (no reader in the loop): allocs/op are per
// stream, not per event. Besides events/s (wall clock) it reports
// events/cpu-s, the rate in CPU time of the benchmarking thread (Linux),
// which on a loaded machine is the detector's own speed on one core.
func benchDetector(b *testing.B, f flavour, evs []trace.Event) {
	var races int
	sink := finding.SinkFunc(func(*finding.Race) { races++ })
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	cpu0, ok := threadCPU()
	for b.Loop() {
		d := f.make(sink)
		for i := range evs {
			if evs[i].Op.IsRange() {
				d.(detect.RangeHandler).HandleRange(&evs[i])
			} else {
				d.Handle(&evs[i])
			}
		}
		d.Finish()
	}
	cpu1, _ := threadCPU()
	n := float64(len(evs)) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "events/s")
	if ok {
		b.ReportMetric(n/(cpu1-cpu0).Seconds(), "events/cpu-s")
	}
	b.ReportMetric(float64(races)/float64(b.N), "races/op")
}

func BenchmarkFastTrack(b *testing.B) { benchDetector(b, ftFlavour, benchStream()) }

// BenchmarkFastTrackAfterWhole is BenchmarkFastTrack once a granule was
// kept whole (a byte range first, as nearly every racekit test trace
// has one): each access then looks for a whole granule to split.
func BenchmarkFastTrackAfterWhole(b *testing.B) {
	span, _ := trace.MakeSpan(1, 64)
	evs := benchStream()
	first := trace.Event{Seq: evs[0].Seq, G: evs[0].G, Op: trace.OpWriteRange, Obj: 0x70_0000, Value: uint64(span)}
	benchDetector(b, ftFlavour, slices.Insert(slices.Clone(evs), 1, first)) // after main's begin
}
func BenchmarkHB(b *testing.B)                 { benchDetector(b, hbFlavour, benchStream()) }
func BenchmarkFastTrackScattered(b *testing.B) { benchDetector(b, ftFlavour, scatteredStream()) }
func BenchmarkHBScattered(b *testing.B)        { benchDetector(b, hbFlavour, scatteredStream()) }

// TestNoAllocationPerEventInSteadyState replays the workers' part of a
// synthetic stream to detectors that have already seen it: every address,
// lock, sync object and read-shared clock exists, so handling events must
// not allocate.
func TestNoAllocationPerEventInSteadyState(t *testing.T) {
	evs := syntheticStream(1 << 16)
	first, last := 0, len(evs)
	for first < last && evs[first].G == 0 {
		first++ // main's configuration writes and forks
	}
	for last > first && (evs[last-1].Op == trace.OpJoin || evs[last-1].Op == trace.OpEnd) {
		last--
	}
	work := evs[first:last]
	for _, f := range flavours {
		d := f.make(nil)
		for i := range evs {
			d.Handle(&evs[i])
		}
		for range 2 {
			for i := range work {
				d.Handle(&work[i])
			}
		}
		allocs := testing.AllocsPerRun(3, func() {
			for i := range work {
				d.Handle(&work[i])
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per replay of %d events, want 0", f.name, allocs, len(work))
		}
	}
}

// byteRangeStream is a stream of byte ranges (stride 1) as the
// interceptors record a std call's buffer: four workers each fill a fresh
// 64 KiB buffer (allocated, then written whole), hand it on under a lock,
// and the next worker reads it twice (a hash's Write, a bytes.Equal) and
// copies 4 KiB of it at an odd offset into a buffer of its own.
func byteRangeStream() []trace.Event {
	const (
		workers = 4
		bufs    = 0x100_0000 // worker g's buffers at bufs + g<<24, 64 KiB each
		size    = 64 << 10
		lock    = 0x40_0000
		rounds  = 64
	)
	var evs []trace.Event
	add := func(g trace.GID, op trace.Op, obj, value uint64, site trace.SiteID) {
		evs = append(evs, trace.Event{Seq: uint64(len(evs)), G: g, Op: op, Obj: obj, Value: value, Site: site})
	}
	span := func(n uint64) uint64 { s, _ := trace.MakeSpan(1, n); return uint64(s) }
	add(0, trace.OpBegin, 0, 0, 0)
	for g := trace.GID(1); g <= workers; g++ {
		add(0, trace.OpFork, uint64(g), 0, 1)
	}
	for i := range uint64(rounds) {
		g := trace.GID(1 + i%workers)
		buf := bufs + uint64(g)<<24 + (i/workers%4)*size
		add(g, trace.OpAcquire, lock, 0, 2)
		if i > 0 { // the previous worker's buffer
			prev := bufs + uint64(1+(i-1)%workers)<<24 + ((i-1)/workers%4)*size
			add(g, trace.OpReadRange, prev, span(size), 3)
			add(g, trace.OpReadRange, prev, span(size), 4)
			add(g, trace.OpReadRange, prev+3, span(4096), 5)
			add(g, trace.OpWriteRange, buf+3*size+5, span(4096), 6)
		}
		add(g, trace.OpAlloc, buf, size, 7)
		add(g, trace.OpWriteRange, buf, span(size), 8)
		add(g, trace.OpRelease, lock, 0, 9)
	}
	for g := trace.GID(1); g <= workers; g++ {
		add(g, trace.OpEnd, 0, 0, 0)
		add(0, trace.OpJoin, uint64(g), 0, 10)
	}
	return evs
}

// BenchmarkFastTrackByteRanges: the range events handed on whole
// (granules kept whole, rangeBytes) against the same stream expanded into
// an access per byte, as the reader hands them to a detector that does
// not take ranges; bytes/s counts the bytes the ranges stand for.
func BenchmarkFastTrackByteRanges(b *testing.B) {
	evs := byteRangeStream()
	benchRangesWhole(b, evs, "bytes", "bytes/s", rangeBytesIn(evs), true)
}

// rangeBytesIn is the bytes evs's range events of stride 1 stand for.
func rangeBytesIn(evs []trace.Event) uint64 {
	var bytes uint64
	for i := range evs {
		if evs[i].Op.IsRange() {
			bytes += trace.Span(evs[i].Value).Count()
		}
	}
	return bytes
}

// BenchmarkFastTrackShortByteRanges: short byte ranges at any offset, as
// a protobuf encoder and decoder make them (centrifugal/protocol's tests
// against the official decoder): a worker writes a buffer field by field
// (1 to 13 bytes each), hands it on under a lock, and the next one reads
// it field by field and eight bytes at a time from an odd offset (a UTF-8
// check's word loads): granules apart (bytesApart), most of them.
func BenchmarkFastTrackShortByteRanges(b *testing.B) {
	evs := shortByteRangeStream()
	benchRangesWhole(b, evs, "bytes", "bytes/s", rangeBytesIn(evs), true)
}

func shortByteRangeStream() []trace.Event {
	const (
		workers = 2
		bufs    = 0x100_0000
		size    = 4 << 10
		lock    = 0x40_0000
		rounds  = 256
	)
	var evs []trace.Event
	add := func(g trace.GID, op trace.Op, obj, value uint64, site trace.SiteID) {
		evs = append(evs, trace.Event{Seq: uint64(len(evs)), G: g, Op: op, Obj: obj, Value: value, Site: site})
	}
	span := func(n uint64) uint64 { s, _ := trace.MakeSpan(1, n); return uint64(s) }
	fields := func(f func(off, n uint64)) {
		for off, k := uint64(0), uint64(0); off < size; k++ {
			n := min(1+k*7%13, size-off)
			f(off, n)
			off += n
		}
	}
	add(0, trace.OpBegin, 0, 0, 0)
	for g := trace.GID(1); g <= workers; g++ {
		add(0, trace.OpFork, uint64(g), 0, 1)
	}
	for i := range uint64(rounds) {
		g := trace.GID(1 + i%workers)
		buf := bufs + (i%8)*size
		add(g, trace.OpAcquire, lock, 0, 2)
		if i > 0 { // the previous round's buffer
			prev := bufs + ((i-1)%8)*size
			fields(func(off, n uint64) { add(g, trace.OpReadRange, prev+off, span(n), 3) })
			for off := uint64(3); off+8 <= size; off += 8 {
				add(g, trace.OpReadRange, prev+off, span(8), 4)
			}
		}
		add(g, trace.OpAlloc, buf, size, 5)
		fields(func(off, n uint64) { add(g, trace.OpWriteRange, buf+off, span(n), 6) })
		add(g, trace.OpRelease, lock, 0, 7)
	}
	for g := trace.GID(1); g <= workers; g++ {
		add(g, trace.OpEnd, 0, 0, 0)
		add(0, trace.OpJoin, uint64(g), 0, 8)
	}
	return evs
}

// benchRangesWhole runs FastTrack over evs with their range events handed
// on whole ("whole") and expanded into the accesses they stand for
// (expanded), reporting those accesses per second (unit) and, if cells,
// the shadow cells the run ends with.
func benchRangesWhole(b *testing.B, evs []trace.Event, expanded, unit string, accesses uint64, cells bool) {
	for _, whole := range []bool{true, false} {
		name := expanded
		if whole {
			name = "whole"
		}
		b.Run(name, func(b *testing.B) {
			var races int
			sink := finding.SinkFunc(func(*finding.Race) { races++ })
			b.ReportAllocs()
			var n int64
			for b.Loop() {
				d := ftFlavour.make(sink)
				rh := d.(detect.RangeHandler)
				for i := range evs {
					switch {
					case !evs[i].Op.IsRange():
						d.Handle(&evs[i])
					case whole:
						rh.HandleRange(&evs[i])
					default:
						trace.WriteWords(&evs[i], func(w *trace.Event) error { d.Handle(w); return nil })
					}
				}
				d.Finish()
				n = d.Stats()["shadow_addrs"]
			}
			b.ReportMetric(float64(accesses)*float64(b.N)/b.Elapsed().Seconds(), unit)
			if cells {
				b.ReportMetric(float64(n), "cells")
			}
			b.ReportMetric(float64(races)/float64(b.N), "races/op")
		})
	}
}

// sparseRangeStream is a red-black stencil as rt records it since fill
// loops take steps and rows (instrument/fillloop.go): two workers each
// sweep a band of a 256x256 grid of 8-byte cells, one colour at a time;
// per row, sparse ranges (every other cell) of its two neighbouring rows'
// reads and its own reads at offsets -1, 0, +1 and writes; a lock's
// release and acquisition between half-sweeps orders the bands.
func sparseRangeStream() []trace.Event {
	const (
		n      = 256
		grid   = 0x100_0000 // row i at grid + i*rowB
		rowB   = n * 8
		lock   = 0x40_0000
		sweeps = 8
	)
	var evs []trace.Event
	add := func(g trace.GID, op trace.Op, obj, value uint64, site trace.SiteID) {
		evs = append(evs, trace.Event{Seq: uint64(len(evs)), G: g, Op: op, Obj: obj, Value: value, Site: site})
	}
	every2 := func(count uint64) uint64 { s, _ := trace.MakeSparseSpan(16, count); return uint64(s) }
	add(0, trace.OpBegin, 0, 0, 0)
	for g := trace.GID(1); g <= 2; g++ {
		add(0, trace.OpFork, uint64(g), 0, 1)
	}
	for s := range uint64(2 * sweeps) {
		for g := trace.GID(1); g <= 2; g++ {
			add(g, trace.OpAcquire, lock, 0, 2)
			lo := 1 + uint64(g-1)*(n-2)/2
			for i := lo; i < lo+(n-2)/2; i++ {
				first := 1 + (i+s)%2
				count := (n - 1 - first) / 2
				row := grid + i*rowB
				add(g, trace.OpReadRange, row-rowB+8*first, every2(count), 3)
				add(g, trace.OpReadRange, row+rowB+8*first, every2(count), 4)
				add(g, trace.OpReadRange, row+8*(first-1), every2(count), 5)
				add(g, trace.OpReadRange, row+8*(first+1), every2(count), 6)
				add(g, trace.OpReadRange, row+8*first, every2(count), 7)
				add(g, trace.OpWriteRange, row+8*first, every2(count), 8)
			}
			add(g, trace.OpRelease, lock, 0, 9)
		}
	}
	for g := trace.GID(1); g <= 2; g++ {
		add(g, trace.OpEnd, 0, 0, 0)
		add(0, trace.OpJoin, uint64(g), 0, 10)
	}
	return evs
}

// BenchmarkFastTrackSparseRanges: sparse range events handed on whole
// (rangeWords a page at a time, shadow.Mem.Strided) against the same
// stream expanded into word accesses; words/s counts the words the ranges
// stand for.
func BenchmarkFastTrackSparseRanges(b *testing.B) {
	evs := sparseRangeStream()
	var words uint64
	for i := range evs {
		if evs[i].Op.IsRange() {
			words += trace.Span(evs[i].Value).Count()
		}
	}
	benchRangesWhole(b, evs, "words", "words/s", words, false)
}

// readSharedStream: 64 goroutines read the same 256 words, each taking a
// lock of its own between rounds so that every round is a new epoch: the
// words' reads are read-shared, 64 entries each (a concurrent map's
// buckets read by a test's workers: puzpuzpuz/xsync).
var readSharedStream = sync.OnceValue(func() []trace.Event {
	b := trace.NewBuilder()
	b.Begin("main")
	const goroutines, words, rounds = 64, 256, 64
	names := make([]string, goroutines)
	for i := range names {
		names[i] = fmt.Sprintf("w%d", i)
		b.Fork("main", names[i], "main.go:3")
	}
	for r := 0; r < rounds; r++ {
		for _, g := range names {
			b.Acq(g, "l"+g)
			for w := 0; w < words; w++ {
				b.Add(trace.Event{G: b.G(g), Op: trace.OpRead, Obj: 0x10_0000 + 8*uint64(w), Site: 1, Flags: trace.FlagValueUnknown})
			}
			b.Rel(g, "l"+g)
		}
	}
	return b.Trace().Events
})

func BenchmarkFastTrackReadShared(b *testing.B) { benchDetector(b, ftFlavour, readSharedStream()) }
