package alloc

import (
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// expanded is a Finder without HandleRange: the reader then hands it each
// word of a range event, as the second pass did before it kept ranges
// whole (the baseline).
type expanded struct{ f *Finder }

func (x expanded) Handle(e *trace.Event) { x.f.Handle(e) }
func (x expanded) Finish()               {}

// BenchmarkLocate: the heap block of a race at the end of a compressor's
// trace (a few allocations, then byte ranges read at every offset of a
// window: brotli's hash loops), answered by a second pass that expands
// ranges (the baseline), by one that keeps them whole, and from the
// allocations the first pass kept (Log).
func BenchmarkLocate(b *testing.B) {
	tb := trace.NewBuilder()
	tb.Begin("M")
	g := tb.G("M")
	const window = 1 << 16
	for i := 0; i < 8; i++ {
		tb.Add(trace.Event{G: g, Op: trace.OpAlloc, Obj: 0x100000 + uint64(i)*window, Value: window, Site: tb.Site("new.go:1")})
	}
	sp, _ := trace.MakeSpan(1, 8)
	for i := 0; i < 1<<19; i++ {
		tb.Add(trace.Event{G: g, Op: trace.OpReadRange, Obj: 0x100000 + uint64(i)%(8*window-8), Value: uint64(sp), Site: tb.Site("hash.go:2")})
	}
	path := writeTrace(b, tb)
	n := uint64(len(tb.Trace().Events))
	qs := []Query{{Addr: 0x100000 + 3*window + 5, Before: n - 1}}
	log := &Log{}
	for _, e := range tb.Trace().Events {
		log.Handle(&e)
	}
	want, _, err := Blocks(path, qs)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		run  func() ([]Block, error)
	}{
		{"expanded", func() ([]Block, error) {
			f, err := tracefile.Open(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			x := expanded{New(qs)}
			_, err = detect.Run(f, x)
			return x.f.found, err
		}},
		{"whole", func() ([]Block, error) { got, _, err := Blocks(path, qs); return got, err }},
		{"log", func() ([]Block, error) { got, _, err := Locate(path, log, qs); return got, err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				got, err := c.run()
				if err != nil || got[0] != want[0] {
					b.Fatalf("%+v %v, want %+v", got, err, want)
				}
			}
		})
	}
}
