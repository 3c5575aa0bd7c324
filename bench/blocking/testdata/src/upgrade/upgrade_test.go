// Package upgrade: resource deadlock, a read lock "upgraded" to a write
// lock. Put read-locks the map to look the key up and, when the key is
// missing, write-locks it while still holding the read lock: Lock waits
// for the goroutine's own RLock. Only a missing key takes that path, and
// the test's cleaner removes the key only after a delay.
//
// truth: deadlock
package upgrade

import (
	"sync"
	"testing"
	"time"
)

type registry struct {
	mu sync.RWMutex
	m  map[string]int
}

func (r *registry) ensure(k string) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if _, ok := r.m[k]; !ok {
		r.mu.Lock() // waits for the RLock above
		r.m[k] = 0
		r.mu.Unlock()
	}
}

func TestEnsure(t *testing.T) {
	r := &registry{m: map[string]int{"a": 1}}
	keys := make(chan string, 1)
	keys <- "a"
	go func() {
		time.Sleep(20 * time.Millisecond)
		r.mu.Lock()
		delete(r.m, "a")
		r.mu.Unlock()
	}()
	r.ensure(<-keys)
	time.Sleep(30 * time.Millisecond)
}
