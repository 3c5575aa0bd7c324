// Package lostwakeup: condition variable, a lost wakeup. The signaller sets
// ready and signals without holding the lock, and the waiter tests ready
// with if, not for: a signal between the waiter's test and its Wait is
// lost, and the waiter waits forever.
//
// truth: leak
package lostwakeup

import (
	"sync"
	"testing"
	"time"
)

func TestReady(t *testing.T) {
	var mu sync.Mutex
	c := sync.NewCond(&mu)
	var ready bool
	done := make(chan bool, 1)
	go func() {
		mu.Lock()
		if !ready {
			c.Wait()
		}
		mu.Unlock()
		done <- true
	}()
	time.Sleep(10 * time.Millisecond)
	ready = true // without the lock
	c.Signal()
	<-done
}
