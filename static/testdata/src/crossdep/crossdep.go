// Package crossdep is imported by crossuse: its summaries reach crossuse
// as facts.
package crossdep

import "sync"

type Store struct {
	mu   sync.Mutex
	m    map[string]int
	hits int
}

// Put writes the map under the lock.
func (s *Store) Put(k string, v int) { // want Put:`lock \(\{\}, \{s.mu\}\), 2 accesses\n  write s.m\[\*\] \(\{s.mu\}, \{\}\) .*\n  read s.m \(\{s.mu\}, \{\}\)`
	s.mu.Lock()
	s.m[k] = v
	s.mu.Unlock()
}

// Touch counts without the lock.
func (s *Store) Touch() { // want Touch:`lock \(\{\}, \{\}\), 2 accesses\n  read s.hits \(\{\}, \{\}\).*\n  write s.hits \(\{\}, \{\}\)`
	s.hits++
}

// Lock and Unlock hand the lock to the caller: ({s.mu}, {}) and ({}, {s.mu}).
func Lock(s *Store)   { s.mu.Lock() }   // want Lock:`lock \(\{s.mu\}, \{\}\), 0 accesses`
func Unlock(s *Store) { s.mu.Unlock() } // want Unlock:`lock \(\{\}, \{s.mu\}\), 0 accesses`

// Shared is a package variable other packages write.
var Shared int
