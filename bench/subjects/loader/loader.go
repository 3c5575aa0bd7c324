// Package loader is a Go version of ConTest's Loader (PECAN Table 1:
// 148 lines, 4 threads, 1 shared variable): two loader threads append
// items to a shared store under its lock but advance the shared "loaded"
// count without it, and a consumer polls that count, without the lock, to
// decide when enough is loaded. The count is the one shared variable every
// race is on.
package loader

import (
	"runtime"
	"sync"
)

// Config sizes a run.
type Config struct {
	Loaders int // loader goroutines
	Items   int // items each loader loads
	Need    int // items the consumer waits for
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Loaders: 2, Items: 30, Need: 40} }

// Store is what the loaders fill.
type Store struct {
	mu    sync.Mutex
	items []int
	count int // items loaded: advanced without mu
}

// load appends items under the lock, then bumps the count without it.
func (s *Store) load(base, n int) {
	for i := 0; i < n; i++ {
		s.mu.Lock()
		s.items = append(s.items, base+i) // racekit:norace id=ld-n1 why="read after wg.Wait and the consumer's send"
		s.mu.Unlock()
		// Read-modify-write by both loaders with no lock: increments are
		// lost, and the consumer reads the count meanwhile.
		s.count++ // racekit:race id=ld-inc kind=race benign=false self racekit:race id=ld-poll kind=race benign=false
	}
}

// consume waits until need items are counted (or the loaders are done,
// since lost increments may keep the count short forever), then sums the
// first need items.
func (s *Store) consume(need int, done <-chan struct{}) (sum, seen int) {
	for {
		// Polls the count without the lock.
		if s.count >= need { // racekit:race id=ld-poll kind=race benign=false
			break
		}
		select {
		case <-done:
			goto out
		default:
			runtime.Gosched()
		}
	}
out:
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < need && i < len(s.items); i++ {
		sum += s.items[i] // racekit:norace id=ld-n2 why="read after wg.Wait and the consumer's send"
		seen++
	}
	return sum, seen
}

// Result is what the consumer saw and what the store holds.
type Result struct {
	Seen   int // items the consumer summed
	Count  int // the final count (lost increments make it smaller)
	Loaded int // items actually in the store
}

// Run starts the loaders and the consumer from the main goroutine.
func Run(cfg Config) Result {
	s := &Store{}
	var wg sync.WaitGroup
	for l := 0; l < cfg.Loaders; l++ {
		wg.Add(1)
		go func(l int) {
			defer wg.Done()
			s.load(l*1000, cfg.Items)
		}(l)
	}
	done := make(chan struct{})
	res := make(chan int)
	go func() {
		_, seen := s.consume(cfg.Need, done)
		res <- seen
	}()
	wg.Wait()
	close(done)
	seen := <-res
	return Result{Seen: seen, Count: s.count, Loaded: len(s.items)} // racekit:norace id=ld-n1,ld-n2 why="see load"
}
