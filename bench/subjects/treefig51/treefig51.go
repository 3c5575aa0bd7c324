// Package treefig51 is the micro-benchmark of the TREE thesis's Figure
// 5.1, built to show TREE's filter at its best: the main thread forks
// num_threads threads; each, num_iters times, acquires locks L[1..k],
// increments the shared x, and releases the locks. Every access to x holds
// every lock: there is no race, and nearly every event is redundant for a
// race detector. The three parameters of Figure 5.2 are the knobs. Its
// test runs under -race.
//
//	T0: for i = 1 .. num_threads: fork(Ti)
//	Ti: for j = 1 .. num_iters:
//	        for k = 1 .. num_locks: lock L[k]
//	        x = x + 1
//	        for k = 1 .. num_locks: unlock L[k]
package treefig51

import "sync"

// Config holds Figure 5.2's three parameters.
type Config struct {
	Threads int // num_threads
	Iters   int // num_iters
	Locks   int // num_locks (at least 1)
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Threads: 4, Iters: 50, Locks: 3} }

// Run executes the program and returns x.
func Run(cfg Config) int {
	if cfg.Locks < 1 {
		cfg.Locks = 1
	}
	locks := make([]sync.Mutex, cfg.Locks)
	x := 0
	var wg sync.WaitGroup
	for i := 0; i < cfg.Threads; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < cfg.Iters; j++ {
				for k := range locks {
					locks[k].Lock()
				}
				x = x + 1 // racekit:norace id=fig51-n1 why="read after wg.Wait joined the writers"
				for k := range locks {
					locks[k].Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return x // racekit:norace id=fig51-n1 why="read after wg.Wait joined the writers"
}
