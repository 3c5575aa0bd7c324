// Package mergesort is a Go version of ConTest's MergeSort (PECAN Table 1:
// 456 lines, 6 threads, 2 shared variables): a parallel merge sort that
// limits its threads with a shared counter, checked without the lock that
// guards its updates (the limit can be exceeded), and whose merges share
// one scratch buffer indexed from zero instead of from the run's offset,
// so two merges running at once overwrite each other's scratch (the sort
// can come out wrong).
package mergesort

import (
	"sync"
)

// Config sizes a run.
type Config struct {
	Size       int   // elements to sort
	MaxThreads int   // extra goroutines the sorter may start
	Seed       int64 // input permutation
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Size: 64, MaxThreads: 5, Seed: 1} }

// Sorter is the shared state of one sort.
type Sorter struct {
	mu      sync.Mutex
	active  int   // extra goroutines running: updated under mu, checked without it
	max     int   // the limit
	started int   // goroutines started in total, under mu
	scratch []int // shared merge buffer: the bug is that merges index it from 0
}

// Sort sorts a in place.
func (s *Sorter) Sort(a []int) {
	s.scratch = make([]int, len(a))
	s.sort(a)
}

func (s *Sorter) sort(a []int) {
	if len(a) < 2 {
		return
	}
	mid := len(a) / 2
	// The limit check reads active without the lock; another goroutine
	// may be starting or finishing one meanwhile, so more than max run.
	if s.active < s.max { // racekit:race id=ms-limit-inc,ms-limit-dec kind=race benign=false
		s.mu.Lock()
		s.active++  // racekit:race id=ms-limit-inc kind=race benign=false
		s.started++ // racekit:norace id=ms-n1 why="read after Sort returned: every sorting goroutine was joined through its done channel"
		s.mu.Unlock()
		done := make(chan struct{})
		go func() {
			s.sort(a[:mid])
			s.mu.Lock()
			s.active-- // racekit:race id=ms-limit-dec kind=race benign=false
			s.mu.Unlock()
			close(done)
		}()
		s.sort(a[mid:])
		<-done
	} else {
		s.sort(a[:mid])
		s.sort(a[mid:])
	}
	s.merge(a, mid)
}

// merge merges the sorted halves a[:mid] and a[mid:] through the scratch
// buffer. It uses scratch[0:len(a)], the same cells for every run of the
// same length, where each run should use its own offset: two merges in
// different goroutines write and read the same cells. ms-scratch is one
// race over five lines: any two of the four stores (or one store in two
// goroutines) conflict, and so does each store with the copy back; which
// pairs a run shows depends on the data.
func (s *Sorter) merge(a []int, mid int) {
	tmp := s.scratch[:len(a)]
	i, j, k := 0, mid, 0
	for i < mid && j < len(a) {
		if a[i] <= a[j] {
			tmp[k] = a[i] // racekit:race id=ms-scratch kind=race benign=false self
			i++
		} else {
			tmp[k] = a[j] // racekit:race id=ms-scratch kind=race benign=false self
			j++
		}
		k++
	}
	for ; i < mid; i, k = i+1, k+1 {
		tmp[k] = a[i] // racekit:race id=ms-scratch kind=race benign=false self
	}
	for ; j < len(a); j, k = j+1, k+1 {
		tmp[k] = a[j] // racekit:race id=ms-scratch kind=race benign=false self
	}
	// Reads the cells another merge may be writing.
	copy(a, tmp) // racekit:race id=ms-scratch kind=race benign=false racekit:norace id=ms-n2 why="see Run"
}

// Result is the sorted slice and how many goroutines sorted it.
type Result struct {
	Sorted  []int
	Started int
}

// Run sorts a pseudo-random permutation of 0..Size-1.
func Run(cfg Config) Result {
	a := make([]int, cfg.Size)
	for i := range a {
		a[i] = i
	}
	x := uint64(cfg.Seed)*2862933555777941757 + 3037000493
	for i := len(a) - 1; i > 0; i-- {
		x = x*6364136223846793005 + 1442695040888963407
		j := int((x >> 33) % uint64(i+1))
		a[i], a[j] = a[j], a[i] // racekit:norace id=ms-n2 why="the shuffle happens before the go statements of the sort"
	}
	s := &Sorter{max: cfg.MaxThreads}
	s.Sort(a)
	return Result{Sorted: a, Started: s.started} // racekit:norace id=ms-n1 why="see sort"
}
