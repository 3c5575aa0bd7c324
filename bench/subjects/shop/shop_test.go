package shop

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// One customer after the deliveries: sells exactly the stock.
func TestSequential(t *testing.T) {
	s := &Shop{}
	s.Deliver(3)
	n := 0
	for i := 0; i < 5; i++ {
		if s.Buy() {
			n++
		}
	}
	if n != 3 || s.Show() != 0 {
		t.Fatalf("sold %d, stock %d; want 3, 0", n, s.Show())
	}
}

// Concurrently the books still balance: stock = delivered - sold, even
// when it goes negative (oversold).
func TestConcurrent(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Stock != r.Delivered-r.Sold || r.Shown != cfg.Rounds {
		t.Fatalf("books do not balance: %+v", r)
	}
	if r.Stock < 0 {
		t.Logf("oversold: %+v", r)
	}
}
