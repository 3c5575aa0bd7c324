// Package confirmonly is racekit test -confirm's race that the plain run
// does not show (main_test.go): a worker publishes data under a lock; the
// caller, after a sleep that lets the worker go first on a quiet machine,
// takes the lock and reads the flag, and writes data itself when the
// worker has not run yet. Under Go's scheduler the worker runs first, the
// lock orders the two, and no race is reported; another order makes the
// two writes of data race.
package confirmonly

import (
	"sync"
	"time"
)

// Run returns data as the caller last saw it.
func Run() int {
	var mu sync.Mutex
	var ready bool
	var data int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		data = 1 // RACE: the worker's write
		mu.Lock()
		ready = true
		mu.Unlock()
	}()
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	r := ready
	mu.Unlock()
	if !r {
		data = 2 // RACE: the caller's write when the worker has not run
	}
	v := data
	wg.Wait()
	return v
}
