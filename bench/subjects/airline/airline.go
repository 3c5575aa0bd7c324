// Package airline is the ConTest airline-tickets bug: the main thread
// keeps starting seller threads until a stop flag says the flight is full;
// each seller increments the sold count, checks for overbooking, and
// raises the flag when the count reaches capacity, all without
// synchronization. Sellers lose increments, several can see the count
// below capacity, and the main thread starts sellers after the flight is
// full: the flight is overbooked.
package airline

import "sync"

// Config sizes a run.
type Config struct {
	Capacity   int // seats
	MaxSellers int // bound on seller goroutines (the original is unbounded)
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Capacity: 10, MaxSellers: 40} }

// Flight is the shared state.
type Flight struct {
	capacity  int
	sold      int  // seats sold: incremented by every seller, unsynchronized
	stopSales bool // set by a seller, polled by the main thread
}

// sell is one seller thread: sell a seat, check, maybe stop the sales.
// Reports whether it saw the flight overbooked.
func (f *Flight) sell() (overbooked bool) {
	// Every seller's increment races with every other's.
	f.sold++ // racekit:race id=air-sold kind=race benign=false self racekit:race id=air-check,air-full kind=race benign=false
	// The checks read a count other sellers are incrementing.
	if f.sold > f.capacity { // racekit:race id=air-check kind=race benign=false
		overbooked = true
	}
	if f.sold >= f.capacity { // racekit:race id=air-full kind=race benign=false
		// Several sellers may set it (same value: harmless among them).
		f.stopSales = true // racekit:race id=air-stop-ww kind=race benign=true self racekit:race id=air-stop kind=race benign=false
	}
	return overbooked
}

// Result summarizes the sale.
type Result struct {
	Sellers    int // seller goroutines started
	Sold       int // the final count (lost increments make it smaller)
	Overbooked int // sellers that saw the count above capacity
}

// Run is the main thread: start sellers until the flag rises.
func Run(cfg Config) Result {
	f := &Flight{capacity: cfg.Capacity}
	var wg sync.WaitGroup
	var mu sync.Mutex
	r := Result{}
	// The main thread polls the flag the sellers write.
	for !f.stopSales && r.Sellers < cfg.MaxSellers { // racekit:race id=air-stop kind=race benign=false
		r.Sellers++
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f.sell() {
				mu.Lock()
				r.Overbooked++ // racekit:norace id=air-n1 why="read after wg.Wait joined the writers"
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	r.Sold = f.sold
	return r // racekit:norace id=air-n1 why="read after wg.Wait joined the writers"
}
