// Package lazyinit: atomicity, a lazily built cache entry. Get looks the
// key up under the lock and, on a miss, builds the value and stores it
// under the lock again: two callers that both miss build it twice (one
// connection leaked, one constructor run too many). The second caller
// comes late, so a plain run finds the entry built.
//
// truth: atomicity
package lazyinit

import (
	"sync"
	"testing"
	"time"
)

type cache struct {
	mu     sync.Mutex
	m      map[string]*conn
	builds int
}

type conn struct{ name string }

func (c *cache) lookup(k string) *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *cache) store(k string, v *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.builds++
	c.m[k] = v
}

func (c *cache) get(k string) *conn {
	if v := c.lookup(k); v != nil {
		return v
	}
	v := &conn{name: k}
	c.store(k, v)
	return v
}

func TestBuiltOnce(t *testing.T) {
	c := &cache{m: map[string]*conn{}}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(late bool) {
			defer wg.Done()
			if late {
				time.Sleep(10 * time.Millisecond)
			}
			c.get("db")
		}(i == 1)
	}
	wg.Wait()
	if c.builds != 1 {
		t.Errorf("built %d times, want once", c.builds)
	}
}
