// Writers that hold only the read lock of an RWMutex race with each other:
// read locks do not exclude one another.
package main

import (
	"fmt"
	"sync"
)

var (
	mu    sync.RWMutex
	total int
)

func main() {
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.RLock()
			total++ // race: t
			mu.RUnlock()
		}()
	}
	wg.Wait()
	fmt.Println(total)
}
