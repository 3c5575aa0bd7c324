// Package doublelock: locks taken while their goroutine surely holds them
// (want comments on the diagnostics), and the cases that are not.
package doublelock

import (
	"sync"
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

// get calls refresh holding c.mu: refresh locks it again.
func (c *cache) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stale {
		c.refresh() // want `potential deadlock: \(\*doublelock.cache\).get takes c.mu in write mode at doublelock.go:17:11 \(through refresh called at doublelock.go:28:12\) while it holds it in write mode`
	}
	return c.v
}

// deeper reaches the second Lock through two calls.
func (c *cache) deeper() {
	c.mu.Lock()
	c.viaRefresh() // want `potential deadlock: \(\*doublelock.cache\).deeper takes c.mu in write mode at doublelock.go:17:11 \(through viaRefresh called at doublelock.go:36:14, refresh called at doublelock.go:42:12\)`
	c.mu.Unlock()
}

func (c *cache) viaRefresh() {
	if c.stale {
		c.refresh()
	}
}

// released: the lock is given back before the call.
func (c *cache) released() {
	c.mu.Lock()
	c.stale = true
	c.mu.Unlock()
	c.refresh()
}

// other: another cache's lock.
func (c *cache) other(d *cache) {
	c.mu.Lock()
	d.refresh()
	c.mu.Unlock()
}

type registry struct {
	mu sync.RWMutex
	m  map[string]int
}

// upgrade write-locks a lock it holds in read mode.
func (r *registry) upgrade(k string) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if _, ok := r.m[k]; !ok {
		r.mu.Lock() // want `potential deadlock: \(\*doublelock.registry\).upgrade takes r.mu in write mode at doublelock.go:71:12 while it holds it in read mode`
		r.m[k] = 0
		r.mu.Unlock()
	}
}

// readTwice read-locks twice: a deadlock only with a writer between, not
// reported here.
func (r *registry) readTwice() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.m)
}

// handoff: another goroutine unlocks what this one locked (a Mutex is
// not tied to a goroutine), so the second Lock waits for it, not for
// itself.
func handoff() {
	var mu sync.Mutex
	mu.Lock()
	time.AfterFunc(time.Millisecond, mu.Unlock)
	mu.Lock()
	mu.Unlock()
}

// maybe: the lock is held on one path only.
func (c *cache) maybe(b bool) {
	if b {
		c.mu.Lock()
	}
	c.refresh()
	if b {
		c.mu.Unlock()
	}
}
