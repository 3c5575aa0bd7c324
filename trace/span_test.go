package trace

import "testing"

// RangeExpander hands out exactly the words Span.Word lists, in order,
// for strides below, at and above a word, and not a multiple of it, dense
// and sparse.
func TestRangeExpanderMatchesWord(t *testing.T) {
	for _, sparse := range []bool{false, true} {
		for _, stride := range []uint64{1, 2, 3, 4, 7, 8, 9, 12, 16, 24, 25, 100} {
			for _, count := range []uint64{1, 2, 5, 33} {
				span, ok := MakeSpan(stride, count)
				if sparse {
					if span, ok = MakeSparseSpan(stride, count); stride <= 8 {
						if ok {
							t.Fatalf("MakeSparseSpan(%d, %d): a sparse span of a stride of a word or less", stride, count)
						}
						continue
					}
					if !span.Valid() || span.Words() != count || span.Stride() != stride || span.Count() != count {
						t.Fatalf("MakeSparseSpan(%d, %d) = %v: %d words", stride, count, span, span.Words())
					}
				}
				if !ok {
					t.Fatalf("MakeSpan(%d, %d) failed", stride, count)
				}
				const base = 0xc000010003
				e := Event{Op: OpWriteRange, Obj: base, Value: uint64(span), Site: 7, G: 2}
				var x RangeExpander
				w := e
				x.Start(&w)
				var got []uint64
				for {
					if w.Op != OpWrite || w.Site != 7 || w.G != 2 {
						t.Fatalf("stride %d count %d: word event %+v", stride, count, w)
					}
					got = append(got, w.Obj)
					if !x.Next(&w) {
						break
					}
				}
				if uint64(len(got)) != span.Words() {
					t.Fatalf("stride %d count %d: %d words, want %d", stride, count, len(got), span.Words())
				}
				for k, a := range got {
					if want := span.Word(base, uint64(k)); a != want {
						t.Fatalf("stride %d count %d: word %d at %#x, want %#x", stride, count, k, a, want)
					}
					if sparse && a != base+uint64(k)*stride {
						t.Fatalf("sparse stride %d count %d: word %d at %#x, want the start of element %d", stride, count, k, a, k)
					}
				}
			}
		}
	}
}
