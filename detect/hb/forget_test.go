package hb_test

import (
	"slices"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/finding"
)

// Forget (detect.Forgetter) drops the per-address state and keeps the
// clocks: a race between accesses on either side of it is lost, a race
// after it is found, and ordering established before it (a lock handed
// over, a fork) still orders the accesses after it. Each detector runs the
// trace with Forget between events, in read-shared and exclusive states.
func TestForget(t *testing.T) {
	b := forked("T1", "T2")
	b.Write("T1", "x", "a")
	b.Read("T1", "w", "r1")
	b.Read("T2", "w", "r2") // w read-shared
	b.Acq("T1", "L")
	b.Write("T1", "z", "z1")
	b.Rel("T1", "L")
	forgetAt := len(b.Trace().Events)
	b.Write("T2", "x", "b") // races with a, across the forgetting: lost
	b.Write("T2", "y", "c")
	b.Write("T1", "y", "d") // races with c, after it: found
	b.Acq("T2", "L")
	b.Write("T2", "z", "z2") // ordered after z1 by L: none before or after
	b.Rel("T2", "L")
	b.Write("T1", "w", "w1") // races with r2, across: lost
	b.Read("T2", "w", "r3")  // races with w1, after: found
	tr := b.Trace()
	for _, f := range flavours {
		t.Run(f.name, func(t *testing.T) {
			c := finding.NewCollector()
			d := f.make(c)
			fg, ok := d.(detect.Forgetter)
			if !ok {
				t.Fatalf("%s is not a detect.Forgetter", f.name)
			}
			for i := range tr.Events {
				if i == forgetAt {
					fg.Forget()
				}
				e := tr.Events[i]
				d.Handle(&e)
			}
			d.Finish()
			got := labels(tr.M, c.Pairs())
			want := norm([]string{"c~d", "w1~r3"})
			if !slices.Equal(got, want) {
				t.Errorf("pairs %v, want %v", got, want)
			}
			// Without Forget, every race of the trace.
			all := run(t, f, tr)
			want = norm([]string{"a~b", "c~d", "r2~w1", "w1~r3"})
			if got := labels(tr.M, all.c.Pairs()); !slices.Equal(got, want) {
				t.Errorf("without Forget: pairs %v, want %v", got, want)
			}
		})
	}
}
