// Package doublelock: resource deadlock, a lock taken twice by one
// goroutine. Get locks the cache and, when the entry is stale, calls
// refresh, which locks it again. An entry is stale only if an invalidation
// came in between, which the test's invalidator does after a delay.
//
// truth: deadlock
package doublelock

import (
	"sync"
	"testing"
	"time"
)

type cache struct {
	mu    sync.Mutex
	v     int
	stale bool
}

func (c *cache) refresh() {
	c.mu.Lock()
	c.v++
	c.stale = false
	c.mu.Unlock()
}

func (c *cache) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stale {
		c.refresh() // locks c.mu again
	}
	return c.v
}

func (c *cache) invalidate() {
	c.mu.Lock()
	c.stale = true
	c.mu.Unlock()
}

func TestGet(t *testing.T) {
	c := &cache{}
	done := make(chan bool)
	go func() {
		time.Sleep(20 * time.Millisecond)
		c.invalidate()
		done <- true
	}()
	c.get()
	<-done
}
