// Package cacheget: a value stored in a locked map cache and taken out by
// two goroutines is one object in both (issue 29: on go-cache, the
// large-reps filter removed this race, since get's result was unknown and
// the two writes were told apart by type only). get copies the entry out
// (it, ok := c.items[k]) and returns a field of the copy after unlocking;
// the result is c.items[*].obj, rooted at the cache both goroutines share.
package main

import "sync"

type entry struct {
	obj any
	exp int64
}

type cache struct {
	mu    sync.RWMutex
	items map[string]entry
}

func (c *cache) get(k string) (any, bool) {
	c.mu.RLock()
	it, found := c.items[k]
	if !found {
		c.mu.RUnlock()
		return nil, false
	}
	c.mu.RUnlock()
	return it.obj, true
}

type counter struct {
	mu sync.Mutex
	n  int
	m  int
}

func racy(c *cache) {
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, _ := c.get("k")
			v.(*counter).n++ // want `potential race on c\.items\[\*\]\.obj\.n: write at cacheget\.go:45:17 in goroutine racy\$1 started at cacheget\.go:42:3 holding no lock, and read at cacheget\.go:45:17 in another instance of the same goroutine holding no lock`
		}()
	}
	wg.Wait()
}

func locked(c *cache) {
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, _ := c.get("k")
			x := v.(*counter)
			x.mu.Lock()
			x.m++
			x.mu.Unlock()
		}()
	}
	wg.Wait()
}

func main() {
	c := &cache{items: map[string]entry{"k": {obj: &counter{}}}}
	racy(c)
	locked(c)
}
