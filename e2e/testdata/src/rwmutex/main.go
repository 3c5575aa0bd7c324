// Readers under RLock, a writer under Lock.
package main

import (
	"fmt"
	"sync"
)

type cache struct {
	sync.RWMutex
	m map[int]int
}

func (c *cache) get(k int) (int, bool) {
	c.RLock()
	defer c.RUnlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *cache) put(k, v int) {
	c.Lock()
	c.m[k] = v
	c.Unlock()
}

func main() {
	c := &cache{m: map[int]int{}}
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			c.put(i, i*i)
		}()
		go func() {
			defer wg.Done()
			c.get(i)
		}()
	}
	wg.Wait()
	v, _ := c.get(2)
	fmt.Println(v)
}
