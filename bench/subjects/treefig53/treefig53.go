// Package treefig53 is the micro-benchmark of the TREE thesis's Figure
// 5.3, built to show TREE's weak side: the main thread increments the
// shared x inside the loop that forks the threads, and each thread
// increments x holding only its own private array of locks, so no
// concurrency context repeats. The three parameters of Figure 5.2 are the
// knobs.
//
//	T0: for i = 1 .. num_threads: x = x + 1; fork(Ti)
//	Ti: for j = 1 .. num_iters:
//	        for k = 1 .. num_locks: lock Li[k]
//	        x = x + 1
//	        for k = 1 .. num_locks: unlock Li[k]
//
// The thesis counts "a single race ... between the write of x in T0 and
// any Ti" (one racy variable). By distinct site pairs there are two: T0's
// increment after fork(Ti) races with Ti's, and the threads' increments
// race with each other, since private locks exclude nothing.
package treefig53

import "sync"

// Config holds Figure 5.2's three parameters.
type Config struct {
	Threads int // num_threads
	Iters   int // num_iters
	Locks   int // num_locks (at least 1)
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Threads: 4, Iters: 30, Locks: 3} }

// Run executes the program and returns x (increments may be lost).
func Run(cfg Config) int {
	if cfg.Locks < 1 {
		cfg.Locks = 1
	}
	x := 0
	var wg sync.WaitGroup
	for i := 0; i < cfg.Threads; i++ {
		// After fork(T1), T0's increments race with the running threads'.
		x = x + 1 // racekit:race id=fig53-main kind=race benign=false
		private := make([]sync.Mutex, cfg.Locks)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < cfg.Iters; j++ {
				for k := range private {
					private[k].Lock()
				}
				// Each thread holds only its own locks: no common lock
				// with T0 or with any other thread.
				x = x + 1 // racekit:race id=fig53-main kind=race benign=false racekit:race id=fig53-threads kind=race benign=false self
				for k := range private {
					private[k].Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return x
}
