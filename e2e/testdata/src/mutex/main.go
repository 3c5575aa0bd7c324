// A counter protected by a mutex, with Unlock deferred.
package main

import (
	"fmt"
	"sync"
)

type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) inc(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[k]++
}

var total int
var mu sync.Mutex

func main() {
	c := &counter{n: map[string]int{}}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				c.inc("k")
				mu.Lock()
				total++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	fmt.Println(c.n["k"], total)
}
