package detect_test

import (
	"io"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/trace"
)

// rangeSource hands out n range events of 1,000 bytes each, whole once
// KeepRanges was called, else as their words.
type rangeSource struct {
	n, sent int
	keep    bool
	x       trace.RangeExpander
	meta    *trace.Meta
}

func (r *rangeSource) Meta() *trace.Meta { return r.meta }
func (r *rangeSource) KeepRanges() bool  { r.keep = true; return true }
func (r *rangeSource) Next(e *trace.Event) error {
	if r.x.Pending() {
		r.x.Next(e)
		return nil
	}
	if r.sent == r.n {
		return io.EOF
	}
	r.sent++
	span, _ := trace.MakeSpan(1, 1000)
	*e = trace.Event{Seq: uint64(r.sent), Op: trace.OpWriteRange, Obj: 0x1000, Value: uint64(span)}
	if !r.keep {
		r.x.Start(e)
	}
	return nil
}

// counter counts the word accesses it sees, by Handle or HandleRange.
type counter struct {
	words, wholes int64
}

func (c *counter) Handle(e *trace.Event) { c.words++ }
func (c *counter) Finish()               {}

type rangeCounter struct{ counter }

func (c *rangeCounter) HandleRange(e *trace.Event) {
	c.wholes++
	c.words += int64(trace.Span(e.Value).Words())
}

// RunChecked hands range events on whole only when every detector takes
// them so, counts words either way, and still checks its progress about
// every ProgressEvery words when the count jumps by a range at a time.
func TestRunCheckedRanges(t *testing.T) {
	const ranges = 3000 // 3M words: 11 checks of 1<<18
	for _, mixed := range []bool{false, true} {
		src := &rangeSource{n: ranges, meta: trace.NewMeta()}
		whole := &rangeCounter{}
		ds := []detect.Detector{whole}
		var plain *counter
		if mixed {
			plain = &counter{}
			ds = append(ds, plain)
		}
		checks := 0
		n, err := detect.RunChecked(src, func(int64) error { checks++; return nil }, ds...)
		if err != nil {
			t.Fatal(err)
		}
		if n != ranges*1000 || whole.words != n || plain != nil && plain.words != n {
			t.Fatalf("mixed %v: n = %d, words %d, want %d", mixed, n, whole.words, ranges*1000)
		}
		if wantWhole := !mixed; (whole.wholes > 0) != wantWhole || src.keep != wantWhole {
			t.Fatalf("mixed %v: %d ranges handed on whole, reader asked %v", mixed, whole.wholes, src.keep)
		}
		if want := int(n / detect.ProgressEvery); checks != want {
			t.Fatalf("mixed %v: %d progress checks, want %d", mixed, checks, want)
		}
	}
}
