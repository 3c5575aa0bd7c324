// Synchronization-heavy subject: a mutex-protected counter (4 goroutines
// x 100k) and a channel pipeline (400k messages).
package main

import (
	"fmt"
	"sync"
)

type counter struct {
	mu sync.Mutex
	n  int
}

func main() {
	c := &counter{}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100000; i++ {
				c.mu.Lock()
				c.n++
				c.mu.Unlock()
			}
		}()
	}
	in := make(chan int, 64)
	out := make(chan int, 64)
	go func() {
		for v := range in {
			out <- v * 2
		}
		close(out)
	}()
	go func() {
		for i := 0; i < 400000; i++ {
			in <- i
		}
		close(in)
	}()
	sum := 0
	for v := range out {
		sum += v
	}
	wg.Wait()
	fmt.Println(c.n, sum)
}
