package lockset

import (
	"slices"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/reference"
	"github.com/racekit/racekit/finding"
)

// TestRecycledIDsSameHybridRaces: on random traces of many short-lived
// goroutines, hybrid with recycled clock IDs (detect/clock, "Recycled
// IDs") reports exactly the oracle's site pairs, as with one ID per
// goroutine, and names the right goroutines.
func TestRecycledIDsSameHybridRaces(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	var recycled int64
	for seed := range uint64(n) {
		tr := reference.Churn(seed, 100+int(seed%6)*100)
		want := reference.Pairs(tr, reference.HybridRaces(tr))
		for _, recycle := range []bool{true, false} {
			c := finding.NewCollector()
			var races []finding.Race
			d := newHybrid(finding.SinkFunc(func(r *finding.Race) {
				races = append(races, *r)
				c.Report(r)
			}), recycle)
			if _, err := detect.Run(tr.Iter(), d); err != nil {
				t.Fatal(err)
			}
			if got := c.Pairs(); !slices.Equal(got, want) {
				t.Fatalf("seed %d, recycle %v: pairs %v, reference %v", seed, recycle, got, want)
			}
			for _, r := range races {
				if r.Prev.G != tr.Events[r.Prev.Seq].G || r.Cur.G != tr.Events[r.Cur.Seq].G {
					t.Fatalf("seed %d, recycle %v: %+v names the wrong goroutines", seed, recycle, r)
				}
			}
			if recycle {
				recycled += d.tr.k.Counters().Recycled
			}
		}
	}
	if recycled == 0 {
		t.Fatal("no ID recycled: the traces should churn")
	}
}
