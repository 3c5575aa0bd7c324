// A race this run does not show but another interleaving would: the run
// orders the two writes of x through mu (the first goroutine unlocks before
// the second locks), yet the critical sections touch different variables,
// so running the second goroutine's section first is just as feasible, and
// then the writes race. hb and fasttrack see no race; racekit --predict
// (rdit) reports the predicted pair.
package main

import (
	"fmt"
	"sync"
	"time"
)

var (
	mu      sync.Mutex
	x, y, z int
)

func main() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		x = 1 // predicted: p
		mu.Lock()
		y = 1
		mu.Unlock()
	}()
	go func() {
		defer wg.Done()
		time.Sleep(300 * time.Millisecond) // the first goroutine goes first
		mu.Lock()
		_ = z
		mu.Unlock()
		x = 2 // predicted: p
	}()
	wg.Wait()
	fmt.Println(x, y)
}
