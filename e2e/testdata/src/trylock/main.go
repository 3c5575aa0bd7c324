// TryLock: only the goroutine whose TryLock succeeds touches the data.
package main

import (
	"fmt"
	"sync"
)

var (
	mu    sync.Mutex
	rw    sync.RWMutex
	count int
	seen  int
)

func main() {
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !mu.TryLock() {
			}
			count++
			mu.Unlock()
			if rw.TryRLock() {
				_ = seen
				rw.RUnlock()
			}
			if rw.TryLock() {
				seen++
				rw.Unlock()
			}
		}()
	}
	wg.Wait()
	fmt.Println(count)
}
