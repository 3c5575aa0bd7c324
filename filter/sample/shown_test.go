package sample

import (
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/racekit/racekit/trace"
)

func TestShown(t *testing.T) {
	ev := func(g trace.GID, op trace.Op, site trace.SiteID) trace.Event {
		return trace.Event{G: g, Op: op, Site: site}
	}
	enter, exit, rd, acq := trace.OpFuncEnter, trace.OpFuncExit, trace.OpRead, trace.OpAcquire
	tr := &trace.Trace{Events: []trace.Event{
		ev(1, enter, 1), // shown: holds frame 2, which holds a read
		ev(1, enter, 2),
		ev(2, enter, 9), // empty: dropped
		ev(1, rd, 3),
		ev(2, exit, 9),
		ev(1, exit, 2),
		ev(1, enter, 4), // holds only a dropped read: dropped
		ev(1, rd, 5),
		ev(1, enter, 6), // empty, nested: dropped
		ev(1, exit, 6),
		ev(1, exit, 4),
		ev(1, enter, 7), // holds only an acquire (Frameless): dropped
		ev(1, acq, 8),
		ev(1, exit, 7),
		ev(1, enter, 11), // an acquire, then a read that shows the frame
		ev(1, acq, 12),
		ev(1, rd, 13),
		ev(1, exit, 11),
		ev(1, exit, 1),
		ev(2, exit, 10), // an exit without its entry (recorded before the trace): kept
	}}
	keep := func(e *trace.Event) bool { return e.Site != 5 }
	var got []trace.SiteID
	for _, e := range Shown(tr, keep) {
		got = append(got, e.Site)
	}
	want := []trace.SiteID{1, 2, 3, 2, 8, 12, 11, 13, 11, 1, 10}
	if !slices.Equal(got, want) {
		t.Fatalf("Shown: sites %v, want %v", got, want)
	}
}

// Epochs: a run with every access and one with dedup's first accesses
// (plus a repeat its table let through, in other frames) give the same
// entries; moving an access across a synchronization event, or turning a
// write into a read, changes them.
func TestEpochs(t *testing.T) {
	ev := func(g trace.GID, op trace.Op, obj uint64) trace.Event {
		return trace.Event{G: g, Op: op, Obj: obj}
	}
	enter, exit, rd, wr, acq, rel := trace.OpFuncEnter, trace.OpFuncExit, trace.OpRead, trace.OpWrite, trace.OpAcquire, trace.OpRelease
	str := func(e *trace.Event) string { return e.Op.String() + " " + strconv.FormatUint(e.Obj, 16) }
	full := &trace.Trace{Events: []trace.Event{
		ev(1, rd, 0x10), ev(1, wr, 0x10), ev(1, rd, 0x10),
		ev(1, enter, 0), ev(1, rd, 0x18), ev(1, rd, 0x10), ev(1, exit, 0),
		ev(2, wr, 0x18),
		ev(1, acq, 0x99),
		ev(1, rd, 0x10), ev(1, rd, 0x10),
		ev(1, rel, 0x99),
	}}
	deduped := &trace.Trace{Events: []trace.Event{
		ev(1, rd, 0x10), ev(1, wr, 0x10),
		ev(1, rd, 0x18),
		ev(2, wr, 0x18),
		ev(1, acq, 0x99),
		ev(1, enter, 0), ev(1, rd, 0x10), ev(1, exit, 0),
		ev(1, rd, 0x10), // a repeat the table let through
		ev(1, rel, 0x99),
	}}
	want := map[trace.GID][]string{
		1: {"accesses: r r 18; w r 10", "acq 99", "accesses: r r 10", "rel 99"},
		2: {"accesses: w w 18"},
	}
	for name, tr := range map[string]*trace.Trace{"full": full, "deduped": deduped} {
		if got := Epochs(tr, nil, str); !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	moved := &trace.Trace{Events: slices.Clone(full.Events)}
	moved.Events[4], moved.Events[9] = moved.Events[9], moved.Events[4] // the read of 0x18 after the acquire
	turned := &trace.Trace{Events: slices.Clone(full.Events)}
	turned.Events[7].Op = rd
	for name, tr := range map[string]*trace.Trace{"moved": moved, "turned": turned} {
		if got := Epochs(tr, nil, str); maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s: %v, the same entries as the original", name, got)
		}
	}
}
