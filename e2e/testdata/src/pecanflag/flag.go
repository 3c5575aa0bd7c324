// Package pecanflag publishes data through a flag that a mutex protects:
// correctly synchronized, but PECAN's hybrid model (no order through
// locks, values ignored) predicts a race between the write of data (1)
// and its read (2) in the other order. No run can read data before it is
// written: the consumer only reads it once it saw the flag set, so
// hatching the prediction departs from the clip and prunes it.
package pecanflag

import (
	"runtime"
	"sync"
)

var (
	data  int
	ready bool
	mu    sync.Mutex
)

// Produce writes data, then sets the flag.
func Produce() {
	data = 42 // 1
	mu.Lock()
	ready = true
	mu.Unlock()
}

// Consume waits for the flag, then reads data.
func Consume() int {
	for {
		mu.Lock()
		r := ready
		mu.Unlock()
		if r {
			break
		}
		runtime.Gosched()
	}
	return data // 2
}

// Run runs both.
func Run() int {
	data, ready = 0, false
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); Produce() }()
	v := Consume()
	wg.Wait()
	return v
}
