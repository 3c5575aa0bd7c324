// Goroutines that only touch their own local variables and arrays: nothing
// is shared, nothing is recorded as a race.
package main

import (
	"fmt"
	"sync"
)

func work(seed int) int {
	var buf [8]int
	acc := seed
	for i := range buf {
		buf[i] = acc * i
		acc += buf[i] % 7
	}
	type pair struct{ a, b int }
	p := pair{acc, seed}
	p.a++
	return p.a + p.b
}

func main() {
	var wg sync.WaitGroup
	res := make(chan int, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			res <- work(s)
		}(i)
	}
	wg.Wait()
	close(res)
	t := 0
	for v := range res {
		t += v
	}
	fmt.Println(t)
}
