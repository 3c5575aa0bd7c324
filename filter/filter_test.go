package filter_test

import (
	"errors"
	"io"
	"testing"

	"github.com/racekit/racekit/filter"
	"github.com/racekit/racekit/trace"
)

func TestReaderKeepsWhatTheFilterKeeps(t *testing.T) {
	b := trace.NewBuilder()
	b.Write("T1", "x", "a:1")
	b.Acq("T1", "m")
	b.Read("T1", "x", "a:2")
	b.Rel("T1", "m")
	onlySync := filter.Func(func(e *trace.Event) bool { return !e.Op.IsAccess() })
	r := filter.NewReader(b.Trace().Iter(), onlySync)
	var got []trace.Op
	var e trace.Event
	for {
		err := r.Next(&e)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Op)
	}
	if len(got) != 2 || got[0] != trace.OpAcquire || got[1] != trace.OpRelease {
		t.Fatalf("kept %v, want [Acquire Release]", got)
	}
	if r.Kept() != 2 || r.Dropped() != 2 || r.DroppedAccesses() != 2 {
		t.Fatalf("kept %d dropped %d (accesses %d), want 2, 2, 2", r.Kept(), r.Dropped(), r.DroppedAccesses())
	}
}
