// Package manager is a Go version of ConTest's Manager (PECAN Table 1:
// 212 lines, 5 threads, 3 shared variables): a resource manager hands out
// resources from a locked free list. Its fast path checks the available
// count without the lock (rechecked under it: benign), its allocation
// statistics are kept without the lock (lost updates: a real bug), and a
// monitor reads both counters unlocked.
package manager

import (
	"sync"
)

// Config sizes a run.
type Config struct {
	Resources  int // resources in the pool
	Clients    int // client goroutines
	Iterations int // allocate/free rounds per client
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Resources: 3, Clients: 3, Iterations: 30} }

// Manager owns the resources.
type Manager struct {
	mu        sync.Mutex
	free      []int // guarded by mu
	available int   // written under mu; read without it by the fast path
	allocated int   // allocation count, kept without mu
}

// New returns a manager of n resources.
func New(n int) *Manager {
	m := &Manager{available: n}
	for i := 0; i < n; i++ {
		m.free = append(m.free, i)
	}
	return m
}

// Alloc takes a resource, if one is free.
func (m *Manager) Alloc() (int, bool) {
	// Fast path without the lock: a stale value only sends the caller
	// to the locked recheck or away empty-handed, which it tolerates.
	if m.available == 0 { // racekit:race id=mgr-fast-alloc,mgr-fast-free kind=race benign=true
		return -1, false
	}
	m.mu.Lock()
	if len(m.free) == 0 {
		m.mu.Unlock()
		return -1, false
	}
	r := m.free[len(m.free)-1]
	m.free = m.free[:len(m.free)-1]
	m.available-- // racekit:race id=mgr-fast-alloc kind=race benign=true racekit:race id=mgr-mon-alloc kind=race benign=false
	m.mu.Unlock()
	// Counted after unlocking: clients lose each other's increments. (Flaky
	// for happens-before: the next Free/Alloc lock chain usually orders two
	// clients' increments; only a client that locks between another's unlock
	// and its increment shows the race.)
	m.allocated++ // racekit:race id=mgr-count kind=race benign=false self flaky racekit:race id=mgr-mon-count kind=race benign=false
	return r, true
}

// Free returns a resource.
func (m *Manager) Free(r int) {
	m.mu.Lock()
	m.free = append(m.free, r)
	m.available++ // racekit:race id=mgr-fast-free kind=race benign=true racekit:race id=mgr-mon-free kind=race benign=false
	m.mu.Unlock()
}

// Stats is the monitor's view: both counters, read without the lock, so
// the pair may be inconsistent.
func (m *Manager) Stats() (available, allocated int) {
	available = m.available // racekit:race id=mgr-mon-alloc,mgr-mon-free kind=race benign=false
	allocated = m.allocated // racekit:race id=mgr-mon-count kind=race benign=false
	return
}

// Result summarizes a run.
type Result struct {
	Granted   int // allocations the clients got, as they counted them
	Allocated int // the manager's count (lost updates make it smaller)
	Available int // free resources at the end: all of them
	Samples   int // monitor samples taken
}

// Run lets the clients allocate and free while the monitor samples.
func Run(cfg Config) Result {
	m := New(cfg.Resources)
	var wg sync.WaitGroup
	granted := make([]int, cfg.Clients)
	for c := 0; c < cfg.Clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < cfg.Iterations; i++ {
				if r, ok := m.Alloc(); ok {
					granted[c]++
					m.Free(r)
				}
			}
		}(c)
	}
	samples := make(chan int)
	go func() {
		n := 0
		for i := 0; i < cfg.Iterations; i++ {
			m.Stats()
			n++
		}
		samples <- n
	}()
	wg.Wait()
	r := Result{Samples: <-samples}
	for _, g := range granted {
		r.Granted += g
	}
	r.Available, r.Allocated = m.available, m.allocated
	return r
}
