// Package abba: resource deadlock, AB-BA. Two transfers lock their
// accounts in argument order; run in opposite directions they can each
// hold one lock and wait for the other. The test's second transfer starts
// later, so a plain run never deadlocks.
//
// truth: deadlock
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
	from.mu.Lock()
	defer from.mu.Unlock()
	to.mu.Lock()
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
