// Race-free churn of objects the program does not allocate by name
// (issue 28, memory reuse): each worker, alone, calls a function whose
// parameter a closure captures (a heap variable created by the call),
// starts goroutines over per-iteration loop variables, fills a slice
// literal, and makes, uses and closes channels of its own; it then drops
// them all. The garbage collector hands their memory out again, to other
// workers' parameters, loop variables, literals and channels, and the
// workers never synchronize with each other: a detector that sees none of
// these objects created relates the accesses of a dead one and a live one
// at one address. No race.
package main

import (
	"fmt"
	"runtime"
	"sync"
)

const (
	workers = 4
	rounds  = 150
)

// bump's parameter is captured by the closure it keeps: the variable
// lives in the heap, one per call.
func bump(n int, keep *[]func() int) {
	*keep = append(*keep, func() int { n++; return n })
}

func worker(id int, out *int) {
	var keep []func() int
	total := 0
	for r := 0; r < rounds; r++ {
		keep = keep[:0]
		for i := 0; i < 4; i++ {
			bump(id*1000+r+i, &keep)
		}
		for _, f := range keep {
			total += f()
		}
		vals := []int{r, id, 3, 4, 5, 6}
		for i := range vals {
			vals[i]++
			total += vals[i]
		}
		done := make(chan int)
		for k := 0; k < 2; k++ {
			go func() { done <- k }()
		}
		total += <-done + <-done
		close(done)
		if r%25 == 0 {
			runtime.GC()
		}
	}
	*out = total
}

func main() {
	outs := make([]int, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker(w, &outs[w])
		}()
	}
	wg.Wait()
	sum := 0
	for _, v := range outs {
		sum += v
	}
	fmt.Println(sum > 0)
}
