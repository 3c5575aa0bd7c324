// Package lockordertest: TestTransfers runs transfers in opposite
// directions whose lock orders form a cycle; the run never deadlocks (the
// goroutine sleeps first), though only time orders the two. racekit test
// --deadlocks reports the cycle and fails the package; without it,
// nothing.
package lockordertest

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
	to.mu.Lock() // the inner Lock of the cycle
	defer to.mu.Unlock()
	from.bal -= n
	to.bal += n
}

func TestTransfers(t *testing.T) {
	a, b := &account{bal: 10}, &account{bal: 10}
	done := make(chan bool)
	go func() {
		time.Sleep(100 * time.Millisecond)
		transfer(b, a, 1)
		done <- true
	}()
	transfer(a, b, 1)
	<-done
	if a.bal+b.bal != 20 {
		t.Fatal("money lost")
	}
}
