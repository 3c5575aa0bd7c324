package trace

import "fmt"

// Span is the Value of an OpReadRange or OpWriteRange event: Count
// elements of Stride bytes each, laid out from the event's Obj on. Go's
// race detector checks every 8-byte word such an access covers; racekit's
// detectors key memory by the address an access names, and name a value
// wider than a word by each of its words. So a span stands for one word
// access at Obj + i*Stride + off for each element i and each off = 0, 8,
// ... below Stride (Words): a slice of bytes names each byte, a slice of
// structs each word of each element, as word events always did. A sparse
// span (MakeSparseSpan; .rkt version 7) stands for the first word of each
// element only: a loop's accesses to every other element, or to one field
// of each struct (rt's writer: wordRun).
type Span uint64

// Bounds of a span's fields: the top bit marks a sparse span, the stride
// takes the next 23 bits, the count the low 40.
const (
	spanCountBits = 40
	spanSparse    = 1 << 63
	MaxSpanStride = 1<<(63-spanCountBits) - 1
	MaxSpanCount  = 1<<spanCountBits - 1
)

// MakeSpan returns the span of count elements of stride bytes, and false
// when either is zero or out of bounds.
func MakeSpan(stride, count uint64) (Span, bool) {
	if stride == 0 || count == 0 || stride > MaxSpanStride || count > MaxSpanCount {
		return 0, false
	}
	return Span(stride<<spanCountBits | count), true
}

// MakeSparseSpan returns the sparse span of count elements of stride
// bytes: one word access at the start of each. The stride is over 8 (at 8
// or less the span of MakeSpan names the same accesses).
func MakeSparseSpan(stride, count uint64) (Span, bool) {
	if stride <= 8 {
		return 0, false
	}
	s, ok := MakeSpan(stride, count)
	if !ok {
		return 0, false
	}
	return s | spanSparse, true
}

// Stride is the size in bytes of one element.
func (s Span) Stride() uint64 { return uint64(s) >> spanCountBits & MaxSpanStride }

// Sparse reports whether s stands for the first word of each element only.
func (s Span) Sparse() bool { return s&spanSparse != 0 }

// Count is the number of elements.
func (s Span) Count() uint64 { return uint64(s) & MaxSpanCount }

// MaxSpanBytes bounds the memory one span covers: the 48-bit address
// space, larger than any Go object.
const MaxSpanBytes = 1 << 48

// Valid reports whether s has a nonzero stride and count and covers at
// most MaxSpanBytes.
func (s Span) Valid() bool {
	st, n := s.Stride(), s.Count()
	return st != 0 && n != 0 && n <= MaxSpanBytes/st && (!s.Sparse() || st > 8)
}

// WordsPer is the number of word accesses one element stands for.
func (s Span) WordsPer() uint64 {
	if s.Sparse() {
		return 1
	}
	return (s.Stride() + 7) / 8
}

// Words is the number of word accesses the span stands for.
func (s Span) Words() uint64 { return s.Count() * s.WordsPer() }

// Word returns the address of the span's k-th word access from base
// (k < Words()).
func (s Span) Word(base, k uint64) uint64 {
	per := s.WordsPer()
	return base + k/per*s.Stride() + k%per*8
}

func (s Span) String() string {
	if s.Sparse() {
		return fmt.Sprintf("%d*%d/8", s.Count(), s.Stride())
	}
	return fmt.Sprintf("%d*%d", s.Count(), s.Stride())
}

// RangeExpander turns a range event into the word accesses it stands for,
// one per call of Next: readers that may meet a range event hold one, so
// that every detector sees only OpRead and OpWrite.
type RangeExpander struct {
	ev     Event  // the range event, its Op already the word op
	elem   uint64 // address of the element of the next word
	off    uint64 // offset of the next word in its element
	stride uint64
	width  uint64 // the bytes of an element accessed: stride, 8 if sparse
	left   uint64 // words still to hand out
}

// Start takes range event e (checked by the caller with Validate) and
// makes e its first word access; the rest follow from Next.
func (x *RangeExpander) Start(e *Event) {
	span := Span(e.Value)
	x.ev = Event{Seq: e.Seq, G: e.G, Op: e.Op.WordOp(), Flags: FlagValueUnknown, Site: e.Site, Obj: e.Obj}
	x.elem, x.off, x.stride, x.left = e.Obj, 0, span.Stride(), span.Words()
	x.width = x.stride
	if span.Sparse() {
		x.width = 8
	}
	x.Next(e)
}

// Next writes the next word access into e and reports whether there was
// one. The addresses are Span.Word's, stepped rather than divided out: a
// division per word was a tenth of the analysis of a trace of byte ranges.
func (x *RangeExpander) Next(e *Event) bool {
	if x.left == 0 {
		return false
	}
	*e = x.ev
	e.Obj = x.elem + x.off
	if x.off += 8; x.off >= x.width {
		x.elem, x.off = x.elem+x.stride, 0
	}
	x.left--
	return true
}

// Pending reports whether Next has words left to hand out.
func (x *RangeExpander) Pending() bool { return x.left != 0 }

// WriteWords passes to write the word accesses range event e stands for,
// in order. Writers of formats without range ops (text, STD, an
// in-memory Trace) write a range event this way, so that nothing is lost.
func WriteWords(e *Event, write func(*Event) error) error {
	var x RangeExpander
	w := *e
	x.Start(&w)
	for {
		if err := write(&w); err != nil {
			return err
		}
		if !x.Next(&w) {
			return nil
		}
	}
}
