package detect_test

import (
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/trace"
)

// atomCounter counts events as counter does, and atomic operations handed
// on whole as the four events each stands for.
type atomCounter struct {
	counter
	ops []trace.Op // the ops it saw, in order, an atomic operation whole as "aload" etc.
}

func (c *atomCounter) Handle(e *trace.Event) { c.words++; c.ops = append(c.ops, e.Op) }
func (c *atomCounter) HandleGoAtomic(e *trace.Event) {
	c.wholes++
	c.words += trace.GoAtomicSeqs
	c.ops = append(c.ops, e.Op)
}

// RunChecked hands atomic operations with trace.FlagGoAtomic on whole only
// when every detector takes them so, asks a reader that can to keep them
// whole then, and otherwise gives every detector the four events each
// stands for, even from a reader (here an in-memory trace) that hands them
// on whole unasked; it counts four events for each either way.
func TestRunCheckedGoAtomics(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("T")
	b.Write("T", "x", "")
	b.Add(trace.Event{G: b.G("T"), Op: trace.OpAtomicStore, Obj: b.Obj("a"), Flags: trace.FlagGoAtomic})
	b.Add(trace.Event{G: b.G("T"), Op: trace.OpAtomicLoad, Obj: b.Obj("a"), Flags: trace.FlagGoAtomic | trace.FlagCASFailed})
	tr := b.Trace()
	for _, mixed := range []bool{false, true} {
		whole := &atomCounter{}
		ds := []detect.Detector{whole}
		var plain *atomCounter
		if mixed {
			plain = &atomCounter{}
			ds = append(ds, &plain.counter) // no HandleGoAtomic
		}
		n, err := detect.Run(tr.Iter(), ds...)
		if err != nil {
			t.Fatal(err)
		}
		if n != 2+2*trace.GoAtomicSeqs || whole.words != n || plain != nil && plain.words != n {
			t.Fatalf("mixed %v: n = %d, events %d, want %d", mixed, n, whole.words, 2+2*trace.GoAtomicSeqs)
		}
		if wantWhole := !mixed; (whole.wholes == 2) != wantWhole {
			t.Fatalf("mixed %v: %d atomic operations handed on whole", mixed, whole.wholes)
		}
		if mixed {
			want := []trace.Op{trace.OpBegin, trace.OpWrite,
				trace.OpAcquire, trace.OpAtomicStore, trace.OpWrite, trace.OpRelease,
				trace.OpAcquire, trace.OpAtomicLoad, trace.OpWrite, trace.OpRelease} // a failed CAS writes
			if len(whole.ops) != len(want) {
				t.Fatalf("ops %v, want %v", whole.ops, want)
			}
			for i := range want {
				if whole.ops[i] != want[i] {
					t.Fatalf("ops %v, want %v", whole.ops, want)
				}
			}
		}
	}
}
