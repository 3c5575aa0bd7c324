package hb_test

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/rkt"
)

// Events a reader can hand on whole (range events, atomic operations with
// trace.FlagGoAtomic) or as the events they stand for: FastTrack must
// report the same either way.

// lockedTrace is a random trace of three goroutines, M forking T1 and T2
// and joining them, that take one lock L in turn (one at a time, so
// locking stays well formed) between the events step appends for a
// goroutine (step returns false to append nothing), written as a .rkt
// file.
func lockedTrace(t *testing.T, r *rand.Rand, n, lockIn10 int, step func(b *trace.Builder, g string, held bool) bool) []byte {
	b := trace.NewBuilder()
	b.Begin("M")
	gs := []string{"M", "T1", "T2"}
	for _, g := range gs[1:] {
		b.Fork("M", g, "go")
		b.Begin(g)
	}
	held := map[string]bool{}
	for range n {
		g := gs[r.IntN(len(gs))]
		if r.IntN(10) < lockIn10 {
			if held[g] {
				b.Rel(g, "L")
			} else if !slices.Contains(slices.Collect(maps.Values(held)), true) {
				b.Acq(g, "L")
			} else {
				continue
			}
			held[g] = !held[g]
			continue
		}
		step(b, g, held[g])
	}
	for _, g := range gs {
		if held[g] {
			b.Rel(g, "L")
		}
	}
	for _, g := range gs[1:] {
		b.Join("M", g)
	}
	var buf bytes.Buffer
	w := rkt.NewWriter(&buf)
	if _, err := trace.Copy(w, b.Trace().Iter()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// hidden hides a reader's KeepRanges and KeepGoAtomics: its range events
// and atomic operations are expanded.
type hidden struct{ trace.Reader }

// sameWhole runs FastTrack over file with the reader's compact events
// expanded and handed on whole, and fails unless both give the same
// dynamic races in the same order, the same event count and the same
// counters, and the tracker saw fewer events whole. It reports whether
// the trace is racy.
func sameWhole(t *testing.T, seed uint64, file []byte, what string) bool {
	return sameWholeLumped(t, seed, file, what, false)
}

// sameWholeLumped is sameWhole; lumped allows fewer shadow cells and
// read-shared clocks whole (granules of byte ranges kept whole).
func sameWholeLumped(t *testing.T, seed uint64, file []byte, what string, lumped bool) bool {
	t.Helper()
	var got [2][]finding.Race
	var stats [2]map[string]int64
	var ns, tracked [2]int64
	for i := range 2 {
		var src trace.Reader = rkt.NewReader(bytes.NewReader(file), "w.rkt")
		if i == 0 {
			src = hidden{src}
		}
		d := ftFlavour.make(finding.SinkFunc(func(x *finding.Race) { got[i] = append(got[i], *x) }))
		n, err := detect.Run(src, d)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		ns[i], stats[i] = n, d.Stats()
		tracked[i] = stats[i]["events"]
		delete(stats[i], "events") // events passed to the tracker: a compact event is one
	}
	if tracked[1] >= tracked[0] {
		t.Fatalf("seed %d: the tracker saw %d events with %s whole, %d expanded: they were not handed on whole", seed, tracked[1], what, tracked[0])
	}
	if ns[0] != ns[1] {
		t.Fatalf("seed %d: %d events counted expanded, %d with %s whole", seed, ns[0], ns[1], what)
	}
	if !slices.EqualFunc(got[0], got[1], func(a, b finding.Race) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Fatalf("seed %d: races expanded\n%v\nwith %s whole\n%v", seed, got[0], what, got[1])
	}
	if lumped {
		// Granules kept whole hold one cell and one read-shared clock for
		// eight bytes: fewer, never more; and only they count granules.
		for _, k := range []string{"shadow_addrs", "read_shared_live"} {
			if stats[1][k] > stats[0][k] {
				t.Fatalf("seed %d: %s %d with %s whole, %d expanded", seed, k, stats[1][k], what, stats[0][k])
			}
		}
		for _, k := range []string{"shadow_addrs", "read_shared_live", "granules_whole", "range_bytes_apart"} {
			delete(stats[0], k)
			delete(stats[1], k)
		}
	}
	if !maps.Equal(stats[0], stats[1]) {
		t.Fatalf("seed %d: stats expanded %v, with %s whole %v", seed, stats[0], what, stats[1])
	}
	return len(got[0]) > 0
}

// rangeTrace is a random trace of three goroutines that read and write
// bytes and words of one 96-byte buffer, one at a time and in range
// events of strides 1 to 16, some under a lock, written as a .rkt file.
func rangeTrace(t *testing.T, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 3))
	const base = 0xc000001000
	return lockedTrace(t, r, 200, 2, func(b *trace.Builder, g string, held bool) bool {
		if k := r.IntN(8); k < 3 {
			op := trace.OpRead
			if r.IntN(2) == 0 {
				op = trace.OpWrite
			}
			b.Add(trace.Event{G: b.G(g), Op: op, Obj: base + r.Uint64N(96), Site: b.Site(fmt.Sprintf("w%d", k+2)), Flags: trace.FlagValueUnknown})
			return true
		}
		op := trace.OpReadRange
		if r.IntN(2) == 0 {
			op = trace.OpWriteRange
		}
		stride := 1 + r.Uint64N(16)
		span, _ := trace.MakeSpan(stride, 1+r.Uint64N(96/stride))
		b.Add(trace.Event{G: b.G(g), Op: op, Obj: base + r.Uint64N(8), Value: uint64(span), Site: b.Site(fmt.Sprintf("r%d", r.IntN(5)+5))})
		return true
	})
}

// wordRangeTrace is rangeTrace's kind of trace over aligned words of a
// 640-byte buffer that starts in the middle of a shadow page (128 bytes),
// its ranges of elements a multiple of 8 bytes wide (FastTrack's page-wise
// path, rangeWords, or sparse spans of the first word of each), often repeated by one goroutine in one epoch (the
// same-epoch rules inside a range) and crossing pages.
func wordRangeTrace(t *testing.T, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 11))
	const base, words = 0xc000001040, 80
	var last trace.Event
	return lockedTrace(t, r, 200, 2, func(b *trace.Builder, g string, held bool) bool {
		switch k := r.IntN(10); {
		case k < 2:
			op := trace.OpRead
			if r.IntN(2) == 0 {
				op = trace.OpWrite
			}
			b.Add(trace.Event{G: b.G(g), Op: op, Obj: base + 8*r.Uint64N(words), Site: b.Site(fmt.Sprintf("w%d", k)), Flags: trace.FlagValueUnknown})
			return true
		case k < 5 && last.Op != 0 && last.G == b.G(g):
			b.Add(last) // again, or over part of it
			if r.IntN(2) == 0 {
				last.Op = trace.OpReadRange + trace.OpWriteRange - last.Op
			}
			return true
		}
		op := trace.OpReadRange
		if r.IntN(2) == 0 {
			op = trace.OpWriteRange
		}
		stride := 8 * (1 + r.Uint64N(3))
		first := r.Uint64N(words)
		n := 1 + r.Uint64N(max(1, (words-first)*8/stride))
		span, _ := trace.MakeSpan(stride, n)
		if stride > 8 && r.IntN(2) == 0 {
			span, _ = trace.MakeSparseSpan(stride, n) // a word of each element: not rangeWords'
		}
		last = trace.Event{G: b.G(g), Op: op, Obj: base + 8*first, Value: uint64(span), Site: b.Site(fmt.Sprintf("r%d", r.IntN(3)+2))}
		b.Add(last)
		return true
	})
}

// FastTrack given range events whole (detect.RangeHandler) reports what
// it reports over the word accesses they stand for, the same dynamic
// races in the same order, and counts the same accesses: ranges of any
// stride at any offset, and ranges of aligned words (rangeWords).
func TestFastTrackRangesWholeMatchWords(t *testing.T) {
	for _, c := range []struct {
		name  string
		trace func(*testing.T, uint64) []byte
	}{{"any", rangeTrace}, {"words", wordRangeTrace}} {
		t.Run(c.name, func(t *testing.T) {
			racy := 0
			for seed := range uint64(300) {
				if sameWholeLumped(t, seed, c.trace(t, seed), "ranges", true) {
					racy++
				}
			}
			if racy < 100 {
				t.Fatalf("only %d of 300 traces racy: the comparison says little", racy)
			}
		})
	}
}

// goAtomicTrace is a random trace of three goroutines that read and write
// four words plainly (mostly under a lock) and operate on them and on two
// more atomically (as rt records an atomic operation: one event with
// trace.FlagGoAtomic), written as a .rkt file. Atomic stores and loads
// order the plain accesses around them, or do not, so that some traces
// race and others do not; a plain access races with an unordered atomic
// one.
func goAtomicTrace(t *testing.T, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 5))
	const base = 0xc000002000
	ops := []trace.Op{trace.OpAtomicLoad, trace.OpAtomicStore, trace.OpAtomicRMW}
	return lockedTrace(t, r, 10+r.IntN(50), 2, func(b *trace.Builder, g string, held bool) bool {
		if k := r.IntN(8); k < 2 {
			if !held && r.IntN(8) != 0 {
				return false // plain accesses mostly under the lock
			}
			op := trace.OpRead
			if r.IntN(3) == 0 {
				op = trace.OpWrite
			}
			b.Add(trace.Event{G: b.G(g), Op: op, Obj: base + 8*r.Uint64N(4), Site: b.Site(fmt.Sprintf("p%d", k)), Flags: trace.FlagValueUnknown})
			return true
		}
		e := trace.Event{G: b.G(g), Op: ops[r.IntN(len(ops))], Obj: base + 8*r.Uint64N(6), Site: b.Site(fmt.Sprintf("a%d", r.IntN(6))), Flags: trace.FlagGoAtomic}
		if e.Op == trace.OpAtomicLoad && r.IntN(3) == 0 {
			e.Flags |= trace.FlagCASFailed
		}
		if r.IntN(2) == 0 {
			e.Flags |= trace.FlagValueUnknown
		} else {
			e.Value = r.Uint64N(4)
		}
		b.Add(e)
		return true
	})
}

// FastTrack given atomic operations whole (detect.GoAtomicHandler)
// reports what it reports over the four events each stands for, the same
// dynamic races in the same order, with the same counts.
func TestFastTrackGoAtomicsWholeMatchEvents(t *testing.T) {
	racy := 0
	for seed := range uint64(300) {
		if sameWhole(t, seed, goAtomicTrace(t, seed), "atomic operations") {
			racy++
		}
	}
	if racy < 60 || racy > 290 {
		t.Fatalf("%d of 300 traces racy: the comparison says little", racy)
	}
	t.Logf("%d of 300 traces racy", racy)
}

// byteRangeTrace is a random trace of three goroutines over a 64-byte
// buffer, mostly in byte ranges (stride 1) that cover granules whole,
// read by several goroutines at once (read-shared clocks kept whole),
// with the accesses that split a granule kept whole: a byte, a word, an
// atomic operation on a word, a range of words, a range over part of a
// granule, an allocation over part of one.
func byteRangeTrace(t *testing.T, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 13))
	const base, size = 0xc000003000, 64
	return lockedTrace(t, r, 120, 3, func(b *trace.Builder, g string, held bool) bool {
		if !held && r.IntN(15) != 0 {
			return false // mostly under the lock
		}
		site := func(p string, n int) trace.SiteID { return b.Site(fmt.Sprintf("%s%d", p, r.IntN(n))) }
		op := func(read, write trace.Op) trace.Op {
			if r.IntN(3) == 0 {
				return write
			}
			return read
		}
		switch k := r.IntN(30); {
		case k < 1: // a byte or a word
			a := base + r.Uint64N(size)
			if r.IntN(2) == 0 {
				a &^= 7
			}
			b.Add(trace.Event{G: b.G(g), Op: op(trace.OpRead, trace.OpWrite), Obj: a, Site: site("w", 3), Flags: trace.FlagValueUnknown})
		case k < 2: // an atomic operation on a word
			ops := []trace.Op{trace.OpAtomicLoad, trace.OpAtomicStore, trace.OpAtomicRMW}
			b.Add(trace.Event{G: b.G(g), Op: ops[r.IntN(3)], Obj: base + 8*r.Uint64N(size/8), Site: site("a", 2), Flags: trace.FlagGoAtomic | trace.FlagValueUnknown})
		case k < 3: // memory allocated again, ends anywhere
			lo := base + r.Uint64N(size)
			b.Add(trace.Event{G: b.G(g), Op: trace.OpAlloc, Obj: lo, Value: 1 + r.Uint64N(base+size-lo)})
		case k < 4: // a range of words
			first := r.Uint64N(size / 8)
			span, _ := trace.MakeSpan(8, 1+r.Uint64N(size/8-first))
			b.Add(trace.Event{G: b.G(g), Op: op(trace.OpReadRange, trace.OpWriteRange), Obj: base + 8*first, Value: uint64(span), Site: site("q", 2)})
		default: // a byte range, mostly over whole granules
			lo := base + r.Uint64N(size)
			if r.IntN(4) != 0 {
				lo &^= 7
			}
			n := 1 + r.Uint64N(base+size-lo)
			if r.IntN(4) != 0 && n >= 8 {
				n &^= 7
			}
			span, _ := trace.MakeSpan(1, n)
			b.Add(trace.Event{G: b.G(g), Op: op(trace.OpReadRange, trace.OpWriteRange), Obj: lo, Value: uint64(span), Site: site("r", 4)})
		}
		return true
	})
}

// Byte ranges with their granules kept whole (FastTrack.rangeBytes):
// the races, in order, and the counters of the byte-wise analysis, with
// fewer shadow cells in most traces.
func TestFastTrackByteRangesWholeMatchBytes(t *testing.T) {
	racy, fewer := 0, 0
	for seed := range uint64(400) {
		file := byteRangeTrace(t, seed)
		if sameWholeLumped(t, seed, file, "byte ranges", true) {
			racy++
		}
		var cells [2]int64
		for i := range 2 {
			var src trace.Reader = rkt.NewReader(bytes.NewReader(file), "b.rkt")
			if i == 0 {
				src = hidden{src}
			}
			d := ftFlavour.make(nil)
			if _, err := detect.Run(src, d); err != nil {
				t.Fatal(err)
			}
			cells[i] = d.Stats()["shadow_addrs"]
		}
		if cells[1] < cells[0] {
			fewer++
		}
	}
	if racy < 100 || racy > 390 || fewer < 200 {
		t.Fatalf("%d of 400 traces racy, %d with fewer cells whole: the comparison says little", racy, fewer)
	}
	t.Logf("%d of 400 traces racy, %d with fewer cells whole", racy, fewer)
}
