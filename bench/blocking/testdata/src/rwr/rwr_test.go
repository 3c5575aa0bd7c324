// Package rwr: Go's RWMutex read-write-read. Total read-locks the store
// and calls get, which read-locks it again; a writer's Lock that arrives
// between the two RLocks makes the second wait for the writer, which waits
// for the first (sync.RWMutex forbids recursive read locking).
//
// truth: deadlock (read-write-read)
package rwr

import (
	"sync"
	"testing"
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

func (s *store) total(keys ...string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, k := range keys {
		n += s.get(k)
	}
	return n
}

func (s *store) set(k string, v int) {
	s.mu.Lock()
	s.m[k] = v
	s.mu.Unlock()
}

func TestTotal(t *testing.T) {
	s := &store{m: map[string]int{"a": 1, "b": 2}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		s.set("a", 3)
	}()
	if s.total("a", "b") < 3 {
		t.Fatal("total")
	}
	wg.Wait()
}
