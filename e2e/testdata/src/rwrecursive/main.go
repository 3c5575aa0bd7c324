// Command rwrecursive: sum read-locks the store and calls get, which
// read-locks it again; a writer Locks it concurrently. This run never
// deadlocks (the writer sleeps first), but a Lock that came between the
// two RLocks would wait for the first and block the second: racekit
// deadlocks reports the read-write-read.
package main

import (
	"fmt"
	"sync"
	"time"
)

type store struct {
	mu sync.RWMutex
	m  map[string]int
}

func (s *store) get(k string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.m[k]
}

func (s *store) sum(a, b string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.m[a] + s.get(b) // get read-locks again
}

func main() {
	s := &store{m: map[string]int{"a": 1, "b": 2}}
	done := make(chan bool)
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.mu.Lock()
		s.m["c"] = 3
		s.mu.Unlock()
		done <- true
	}()
	fmt.Println(s.sum("a", "b"))
	<-done
}
