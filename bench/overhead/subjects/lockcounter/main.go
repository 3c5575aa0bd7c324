// Command lockcounter is a synchronization-heavy micro-benchmark (as
// LiteRace's LKRHash, §5.4): four goroutines increment counters of a
// striped table, each increment under its stripe's mutex, with almost no
// work between lock operations. Race-free.
package main

import (
	"flag"
	"fmt"
	"sync"
)

type stripe struct {
	mu sync.Mutex
	n  [8]int
}

var table [16]stripe

func add(key int) {
	s := &table[key%len(table)]
	s.mu.Lock()
	s.n[key%8]++
	s.mu.Unlock()
}

func main() {
	ops := flag.Int("n", 500_000, "increments per goroutine")
	flag.Parse()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < *ops; i++ {
				add(g*7919 + i)
			}
		}()
	}
	wg.Wait()
	total := 0
	for i := range table {
		for _, v := range table[i].n {
			total += v
		}
	}
	fmt.Println(total)
}
