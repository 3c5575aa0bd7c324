// Package fuzzrand is racekit fuzz's --record-random test (fuzz_test.go):
// Get counts its waits without the lock, so the race on Waits exists only
// in a run where two goroutines wanted the token at once, which Go's
// scheduler rarely arranges on a quiet machine and the controlled random
// scheduler does for some seeds.
package fuzzrand

import "sync"

// Pool hands out one token.
type Pool struct {
	mu    sync.Mutex
	busy  bool
	Waits int
}

// Get takes the token, waiting while another goroutine has it.
func (p *Pool) Get() {
	p.mu.Lock()
	for p.busy {
		p.mu.Unlock()
		p.Waits++ // WAITS: bumped without the lock
		p.mu.Lock()
	}
	p.busy = true
	p.mu.Unlock()
}

// Put gives the token back.
func (p *Pool) Put() {
	p.mu.Lock()
	p.busy = false
	p.mu.Unlock()
}
