// Package lockhash is a lock-based hash table in the spirit of LiteRace's
// LKRHash micro-benchmark (LiteRace Table 5: "an efficient hash table
// implementation that uses a combination of lock-free techniques and
// high-level synchronizations"), used there to stress a tool with
// synchronization. Writers lock one of a fixed set of stripes; readers
// take no lock at all: each bucket's chain is immutable and published
// with an atomic pointer store, so a reader that loads the head sees fully
// built nodes. It is race-free (its test runs under -race), and every node
// field is written by a writer and read by lock-free readers with no lock
// in common: lockset false alarms, ordered by the atomic publication.
package lockhash

import (
	"sync"
	"sync/atomic"
)

// Config sizes a run.
type Config struct {
	Buckets    int
	Stripes    int // writer locks
	Goroutines int
	Ops        int // operations per goroutine
	Keys       int // key space
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Buckets: 16, Stripes: 4, Goroutines: 4, Ops: 60, Keys: 24} }

type node struct {
	key  uint64
	val  uint64
	next *node
}

// Table maps uint64 keys to uint64 values.
type Table struct {
	stripes []sync.Mutex
	buckets []atomic.Pointer[node]
	size    atomic.Int64
}

// New returns a table.
func New(buckets, stripes int) *Table {
	return &Table{stripes: make([]sync.Mutex, stripes), buckets: make([]atomic.Pointer[node], buckets)}
}

func hash(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	return k
}

func (t *Table) bucket(k uint64) (int, *sync.Mutex) {
	b := int(hash(k) % uint64(len(t.buckets)))
	return b, &t.stripes[b%len(t.stripes)]
}

// Get is lock-free: load the chain head, walk immutable nodes.
func (t *Table) Get(k uint64) (uint64, bool) {
	b, _ := t.bucket(k)
	for n := t.buckets[b].Load(); n != nil; n = n.next { // racekit:norace id=lh-next why="nodes are written before the atomic Store that publishes them and read after the Load"
		if n.key == k { // racekit:norace id=lh-key why="see lh-next"
			return n.val, true // racekit:norace id=lh-val why="see lh-next"
		}
	}
	return 0, false
}

// newNode builds a node before it is published.
func newNode(k, v uint64, next *node) *node {
	n := new(node)
	n.key = k     // racekit:norace id=lh-key why="see Get"
	n.val = v     // racekit:norace id=lh-val why="see Get"
	n.next = next // racekit:norace id=lh-next why="see Get"
	return n
}

// Put inserts or replaces k under its stripe lock, copying the chain
// prefix up to k so that published nodes never change.
func (t *Table) Put(k, v uint64) {
	b, mu := t.bucket(k)
	mu.Lock()
	defer mu.Unlock()
	head := t.buckets[b].Load()
	var prefix []*node
	for n := head; n != nil; n = n.next {
		if n.key == k {
			rest := newNode(k, v, n.next)
			for i := len(prefix) - 1; i >= 0; i-- {
				rest = newNode(prefix[i].key, prefix[i].val, rest)
			}
			t.buckets[b].Store(rest)
			return
		}
		prefix = append(prefix, n)
	}
	t.buckets[b].Store(newNode(k, v, head))
	t.size.Add(1)
}

// Delete removes k under its stripe lock, copying the chain prefix.
func (t *Table) Delete(k uint64) bool {
	b, mu := t.bucket(k)
	mu.Lock()
	defer mu.Unlock()
	var prefix []*node
	for n := t.buckets[b].Load(); n != nil; n = n.next {
		if n.key == k {
			rest := n.next
			for i := len(prefix) - 1; i >= 0; i-- {
				rest = newNode(prefix[i].key, prefix[i].val, rest)
			}
			t.buckets[b].Store(rest)
			t.size.Add(-1)
			return true
		}
		prefix = append(prefix, n)
	}
	return false
}

// Len is the number of keys.
func (t *Table) Len() int { return int(t.size.Load()) }

// Result summarizes a run.
type Result struct {
	Len      int // keys at the end
	Counted  int // keys found by a final scan
	Gets     int
	Found    int
	Mismatch int // values read that were never written for their key
}

// Run hammers the table: each goroutine puts, gets and deletes keys; a
// value always encodes its key, so a reader can check what it read.
func Run(cfg Config) Result {
	t := New(cfg.Buckets, cfg.Stripes)
	var wg sync.WaitGroup
	gets := make([]int, cfg.Goroutines)
	found := make([]int, cfg.Goroutines)
	bad := make([]int, cfg.Goroutines)
	for g := 0; g < cfg.Goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			x := uint64(g)*0x9E3779B97F4A7C15 + 1
			for i := 0; i < cfg.Ops; i++ {
				x = x*6364136223846793005 + 1442695040888963407
				k := (x >> 33) % uint64(cfg.Keys)
				switch op := (x >> 20) % 10; {
				case op < 3:
					t.Put(k, k<<32|uint64(g))
				case op < 4:
					t.Delete(k)
				default:
					gets[g]++
					if v, ok := t.Get(k); ok {
						found[g]++
						if v>>32 != k {
							bad[g]++
						}
					}
				}
			}
		}(g)
	}
	wg.Wait()
	r := Result{Len: t.Len()}
	for g := range gets {
		r.Gets += gets[g]
		r.Found += found[g]
		r.Mismatch += bad[g]
	}
	for k := 0; k < cfg.Keys; k++ {
		if _, ok := t.Get(uint64(k)); ok {
			r.Counted++
		}
	}
	return r
}
