package finding

import (
	"github.com/racekit/racekit/trace"
	"reflect"
	"testing"
)

func race(a, b uint32, seq uint64) *Race {
	return &Race{Detector: "hb", Evidence: Observed, Addr: 0x10,
		Prev: Access{Seq: seq, Site: siteID(a)}, Cur: Access{Seq: seq + 1, Site: siteID(b), Write: true}}
}

func TestCollectorDedupsUnorderedPairs(t *testing.T) {
	c := NewCollector()
	c.Report(race(3, 5, 10))
	c.Report(race(5, 3, 20)) // same pair, other order
	c.Report(race(1, 2, 30))
	c.Report(race(3, 5, 40))
	if c.Len() != 2 {
		t.Fatalf("Len = %d, want 2", c.Len())
	}
	g := c.Groups()
	if g[0].Count != 3 || g[0].Prev.Seq != 10 || g[1].Count != 1 {
		t.Errorf("groups = %+v: want the first occurrence kept, counts 3 and 1", g)
	}
	if want := []Pair{{1, 2}, {3, 5}}; !reflect.DeepEqual(c.Pairs(), want) {
		t.Errorf("Pairs = %v, want %v", c.Pairs(), want)
	}
}

func TestEvidenceNames(t *testing.T) {
	for e, want := range map[Evidence]string{Observed: "observed", Predicted: "predicted", Confirmed: "confirmed", Potential: "potential", 0: "unknown", 9: "unknown"} {
		if e.String() != want {
			t.Errorf("%d: %q, want %q", e, e.String(), want)
		}
	}
}

func siteID(n uint32) trace.SiteID { return trace.SiteID(n) }
