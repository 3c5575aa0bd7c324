// Package rwmap is the Go bug of writing under a read lock: a registry
// guards its map with a sync.RWMutex, and Lookup, which holds only the
// read lock, also counts lookups, bumps the entry's hit count, and inserts
// a missing entry into the map. Read locks exclude writers, not other
// readers, so each of those writes races with the other readers. (A
// concurrent map write and read can also crash the program; the driver
// keeps the one insert apart in time from the other readers, which does
// not order them, so the race is still there for a detector.)
package rwmap

import (
	"strconv"
	"sync"
	"time"
)

// Config sizes a run.
type Config struct {
	Readers int
	Lookups int // per reader
	Keys    int // pre-registered keys
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Readers: 3, Lookups: 20, Keys: 6} }

// Entry is a registered name.
type Entry struct {
	Name string
	Hits int // bumped under the read lock
}

// Registry maps names to entries.
type Registry struct {
	mu      sync.RWMutex
	m       map[string]*Entry
	lookups int // counted under the read lock
}

// New returns a registry with n entries k0..k(n-1).
func New(n int) *Registry {
	r := &Registry{m: map[string]*Entry{}}
	for i := 0; i < n; i++ {
		r.Register("k" + strconv.Itoa(i))
	}
	return r
}

// Register adds a name under the write lock: correct.
func (r *Registry) Register(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[name] = &Entry{Name: name} // racekit:norace id=rw-n1 why="Register holds the write lock, which excludes Lookup's read lock"
}

// Lookup finds (or creates) an entry under the read lock only.
func (r *Registry) Lookup(name string) *Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	// BUG: a write under the read lock; every reader does it.
	r.lookups++        // racekit:race id=rw-count kind=race benign=false self racekit:race id=rw-stats kind=race benign=false
	e, ok := r.m[name] // racekit:race id=rw-insert kind=race benign=false
	if !ok {
		e = &Entry{Name: name}
		// BUG: a map write under the read lock, beside other readers.
		r.m[name] = e // racekit:race id=rw-insert kind=race benign=false racekit:norace id=rw-n1 why="see Register"
	}
	// BUG: the entry is shared by every reader of the same name.
	e.Hits++ // racekit:race id=rw-hits kind=race benign=false self
	return e
}

// Stats reads the lookup count under the read lock.
func (r *Registry) Stats() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.lookups // racekit:race id=rw-stats kind=race benign=false
}

// Result summarizes a run.
type Result struct {
	Lookups int // the registry's racy count
	Hits    int // sum of the entries' racy hit counts
	Done    int // lookups actually made
	Entries int
	Samples int
}

// Run: reader 0 first looks up a name that is not registered (inserting it
// under the read lock), the others start looking up registered names a
// little later; a monitor reads Stats.
func Run(cfg Config) Result {
	r := New(cfg.Keys)
	var wg sync.WaitGroup
	for g := 0; g < cfg.Readers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			if g == 0 {
				r.Lookup("new")
			} else {
				time.Sleep(2 * time.Millisecond) // keeps the insert apart in time only
			}
			for i := 0; i < cfg.Lookups; i++ {
				r.Lookup("k" + strconv.Itoa((g+i)%cfg.Keys))
			}
		}(g)
	}
	samples := make(chan int)
	go func() {
		n := 0
		for i := 0; i < cfg.Lookups; i++ {
			r.Stats()
			n++
		}
		samples <- n
	}()
	wg.Wait()
	res := Result{Lookups: r.lookups, Entries: len(r.m), Done: cfg.Readers*cfg.Lookups + 1, Samples: <-samples}
	for _, e := range r.m {
		res.Hits += e.Hits
	}
	return res
}
