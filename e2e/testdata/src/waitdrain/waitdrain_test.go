// Package waitdrain holds a deadlock no lock-order cycle names, behind a
// branch a plain run does not take, and a control of the same shape that
// cannot block (racekit fuzz -deadlocks' exploration, issue 30).
package waitdrain

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var errorsSeen atomic.Int64

// collect starts n workers that send their results on an unbuffered
// channel. When a monitor has flagged an error by then, it waits for the
// workers before it drains the channel: they wait for it, it for them.
func collect(n int) int {
	results := make(chan int)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- i
		}()
	}
	if errorsSeen.Load() > 0 {
		wg.Wait() // DEADLOCK: the workers are blocked sending
	}
	sum := 0
	for i := 0; i < n; i++ {
		sum += <-results
	}
	return sum
}

// The monitor flags an error only after a delay: in a plain run collect
// has drained the channel long before.
func TestCollect(t *testing.T) {
	go func() {
		time.Sleep(20 * time.Millisecond)
		errorsSeen.Add(1)
	}()
	if collect(3) != 3 {
		t.Fatal("wrong sum")
	}
}

// collectSafe drains the channel before it waits, whatever the monitor
// says: no schedule blocks it.
func collectSafe(n int, flagged *atomic.Int64) int {
	results := make(chan int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- i
		}()
	}
	sum := 0
	for i := 0; i < n; i++ {
		sum += <-results
	}
	if flagged.Load() > 0 {
		wg.Wait()
	}
	return sum
}

// TestControl: the same monitor, a Cond handshake under its lock, and a
// collector that cannot deadlock.
func TestControl(t *testing.T) {
	var flagged atomic.Int64
	var mu sync.Mutex
	c := sync.NewCond(&mu)
	ready := false
	done := make(chan bool)
	go func() {
		mu.Lock()
		for !ready {
			c.Wait()
		}
		mu.Unlock()
		done <- true
	}()
	go func() {
		time.Sleep(20 * time.Millisecond)
		flagged.Add(1)
		mu.Lock()
		ready = true
		c.Signal()
		mu.Unlock()
	}()
	if collectSafe(3, &flagged) != 3 {
		t.Fatal("wrong sum")
	}
	<-done
}

// TestGiveUp leaves its worker blocked: the caller gives up after 10ms,
// the worker sends its result after 20ms on a channel no one receives
// from any more (a leak, in every run).
func TestGiveUp(t *testing.T) {
	result := make(chan int)
	go func() {
		time.Sleep(20 * time.Millisecond)
		result <- 42 // LEAK: blocked forever once the caller gave up
	}()
	select {
	case <-result:
	case <-time.After(10 * time.Millisecond):
	}
}
