// The pre-Go 1.22 loop-variable bug, with the shared variable made
// explicit: every goroutine reads i while the loop increments it.
package main

import (
	"fmt"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	results := make([]int, 3)
	var i int
	for i = 0; i < 3; i++ { // race: i
		wg.Add(1)
		go func(slot int) {
			defer wg.Done()
			results[slot] = i * 10 // race: i
		}(i)
	}
	wg.Wait()
	fmt.Println(len(results))
}
