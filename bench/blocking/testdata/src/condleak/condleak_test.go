// Package condleak: condition variable, a Wait that nothing signals. A
// waiter waits for ready; the setter sets it without Signal or Broadcast.
//
// truth: leak
package condleak

import (
	"sync"
	"testing"
	"time"
)

func TestReady(t *testing.T) {
	var mu sync.Mutex
	c := sync.NewCond(&mu)
	ready := false
	go func() {
		mu.Lock()
		for !ready {
			c.Wait()
		}
		mu.Unlock()
	}()
	time.Sleep(5 * time.Millisecond)
	mu.Lock()
	ready = true // c.Broadcast() forgotten
	mu.Unlock()
	time.Sleep(10 * time.Millisecond)
}
