// Package mutexleak: resource, a Lock that is never released. Update
// returns early on invalid input without unlocking; the next caller blocks
// on Lock forever.
//
// truth: leak
package mutexleak

import (
	"sync"
	"testing"
	"time"
)

type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) update(d int) bool {
	c.mu.Lock()
	if d < 0 {
		return false // Unlock forgotten
	}
	c.n += d
	c.mu.Unlock()
	return true
}

func TestUpdate(t *testing.T) {
	c := &counter{}
	c.update(-1)
	go c.update(1) // blocks forever
	time.Sleep(10 * time.Millisecond)
}
