// Package chanwg: channel and WaitGroup. Workers send their results on an
// unbuffered channel and call Done; the collector waits for them all before
// it drains the channel when a monitor has flagged an error by then. On
// that path the workers wait for the collector and the collector for them;
// the monitor flags one only after a delay.
//
// truth: deadlock
package chanwg

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var errorsSeen atomic.Int64

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
		wg.Wait() // the workers are blocked sending: never returns
	}
	sum := 0
	for i := 0; i < n; i++ {
		sum += <-results
	}
	return sum
}

func TestCollect(t *testing.T) {
	go func() {
		time.Sleep(20 * time.Millisecond)
		errorsSeen.Add(1)
	}()
	if collect(3) != 3 {
		t.Fatal("wrong sum")
	}
}
