// sync.Once initializes a shared table once; every goroutine reads it
// after its own Do returns.
package main

import (
	"fmt"
	"sync"
)

var (
	once  sync.Once
	table []int
)

func get() []int {
	once.Do(func() {
		table = []int{1, 2, 3}
	})
	return table
}

func main() {
	var wg sync.WaitGroup
	sums := make([]int, 4)
	for i := range sums {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, v := range get() {
				sums[i] += v
			}
		}()
	}
	wg.Wait()
	fmt.Println(sums)
}
