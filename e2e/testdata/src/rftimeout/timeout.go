// Package rftimeout races on a timeout: Query returns what the backend
// has computed so far when its timer fires first, reading the variable the
// abandoned backend goroutine writes (statements 1 and 2). Its run also
// sleeps and reads the clock (an expiring cache), so a controlled run
// replays exactly only if timers, sleeps and the clock follow the seed.
package rftimeout

import (
	"sync"
	"time"
)

func compute(work int) int {
	x := 1
	for i := 0; i < work; i++ {
		x = x*31 + i
	}
	return x&0xff | 1
}

// Query waits for the backend for at most timeout.
func Query(work int, timeout time.Duration, pending *sync.WaitGroup) (int, bool) {
	var result int
	done := make(chan struct{})
	pending.Add(1)
	go func() {
		defer pending.Done()
		result = compute(work) // 1
		close(done)
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return result, true
	case <-t.C:
		return result, false // 2
	}
}

// Cache forgets entries older than ttl.
type Cache struct {
	mu   sync.Mutex
	ttl  time.Duration
	at   map[int]time.Time
	hits int
}

func NewCache(ttl time.Duration) *Cache { return &Cache{ttl: ttl, at: map[int]time.Time{}} }

func (c *Cache) Put(k int) {
	c.mu.Lock()
	c.at[k] = time.Now()
	c.mu.Unlock()
}

func (c *Cache) Get(k int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.at[k]
	if ok && time.Since(at) < c.ttl {
		c.hits++
		return true
	}
	return false
}
