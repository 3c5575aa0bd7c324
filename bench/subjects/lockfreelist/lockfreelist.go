// Package lockfreelist is a lock-free sorted linked list (Harris's list
// with Michael's physical deletion), the LFList micro-benchmark of
// LiteRace (Table 5: "an implementation of a lock-free linked list"),
// which stresses a tool with synchronization: every step of every
// operation is an atomic load or compare-and-swap. Each node's successor
// is an immutable (node, marked) pair behind an atomic pointer; a node is
// deleted logically by marking its successor, then unlinked by a CAS on
// its predecessor.
//
// Node keys are plain fields written before the node is published by a
// CAS and read by traversals after atomic loads: no lock anywhere, so a
// lockset detector flags them; the atomics order them (norace).
//
// The bug: the list's size is kept with plain increments and decrements
// (it should be atomic.Int64). Concurrent updates lose counts and Len
// reads it unsynchronized.
package lockfreelist

import (
	"math"
	"sync"
	"sync/atomic"
)

// Config sizes a run.
type Config struct {
	Goroutines int
	Ops        int // operations per goroutine
	Keys       int // key space
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Goroutines: 3, Ops: 50, Keys: 16} }

type node struct {
	key  int
	next atomic.Pointer[ref]
}

// ref is an immutable successor pointer with Harris's deletion mark.
type ref struct {
	node   *node
	marked bool
}

// List is a set of ints.
type List struct {
	head *node // sentinel, key -inf
	size int   // BUG: plain, updated by concurrent Insert/Delete
}

// New returns an empty list.
func New() *List {
	h := &node{key: math.MinInt}
	h.next.Store(&ref{})
	return &List{head: h}
}

// find returns the first unmarked node with key >= k (nil at the end),
// its predecessor and the predecessor's successor ref, unlinking marked
// nodes on the way.
func (l *List) find(k int) (pred *node, predRef *ref, curr *node) {
retry:
	for {
		pred = l.head
		predRef = pred.next.Load()
		curr = predRef.node
		for curr != nil {
			currRef := curr.next.Load()
			if currRef.marked {
				nr := &ref{node: currRef.node}
				if !pred.next.CompareAndSwap(predRef, nr) {
					continue retry
				}
				predRef, curr = nr, nr.node
				continue
			}
			// The key was written before the CAS that published the
			// node; this read follows an atomic load of the pointer.
			if curr.key >= k { // racekit:norace id=lf-key why="a node's key is written before the CAS that publishes it and read after an atomic load"
				return pred, predRef, curr
			}
			pred, predRef, curr = curr, currRef, currRef.node
		}
		return pred, predRef, nil
	}
}

// Insert adds k; false if present.
func (l *List) Insert(k int) bool {
	for {
		pred, predRef, curr := l.find(k)
		if curr != nil && curr.key == k { // racekit:norace id=lf-key why="see find"
			return false
		}
		n := new(node)
		n.key = k // racekit:norace id=lf-key why="see find"
		n.next.Store(&ref{node: curr})
		if pred.next.CompareAndSwap(predRef, &ref{node: n}) {
			// Plain read-modify-write from every inserter and deleter.
			// (Flaky for happens-before: racekit's runtime records each
			// atomic operation as ordered with every earlier one on the
			// same word, loads included, so the next traversal from the
			// head usually orders two updates.)
			l.size++ // racekit:race id=lf-ins kind=race benign=false self flaky racekit:race id=lf-insdel,lf-len-ins kind=race benign=false flaky
			return true
		}
	}
}

// Delete removes k; false if absent.
func (l *List) Delete(k int) bool {
	for {
		pred, predRef, curr := l.find(k)
		if curr == nil || curr.key != k { // racekit:norace id=lf-key why="see find"
			return false
		}
		cr := curr.next.Load()
		if cr.marked {
			continue
		}
		if !curr.next.CompareAndSwap(cr, &ref{node: cr.node, marked: true}) {
			continue
		}
		pred.next.CompareAndSwap(predRef, &ref{node: cr.node}) // unlink; find retries if this fails
		l.size--                                               // racekit:race id=lf-del kind=race benign=false self flaky racekit:race id=lf-insdel,lf-len-del kind=race benign=false flaky
		return true
	}
}

// Contains is wait-free.
func (l *List) Contains(k int) bool {
	curr := l.head.next.Load().node
	for curr != nil && curr.key < k { // racekit:norace id=lf-key why="see find"
		curr = curr.next.Load().node
	}
	return curr != nil && curr.key == k && !curr.next.Load().marked
}

// Len reads the plain size without synchronization.
func (l *List) Len() int {
	return l.size // racekit:race id=lf-len-ins,lf-len-del kind=race benign=false flaky
}

// Keys returns the keys of the unmarked nodes, in order.
func (l *List) Keys() []int {
	var ks []int
	for r := l.head.next.Load(); r.node != nil; {
		nr := r.node.next.Load()
		if !nr.marked {
			ks = append(ks, r.node.key)
		}
		r = nr
	}
	return ks
}

// Result summarizes a run.
type Result struct {
	Keys     int  // keys in the list at the end
	Len      int  // the racy size counter at the end
	Sorted   bool // keys strictly increasing
	Inserted int  // successful inserts minus successful deletes, as counted by the callers
	Samples  int  // Len samples by the monitor
}

// Run lets goroutines insert, delete and look up keys while a monitor
// samples Len.
func Run(cfg Config) Result {
	l := New()
	var wg sync.WaitGroup
	net := make([]int, cfg.Goroutines)
	for g := 0; g < cfg.Goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			x := uint64(g)*0x9E3779B97F4A7C15 + 11
			for i := 0; i < cfg.Ops; i++ {
				x = x*6364136223846793005 + 1442695040888963407
				k := int((x >> 33) % uint64(cfg.Keys))
				switch (x >> 20) % 3 {
				case 0:
					if l.Insert(k) {
						net[g]++
					}
				case 1:
					if l.Delete(k) {
						net[g]--
					}
				default:
					l.Contains(k)
				}
			}
		}(g)
	}
	samples := make(chan int)
	go func() {
		n := 0
		for i := 0; i < cfg.Ops; i++ {
			l.Len()
			n++
		}
		samples <- n
	}()
	wg.Wait()
	r := Result{Samples: <-samples, Len: l.size}
	ks := l.Keys()
	r.Keys = len(ks)
	r.Sorted = true
	for i := 1; i < len(ks); i++ {
		if ks[i] <= ks[i-1] {
			r.Sorted = false
		}
	}
	for _, n := range net {
		r.Inserted += n
	}
	return r
}
