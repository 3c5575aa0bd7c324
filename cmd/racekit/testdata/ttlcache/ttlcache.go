// Package ttlcache is racekit hatch's virtual-clock test (hatch_test.go):
// Get counts a hit outside the lock, and a hit needs an entry younger than
// its TTL. Under the random scheduler the recording runs on the virtual
// clock, where the work before the lookup takes no time, so both Gets hit
// and race on hits. A clip that ran on the real clock would find the entry
// expired after that work and take the miss path, departing from the clip.
package ttlcache

import (
	"sync"
	"time"
)

type entry struct {
	expires time.Time
	hits    int
}

// Cache holds one entry.
type Cache struct {
	mu sync.Mutex
	e  *entry
}

// Put stores a fresh entry.
func (c *Cache) Put(ttl time.Duration) {
	c.mu.Lock()
	c.e = &entry{expires: time.Now().Add(ttl)}
	c.mu.Unlock()
}

// Get reports a hit after some work.
func (c *Cache) Get(work int) bool {
	x := 1
	for i := 0; i < work; i++ {
		x = x*1103515245 + 12345
	}
	c.mu.Lock()
	e := c.e
	ok := e != nil && x != 0 && time.Now().Before(e.expires)
	c.mu.Unlock()
	if !ok {
		return false
	}
	e.hits++ // HITS: counted outside the lock
	return true
}
