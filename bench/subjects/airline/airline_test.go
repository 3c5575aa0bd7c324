package airline

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// Sold one by one, the flight fills exactly and stops.
func TestSequential(t *testing.T) {
	f := &Flight{capacity: 3}
	over := 0
	for !f.stopSales {
		if f.sell() {
			over++
		}
	}
	if f.sold != 3 || over != 0 {
		t.Fatalf("sold %d, overbooked %d; want 3, 0", f.sold, over)
	}
}

// Concurrently: at most MaxSellers start, each selling one seat, so the
// count (which may lose increments) never exceeds the sellers.
func TestConcurrent(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Sellers > cfg.MaxSellers || r.Sold > r.Sellers {
		t.Fatalf("got %+v", r)
	}
	if r.Sellers > cfg.Capacity {
		t.Logf("sellers started after the flight was full: %+v", r)
	}
}
