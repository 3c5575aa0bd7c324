// Goroutines that each behave the same way in every run: every goroutine
// works on its own part of package-level arrays (the same addresses in
// every run), calls functions in a fixed pattern, and meets the others only
// under a lock and at the WaitGroup. Race-free. e2e/sample_test.go records
// it in full and sampled, and compares each goroutine's events with what
// the offline sampler keeps.
package main

import (
	"fmt"
	"sync"
)

var (
	data  [4][512]int
	total int
	mu    sync.Mutex
)

func leaf(g, i int) int {
	data[g][(i*7)%512] += i
	return data[g][(i*3)%512]
}

func inner(g, i int) int {
	s := 0
	for k := 0; k < 3; k++ {
		s += leaf(g, i+k)
	}
	data[g][i%512] = s
	return s
}

func work(g int) {
	for i := 0; i < 400; i++ {
		v := inner(g, i)
		if i%10 == 0 {
			mu.Lock()
			total += v % 7
			mu.Unlock()
		}
		data[g][(i*5)%512]++
	}
}

func main() {
	var wg sync.WaitGroup
	for g := 1; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(g)
		}()
	}
	work(0)
	wg.Wait()
	fmt.Println(total)
}
