// Package stucktest has tests whose goroutines block on each other for
// good (TestStuck: the test waits on a channel that its goroutine sends
// on only after a lock the test holds; TestStuckWaitGroup: a Done
// missing; TestStuckCond: a Wait no one signals), and tests that only
// look stuck for a while: a wait a timer ends (TestTimerWakes), a
// goroutine that sleeps before it sends (TestSleeperWakes), an AfterFunc
// that unlocks (TestAfterFuncWakes), a context's deadline
// (TestDeadlineWakes), a ticker (TestTickerWakes). Run one stuck test at
// a time: the binary ends at the first.
package stucktest

import (
	"context"
	"sync"
	"testing"
	"time"
)

const wait = 1500 * time.Millisecond // three of the stall watch's periods

func TestTimerWakes(t *testing.T) {
	ch := make(chan int)
	select {
	case <-ch:
	case <-time.After(wait):
	}
}

func TestSleeperWakes(t *testing.T) {
	ch := make(chan int)
	go func() {
		time.Sleep(wait)
		ch <- 1
	}()
	<-ch
}

func TestAfterFuncWakes(t *testing.T) {
	var mu sync.Mutex
	mu.Lock()
	time.AfterFunc(wait, mu.Unlock)
	mu.Lock()
	mu.Unlock()
}

func TestStuck(t *testing.T) {
	var mu sync.Mutex
	ch := make(chan int)
	mu.Lock()
	go func() {
		mu.Lock() // blocks for good: the test holds mu
		ch <- 1
		mu.Unlock()
	}()
	<-ch // blocks for good
	mu.Unlock()
}

func TestDeadlineWakes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-ctx.Done()
	}()
	wg.Wait()
}

func TestTickerWakes(t *testing.T) {
	tk := time.NewTicker(wait / 2)
	defer tk.Stop()
	for i := 0; i < 2; i++ {
		<-tk.C
	}
}

func TestStuckWaitGroup(t *testing.T) {
	var wg sync.WaitGroup
	results := make(chan int, 2)
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			if i == 0 {
				defer wg.Done() // the other goroutine forgets its Done
			}
			results <- i
		}(i)
	}
	wg.Wait() // blocks for good
}

func TestStuckCond(t *testing.T) {
	var mu sync.Mutex
	c := sync.NewCond(&mu)
	ready := false
	go func() {
		mu.Lock()
		defer mu.Unlock()
		if ready {
			c.Signal() // never: ready is set by no one
		}
	}()
	mu.Lock()
	for !ready {
		c.Wait() // blocks for good
	}
	mu.Unlock()
}
