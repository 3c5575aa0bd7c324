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

// rangeTrace is a random trace of three goroutines that read and write
// bytes and words of one 96-byte buffer, one at a time and in range
// events of strides 1 to 16, some under a lock, written as a .rkt file.
func rangeTrace(t *testing.T, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 3))
	b := trace.NewBuilder()
	b.Begin("M")
	gs := []string{"M", "T1", "T2"}
	for _, g := range gs[1:] {
		b.Fork("M", g, "go")
		b.Begin(g)
	}
	const base = 0xc000001000
	held := map[string]bool{}
	for range 200 {
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
		case k < 5:
			op := trace.OpRead
			if r.IntN(2) == 0 {
				op = trace.OpWrite
			}
			b.Add(trace.Event{G: b.G(g), Op: op, Obj: base + r.Uint64N(96), Site: b.Site(fmt.Sprintf("w%d", k)), Flags: trace.FlagValueUnknown})
		default:
			op := trace.OpReadRange
			if r.IntN(2) == 0 {
				op = trace.OpWriteRange
			}
			stride := 1 + r.Uint64N(16)
			span, _ := trace.MakeSpan(stride, 1+r.Uint64N(96/stride))
			b.Add(trace.Event{G: b.G(g), Op: op, Obj: base + r.Uint64N(8), Value: uint64(span), Site: b.Site(fmt.Sprintf("r%d", k))})
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

// hidden hides a reader's KeepRanges: its range events are expanded.
type hidden struct{ trace.Reader }

// FastTrack given range events whole (detect.RangeHandler) reports what
// it reports over the word accesses they stand for, the same dynamic
// races in the same order, and counts the same accesses.
func TestFastTrackRangesWholeMatchWords(t *testing.T) {
	racy := 0
	for seed := range uint64(300) {
		file := rangeTrace(t, seed)
		var got [2][]finding.Race
		var stats [2]map[string]int64
		var ns, tracked [2]int64
		for i := range 2 {
			var src trace.Reader = rkt.NewReader(bytes.NewReader(file), "r.rkt")
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
			delete(stats[i], "events") // events passed to the tracker: a range is one
		}
		if tracked[1] >= tracked[0] {
			t.Fatalf("seed %d: the tracker saw %d events with ranges whole, %d over words: ranges were not handed on whole", seed, tracked[1], tracked[0])
		}
		if len(got[0]) > 0 {
			racy++
		}
		if ns[0] != ns[1] {
			t.Fatalf("seed %d: %d events counted over words, %d with ranges whole", seed, ns[0], ns[1])
		}
		if !slices.EqualFunc(got[0], got[1], func(a, b finding.Race) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
			t.Fatalf("seed %d: races over words\n%v\nwith ranges whole\n%v", seed, got[0], got[1])
		}
		if !maps.Equal(stats[0], stats[1]) {
			t.Fatalf("seed %d: stats over words %v, with ranges whole %v", seed, stats[0], stats[1])
		}
	}
	if racy < 100 {
		t.Fatalf("only %d of 300 traces racy: the comparison says little", racy)
	}
}
