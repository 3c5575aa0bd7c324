// Package abba is racekit test -confirm -deadlocks's lock-order cycle
// (main_test.go): two transfers lock their accounts in argument order; run
// in opposite directions they can each hold one lock and wait for the
// other. The second transfer starts later, so a plain run never
// deadlocks; DeadlockFuzzer's schedules make it.
package abba

import (
	"sync"
	"testing"
	"time"
)

type account struct {
	mu  sync.Mutex
	bal int
}

func transfer(from, to *account, n int) {
	from.mu.Lock() // HELD: the first lock
	defer from.mu.Unlock()
	to.mu.Lock() // REQUESTED: the second, held by the other transfer
	defer to.mu.Unlock()
	from.bal -= n
	to.bal += n
}

func TestTransfers(t *testing.T) {
	a, b := &account{bal: 10}, &account{bal: 10}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		transfer(b, a, 1)
	}()
	transfer(a, b, 1)
	wg.Wait()
}
