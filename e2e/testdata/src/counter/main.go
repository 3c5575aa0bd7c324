// Two goroutines increment a package variable without synchronization.
package main

import (
	"fmt"
	"sync"
)

var counter int

func main() {
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counter++ // race: c
		}()
	}
	wg.Wait()
	fmt.Println(counter)
}
