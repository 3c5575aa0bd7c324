// Workers fill disjoint slots; main reads them after Wait.
package main

import (
	"fmt"
	"sync"
)

func main() {
	out := make([]int, 8)
	var wg sync.WaitGroup
	wg.Add(len(out))
	for i := range out {
		go func() {
			defer wg.Done()
			out[i] = i * i
		}()
	}
	wg.Wait()
	sum := 0
	for _, v := range out {
		sum += v
	}
	fmt.Println(sum)
}
