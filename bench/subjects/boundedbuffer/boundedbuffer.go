// Package boundedbuffer is the bounded buffer of the FastTrack/TREE
// benchmarks (TREE Table 5.1, "boundedbuffer"): producers and consumers
// share a ring buffer guarded by a mutex with two condition variables.
// The monitor itself is correct; the bug is the buffer's Len, used by a
// statistics goroutine, which reads the count without the lock. Items are
// filled by the producer before Put and read by the consumer after Get,
// outside the lock: ordered through the lock, and a lockset false alarm.
package boundedbuffer

import "sync"

// Config sizes a run.
type Config struct {
	Capacity  int // buffer slots
	Producers int
	Consumers int
	Items     int // items per producer
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Capacity: 4, Producers: 2, Consumers: 2, Items: 25} }

// Item is what flows through the buffer.
type Item struct {
	Producer int
	Seq      int
	Payload  int
}

// Buffer is a bounded FIFO monitor.
type Buffer struct {
	mu       sync.Mutex
	notFull  *sync.Cond
	notEmpty *sync.Cond
	slots    []*Item
	head     int
	count    int // guarded by mu, except in Len
	closed   bool
}

// New returns a buffer of n slots.
func New(n int) *Buffer {
	b := &Buffer{slots: make([]*Item, n)}
	b.notFull = sync.NewCond(&b.mu)
	b.notEmpty = sync.NewCond(&b.mu)
	return b
}

// Put blocks while the buffer is full.
func (b *Buffer) Put(it *Item) {
	b.mu.Lock()
	for b.count == len(b.slots) {
		b.notFull.Wait()
	}
	b.slots[(b.head+b.count)%len(b.slots)] = it
	b.count++ // racekit:race id=bb-len-put kind=race benign=true
	b.notEmpty.Signal()
	b.mu.Unlock()
}

// Get blocks while the buffer is empty; it returns nil once the buffer is
// closed and drained.
func (b *Buffer) Get() *Item {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.count == 0 && !b.closed {
		b.notEmpty.Wait()
	}
	if b.count == 0 {
		return nil
	}
	it := b.slots[b.head]
	b.slots[b.head] = nil
	b.head = (b.head + 1) % len(b.slots)
	b.count-- // racekit:race id=bb-len-get kind=race benign=true
	b.notFull.Signal()
	return it
}

// Close wakes the consumers: no more items will come.
func (b *Buffer) Close() {
	b.mu.Lock()
	b.closed = true
	b.notEmpty.Broadcast()
	b.mu.Unlock()
}

// Len reads the count without the lock: a statistics snapshot that may be
// stale, harmless to its only user (benign), but a data race with every
// Put and Get.
func (b *Buffer) Len() int {
	return b.count // racekit:race id=bb-len-put,bb-len-get kind=race benign=true
}

// Result summarizes a run.
type Result struct {
	Consumed int // items consumed
	Sum      int // sum of their payloads
	Samples  int // Len samples taken
}

// Run moves Producers*Items items through the buffer.
func Run(cfg Config) Result {
	b := New(cfg.Capacity)
	var prod, cons sync.WaitGroup
	for p := 0; p < cfg.Producers; p++ {
		prod.Add(1)
		go func(p int) {
			defer prod.Done()
			for i := 0; i < cfg.Items; i++ {
				it := &Item{}
				// Filled outside the lock, read by a consumer outside the
				// lock: Put's unlock orders them before Get's lock.
				it.Producer, it.Seq, it.Payload = p, i, p*1000+i // racekit:norace id=bb-item why="the buffer's mutex orders Put before the Get that returns the item"
				b.Put(it)
			}
		}(p)
	}
	sums := make([]int, cfg.Consumers)
	counts := make([]int, cfg.Consumers)
	for c := 0; c < cfg.Consumers; c++ {
		cons.Add(1)
		go func(c int) {
			defer cons.Done()
			for it := b.Get(); it != nil; it = b.Get() {
				sums[c] += it.Payload + it.Seq - it.Seq // racekit:norace id=bb-item why="see the producer"
				counts[c]++
			}
		}(c)
	}
	samples := make(chan int)
	go func() {
		n := 0
		for i := 0; i < cfg.Items; i++ {
			_ = b.Len()
			n++
		}
		samples <- n
	}()
	prod.Wait()
	b.Close()
	cons.Wait()
	r := Result{Samples: <-samples}
	for c := range sums {
		r.Sum += sums[c]
		r.Consumed += counts[c]
	}
	return r
}

// ExpectedSum is the payload sum of a complete run.
func ExpectedSum(cfg Config) int {
	s := 0
	for p := 0; p < cfg.Producers; p++ {
		for i := 0; i < cfg.Items; i++ {
			s += p*1000 + i
		}
	}
	return s
}
