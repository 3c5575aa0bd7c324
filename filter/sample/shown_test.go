package sample

import (
	"slices"
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
		ev(1, enter, 7), // holds an acquire: shown
		ev(1, acq, 8),
		ev(1, exit, 7),
		ev(1, exit, 1),
		ev(2, exit, 10), // an exit without its entry (recorded before the trace): kept
	}}
	keep := func(e *trace.Event) bool { return e.Site != 5 }
	var got []trace.SiteID
	for _, e := range Shown(tr, keep) {
		got = append(got, e.Site)
	}
	want := []trace.SiteID{1, 2, 3, 2, 7, 8, 7, 1, 10}
	if !slices.Equal(got, want) {
		t.Fatalf("Shown: sites %v, want %v", got, want)
	}
}
