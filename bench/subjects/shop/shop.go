// Package shop is a Go version of ConTest's Shop (PECAN Table 1: 280
// lines, 4 threads, 1 shared variable, 4 races): suppliers restock and
// customers buy from one stock counter. Updates hold the shop's lock, but
// customers decide whether to buy by looking at the stock without it and
// then decrement without looking again (a check-then-act that oversells),
// and the display reads the stock unlocked.
package shop

import (
	"sync"
)

// Config sizes a run.
type Config struct {
	Suppliers int // supplier goroutines
	Customers int // customer goroutines
	Rounds    int // deliveries per supplier and purchase attempts per customer
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Suppliers: 1, Customers: 2, Rounds: 40} }

// Shop has one shared variable: the stock.
type Shop struct {
	mu    sync.Mutex
	stock int // updated under mu; read without it by buyers and the display
}

// Deliver adds n items.
func (s *Shop) Deliver(n int) {
	s.mu.Lock()
	s.stock += n // racekit:race id=shop-check-deliver,shop-show-deliver kind=race benign=false
	s.mu.Unlock()
}

// Buy takes one item if the customer sees one. The look is unlocked and
// the decrement does not look again: two customers who both saw the last
// item both take it, and the stock goes negative. The look and the take
// are meant to be atomic (racekit anomalies' atomic region).
//
//racekit:atomic
func (s *Shop) Buy() bool {
	if s.stock <= 0 { // racekit:race id=shop-check-deliver,shop-check-buy kind=race benign=false racekit:race id=shop-av kind=atomicity benign=false
		return false
	}
	s.mu.Lock()
	s.stock-- // racekit:race id=shop-check-buy,shop-show-buy kind=race benign=false racekit:race id=shop-av kind=atomicity benign=false self
	s.mu.Unlock()
	return true
}

// Show is the display: the stock read without the lock.
func (s *Shop) Show() int {
	return s.stock // racekit:race id=shop-show-deliver,shop-show-buy kind=race benign=false
}

// Result is a run's books.
type Result struct {
	Delivered int // items delivered
	Sold      int // purchases that went through
	Stock     int // final stock: Delivered - Sold, negative when oversold
	Shown     int // display refreshes
}

// Run starts suppliers, customers and a display.
func Run(cfg Config) Result {
	s := &Shop{}
	var wg sync.WaitGroup
	for i := 0; i < cfg.Suppliers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < cfg.Rounds; r++ {
				s.Deliver(1)
			}
		}()
	}
	sold := make([]int, cfg.Customers)
	for c := 0; c < cfg.Customers; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for r := 0; r < cfg.Rounds; r++ {
				if s.Buy() {
					sold[c]++
				}
			}
		}(c)
	}
	shown := make(chan int)
	go func() {
		n := 0
		for r := 0; r < cfg.Rounds; r++ {
			s.Show()
			n++
		}
		shown <- n
	}()
	wg.Wait()
	r := Result{Delivered: cfg.Suppliers * cfg.Rounds, Shown: <-shown, Stock: s.stock}
	for _, n := range sold {
		r.Sold += n
	}
	return r
}
