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

// goAtomicTrace is a random trace of three goroutines that read and write
// four words plainly and operate on them and on two more atomically (as rt
// records an atomic operation: one event with trace.FlagGoAtomic), some
// under a lock, written as a .rkt file. Atomic stores and loads order the
// plain accesses around them, or do not, so that some traces race and
// others do not; a plain access races with an unordered atomic one.
func goAtomicTrace(t *testing.T, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 5))
	b := trace.NewBuilder()
	b.Begin("M")
	gs := []string{"M", "T1", "T2"}
	for _, g := range gs[1:] {
		b.Fork("M", g, "go")
		b.Begin(g)
	}
	const base = 0xc000002000
	held := map[string]bool{}
	ops := []trace.Op{trace.OpAtomicLoad, trace.OpAtomicStore, trace.OpAtomicRMW}
	for range 10 + r.IntN(50) {
		g := gs[r.IntN(len(gs))]
		switch k := r.IntN(10); {
		case k < 2:
			if held[g] {
				b.Rel(g, "L")
			} else if !slices.Contains(slices.Collect(maps.Values(held)), true) {
				b.Acq(g, "L")
			} else {
				continue
			}
			held[g] = !held[g]
		case k < 4:
			if !held[g] && r.IntN(8) != 0 {
				continue // plain accesses mostly under the lock
			}
			op := trace.OpRead
			if r.IntN(3) == 0 {
				op = trace.OpWrite
			}
			b.Add(trace.Event{G: b.G(g), Op: op, Obj: base + 8*r.Uint64N(4), Site: b.Site(fmt.Sprintf("p%d", k)), Flags: trace.FlagValueUnknown})
		default:
			e := trace.Event{G: b.G(g), Op: ops[r.IntN(len(ops))], Obj: base + 8*r.Uint64N(6), Site: b.Site(fmt.Sprintf("a%d", k)), Flags: trace.FlagGoAtomic}
			if e.Op == trace.OpAtomicLoad && r.IntN(3) == 0 {
				e.Flags |= trace.FlagCASFailed
			}
			if r.IntN(2) == 0 {
				e.Flags |= trace.FlagValueUnknown
			} else {
				e.Value = r.Uint64N(4)
			}
			b.Add(e)
		}
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

// FastTrack given atomic operations whole (detect.GoAtomicHandler)
// reports what it reports over the four events each stands for, the same
// dynamic races in the same order, with the same counts.
func TestFastTrackGoAtomicsWholeMatchEvents(t *testing.T) {
	racy := 0
	for seed := range uint64(300) {
		file := goAtomicTrace(t, seed)
		var got [2][]finding.Race
		var stats [2]map[string]int64
		var ns, tracked [2]int64
		for i := range 2 {
			var src trace.Reader = rkt.NewReader(bytes.NewReader(file), "a.rkt")
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
			delete(stats[i], "events") // events passed to the tracker: an atomic operation is one
		}
		if tracked[1] >= tracked[0] {
			t.Fatalf("seed %d: the tracker saw %d events with atomics whole, %d expanded: atomics were not handed on whole", seed, tracked[1], tracked[0])
		}
		if len(got[0]) > 0 {
			racy++
		}
		if ns[0] != ns[1] {
			t.Fatalf("seed %d: %d events counted expanded, %d with atomics whole", seed, ns[0], ns[1])
		}
		if !slices.EqualFunc(got[0], got[1], func(a, b finding.Race) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
			t.Fatalf("seed %d: races expanded\n%v\nwith atomics whole\n%v", seed, got[0], got[1])
		}
		if !maps.Equal(stats[0], stats[1]) {
			t.Fatalf("seed %d: stats expanded %v, with atomics whole %v", seed, stats[0], stats[1])
		}
	}
	if racy < 60 || racy > 290 {
		t.Fatalf("%d of 300 traces racy: the comparison says little", racy)
	}
	t.Logf("%d of 300 traces racy", racy)
}
