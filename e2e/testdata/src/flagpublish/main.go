// Correct code that a predictor reading values loosely flags: x is
// published under mu with a flag, and the reader uses x only after it saw
// the flag set under the same lock. In the recorded run the writer goes
// first, so the reader's read of ready saw the writer's write: every
// reordering that runs the reader's read of x runs the writer's section
// first. racekit --predict must report nothing (issue 29, item 1).
package main

import (
	"fmt"
	"sync"
	"time"
)

var (
	mu    sync.Mutex
	x     int
	ready bool
)

func main() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		mu.Lock()
		x = 1
		ready = true
		mu.Unlock()
	}()
	go func() {
		defer wg.Done()
		time.Sleep(300 * time.Millisecond) // the writer goes first
		mu.Lock()
		r := ready
		mu.Unlock()
		if r {
			fmt.Println(x)
		}
	}()
	wg.Wait()
}
