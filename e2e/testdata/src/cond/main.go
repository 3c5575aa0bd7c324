// A queue guarded by a mutex and a condition variable.
package main

import (
	"fmt"
	"sync"
)

type queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []int
}

func main() {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	done := make(chan int)
	go func() {
		sum := 0
		for k := 0; k < 3; k++ {
			q.mu.Lock()
			for len(q.items) == 0 {
				q.cond.Wait()
			}
			sum += q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
		}
		done <- sum
	}()
	for i := 1; i <= 3; i++ {
		q.mu.Lock()
		q.items = append(q.items, i)
		q.mu.Unlock()
		q.cond.Signal()
	}
	fmt.Println(<-done)
}
