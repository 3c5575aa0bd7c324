// Package pecanuser is a torn read of a two-field value: Set writes lo and
// hi together under the lock, Get reads them without it, so a Get between
// Set's two writes returns a lo and a hi that were never set together (a
// range with lo > hi). No built-in pattern names this shape with two
// goroutines' regions on two variables in this order the way the user file
// does (torn.patterns: torn T=t1-t2-t2-t1 SV=s1-s1-s2-s2 AR=u1-u2-u2-u1
// AT=r-w-w-r); Get is an atomic region only when racekit is told so
// (-atomic-funcs), since it is not marked //racekit:atomic.
package pecanuser

import "sync"

// Range is an interval that Set keeps ordered.
type Range struct {
	mu     sync.Mutex
	lo, hi int
}

// Set replaces the interval.
func (r *Range) Set(lo, hi int) {
	r.mu.Lock()
	r.lo = lo // 1
	r.hi = hi // 2
	r.mu.Unlock()
}

// Get reads the interval without the lock.
func (r *Range) Get() (int, int) {
	lo := r.lo // 3
	hi := r.hi // 4
	return lo, hi
}

// Run moves the interval from [0,1] to [10,11] while a reader reads it,
// and returns what the reader saw: [0,1] or [10,11] when Get and Set do
// not overlap.
func Run() (lo, hi int) {
	r := &Range{lo: 0, hi: 1}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		lo, hi = r.Get()
	}()
	go func() {
		defer wg.Done()
		r.Set(10, 11)
	}()
	wg.Wait()
	return lo, hi
}
