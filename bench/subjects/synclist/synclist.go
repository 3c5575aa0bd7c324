// Package synclist is RaceFuzzer's synchronized-list case (section 5.3 and
// Table 1: Vector, ArrayList and LinkedList wrapped by
// Collections.synchronizedList): every method of the wrapper locks the
// list, but the bulk operations inherited from AbstractCollection,
// ContainsAll and Equals, iterate over the *other* list through an
// iterator obtained under that list's lock and then used without it. A
// concurrent RemoveAll or Add on the other list races with the iteration:
// the iterator reads the length, the elements and the modification count
// while they are written under a lock it does not hold, and reports a
// ConcurrentModificationException or NoSuchElementException (here: an
// error) when it notices.
package synclist

import (
	"errors"
	"runtime"
	"sync"
)

// Errors the iterator reports, as Java's iterator throws.
var (
	ErrConcurrentModification = errors.New("concurrent modification")
	ErrNoSuchElement          = errors.New("no such element")
)

// List is a synchronized list of ints. Its backing array is allocated
// once, with room for every element a run adds, so that an unlocked
// reader never sees a reallocated array (the races stay data races on
// ints, not memory-safety hazards).
type List struct {
	mu       sync.Mutex
	items    []int
	modCount int
}

// New returns an empty list with room for max elements.
func New(max int) *List { return &List{items: make([]int, 0, max)} }

// Add appends x (if there is room).
func (l *List) Add(x int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.items) == cap(l.items) {
		return
	}
	// Writes the length (and an element past the old length) under l.mu;
	// iterators of other lists' bulk operations read it without l.mu.
	l.items = append(l.items, x) // racekit:race id=sl-len-add-h,sl-len-add-n,sl-elem-add kind=race benign=false flaky
	l.modCount++                 // racekit:race id=sl-mod-add kind=race benign=false flaky
}

// RemoveAll removes every occurrence of x, compacting in place.
func (l *List) RemoveAll(x int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	j := 0
	for _, v := range l.items {
		if v != x {
			l.items[j] = v // racekit:race id=sl-elem-remove kind=race benign=false flaky
			j++
		}
	}
	if j != len(l.items) {
		l.items = l.items[:j] // racekit:race id=sl-len-rm-h,sl-len-rm-n kind=race benign=false flaky
		l.modCount++          // racekit:race id=sl-mod-remove kind=race benign=false flaky
	}
}

// Contains reports whether x is in the list.
func (l *List) Contains(x int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.containsLocked(x)
}

func (l *List) containsLocked(x int) bool {
	for _, v := range l.items {
		if v == x {
			return true
		}
	}
	return false
}

// Len is the length.
func (l *List) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.items)
}

// Iterator is AbstractList's iterator: created under the list's lock (the
// wrapper's synchronized iterator()), used without it.
type Iterator struct {
	l        *List
	pos      int
	expected int // modCount when created
}

// Iterator returns an iterator over l.
func (l *List) Iterator() *Iterator {
	l.mu.Lock()
	defer l.mu.Unlock()
	return &Iterator{l: l, expected: l.modCount}
}

// HasNext reads the length without the list's lock.
func (it *Iterator) HasNext() bool {
	return it.pos < len(it.l.items) // racekit:race id=sl-len-add-h,sl-len-rm-h kind=race benign=false flaky
}

// Next reads the modification count and an element without the lock.
func (it *Iterator) Next() (int, error) {
	if it.l.modCount != it.expected { // racekit:race id=sl-mod-add,sl-mod-remove kind=race benign=false flaky
		return 0, ErrConcurrentModification
	}
	items := it.l.items // racekit:race id=sl-len-add-n,sl-len-rm-n kind=race benign=false flaky
	if it.pos >= len(items) {
		return 0, ErrNoSuchElement
	}
	v := items[it.pos] // racekit:race id=sl-elem-remove,sl-elem-add kind=race benign=false flaky
	it.pos++
	return v, nil
}

// ContainsAll is AbstractCollection.containsAll as the synchronized
// wrapper inherits it: l is locked, o is only iterated.
func (l *List) ContainsAll(o *List) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for it := o.Iterator(); it.HasNext(); {
		v, err := it.Next()
		if err != nil {
			return false, err
		}
		if !l.containsLocked(v) {
			return false, nil
		}
	}
	return true, nil
}

// Equals is AbstractList.equals: element by element, o only iterated.
func (l *List) Equals(o *List) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	it := o.Iterator()
	for _, v := range l.items {
		if !it.HasNext() {
			return false, nil
		}
		w, err := it.Next()
		if err != nil {
			return false, err
		}
		if v != w {
			return false, nil
		}
	}
	return !it.HasNext(), nil
}

// Config sizes a run of the RaceFuzzer-style driver.
type Config struct {
	Elements int // initial elements of each list
	Rounds   int // operations per thread
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Elements: 32, Rounds: 40} }

// Result counts what the bulk operations saw.
type Result struct {
	Checks     int // ContainsAll and Equals calls
	Exceptions int // calls that reported an error
	FinalLen   int // length of the mutated list at the end
}

// Run is RaceFuzzer's test driver: two lists, one thread calling the bulk
// operations of the first on the second, one mutating the second.
func Run(cfg Config) Result {
	l1, l2 := New(cfg.Elements+cfg.Rounds), New(cfg.Elements+cfg.Rounds)
	for i := 0; i < cfg.Elements; i++ {
		l1.Add(i)
		l2.Add(i)
	}
	// Both threads start together, so that walks and mutations overlap:
	// a happens-before detector sees a race only when a mutation lands
	// inside an unlocked walk (every id here is flaky for it); a lockset
	// detector sees them in any schedule.
	start := make(chan struct{})
	var wg sync.WaitGroup
	var r Result
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		for i := 0; i < cfg.Rounds; i++ {
			runtime.Gosched() // interleave the two threads' rounds
			var err error
			if i%2 == 0 {
				_, err = l1.ContainsAll(l2)
			} else {
				_, err = l1.Equals(l2)
			}
			r.Checks++
			if err != nil {
				r.Exceptions++
			}
		}
	}()
	go func() {
		defer wg.Done()
		<-start
		for i := 0; i < cfg.Rounds; i++ {
			runtime.Gosched() // interleave the two threads' rounds
			if i%2 == 0 {
				l2.RemoveAll(i % cfg.Elements)
			} else {
				l2.Add(i % cfg.Elements)
			}
		}
	}()
	close(start)
	wg.Wait()
	r.FinalLen = l2.Len()
	return r
}
