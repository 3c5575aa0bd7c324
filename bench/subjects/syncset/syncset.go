// Package syncset is RaceFuzzer's synchronized-set case (section 5.3 and
// Table 1: HashSet and TreeSet wrapped by Collections.synchronizedSet): a
// sorted set whose methods lock it, but whose bulk operations AddAll and
// ContainsAll, inherited from AbstractCollection, walk the *other* set
// without its lock: they ask its size under its lock and then read its
// elements one by one without it. A concurrent Add or Remove on the other
// set shifts the elements under the walker: data races on the elements
// and the length, and elements skipped or seen twice.
package syncset

import (
	"runtime"
	"sort"
	"sync"
)

// Set is a synchronized sorted set of ints, backed by a slice allocated
// once with room for every element (readers never see a reallocation).
type Set struct {
	mu    sync.Mutex
	items []int // sorted
}

// New returns an empty set with room for max elements.
func New(max int) *Set { return &Set{items: make([]int, 0, max)} }

// Add inserts x, shifting the larger elements right.
func (s *Set) Add(x int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addLocked(x)
}

func (s *Set) addLocked(x int) bool {
	i := sort.SearchInts(s.items, x)
	if i < len(s.items) && s.items[i] == x || len(s.items) == cap(s.items) {
		return false
	}
	n := len(s.items)
	// The length and the shifted elements change under s.mu only.
	s.items = s.items[:n+1]           // racekit:race id=ss-len-add kind=race benign=false flaky
	copy(s.items[i+1:], s.items[i:n]) // racekit:race id=ss-elem-shift kind=race benign=false flaky
	s.items[i] = x                    // racekit:race id=ss-elem-insert kind=race benign=false flaky
	return true
}

// Remove deletes x, shifting the larger elements left.
func (s *Set) Remove(x int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.SearchInts(s.items, x)
	if i == len(s.items) || s.items[i] != x {
		return false
	}
	copy(s.items[i:], s.items[i+1:])   // racekit:race id=ss-elem-remove kind=race benign=false flaky
	s.items = s.items[:len(s.items)-1] // racekit:race id=ss-len-remove kind=race benign=false flaky
	return true
}

// Contains reports whether x is in the set.
func (s *Set) Contains(x int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.containsLocked(x)
}

func (s *Set) containsLocked(x int) bool {
	i := sort.SearchInts(s.items, x)
	return i < len(s.items) && s.items[i] == x
}

// Size is the number of elements, under the lock.
func (s *Set) Size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.items)
}

// at is the inherited iterator's next(): an element read without the
// set's lock (the wrapper does not override the bulk operations).
func (s *Set) at(i int) (int, bool) {
	items := s.items // racekit:race id=ss-len-add,ss-len-remove kind=race benign=false flaky
	if i >= len(items) {
		return 0, false
	}
	return items[i], true // racekit:race id=ss-elem-shift,ss-elem-insert,ss-elem-remove kind=race benign=false flaky
}

// AddAll adds every element of o: s is locked, o is only walked.
func (s *Set) AddAll(o *Set) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	added := 0
	for i, n := 0, o.Size(); i < n; i++ {
		v, ok := o.at(i)
		if !ok {
			break // NoSuchElementException
		}
		if s.addLocked(v) {
			added++
		}
	}
	return added
}

// ContainsAll reports whether every element of o is in s.
func (s *Set) ContainsAll(o *Set) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := 0, o.Size(); i < n; i++ {
		v, ok := o.at(i)
		if !ok || !s.containsLocked(v) {
			return false
		}
	}
	return true
}

// Elements returns a copy of the elements.
func (s *Set) Elements() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.items...)
}

// Config sizes a run.
type Config struct {
	Elements int
	Rounds   int
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Elements: 32, Rounds: 40} }

// Result is what the driver saw.
type Result struct {
	Added      int  // elements AddAll added to s1
	Contained  int  // ContainsAll calls that said yes
	Sorted     bool // s1 is still sorted and duplicate-free
	FinalS1Len int
}

// Run is the RaceFuzzer-style driver: one thread calls s1's bulk
// operations on s2 while another adds to and removes from s2.
func Run(cfg Config) Result {
	max := 2*cfg.Elements + cfg.Rounds
	s1, s2 := New(max), New(max)
	for i := 0; i < cfg.Elements; i++ {
		s2.Add(2 * i)
	}
	var r Result
	// Both threads start together, so that walks and mutations overlap:
	// a happens-before detector sees a race only when a mutation lands
	// inside an unlocked walk (every id here is flaky for it); a lockset
	// detector sees them in any schedule.
	start := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		for i := 0; i < cfg.Rounds; i++ {
			runtime.Gosched() // interleave the two threads' rounds
			if i%2 == 0 {
				r.Added += s1.AddAll(s2)
			} else if s1.ContainsAll(s2) {
				r.Contained++
			}
		}
	}()
	go func() {
		defer wg.Done()
		<-start
		for i := 0; i < cfg.Rounds; i++ {
			runtime.Gosched() // interleave the two threads' rounds
			if i%2 == 0 {
				s2.Remove(2 * (i % cfg.Elements))
			} else {
				s2.Add(2*(i%cfg.Elements) + 1)
			}
		}
	}()
	close(start)
	wg.Wait()
	els := s1.Elements()
	r.FinalS1Len = len(els)
	r.Sorted = sort.IntsAreSorted(els)
	for i := 1; i < len(els); i++ {
		if els[i] == els[i-1] {
			r.Sorted = false
		}
	}
	return r
}
