// A condition variable whose L is a struct that embeds its sync.Mutex (a
// server locked as a whole, alicebob/miniredis's): Cond.Wait unlocks and
// locks the embedded mutex through the promoted methods. The waiter reads
// the counter after each wakeup, then waits again; the incrementer's next
// write comes after that Wait's unlock. No race.
package main

import (
	"fmt"
	"sync"
	"time"
)

type server struct {
	sync.Mutex
	n      int
	signal *sync.Cond
}

func main() {
	s := &server{}
	s.signal = sync.NewCond(s)
	done := make(chan int)
	go func() {
		seen := 0
		s.Lock()
		for seen < 5 {
			for s.n == seen {
				s.signal.Wait()
			}
			seen = s.n
		}
		s.Unlock()
		done <- seen
	}()
	for i := 0; i < 5; i++ {
		time.Sleep(2 * time.Millisecond) // the waiter reads and waits again meanwhile
		s.Lock()
		s.n++
		s.Unlock()
		s.signal.Broadcast()
	}
	fmt.Println(<-done)
}
