// Package atomicmix is the Go bug of mixing sync/atomic with plain
// accesses to the same word: workers count with atomic.AddInt64, but a
// monitor reads the counter with a plain load and a resetter zeroes it
// with a plain store. Under the Go memory model a plain access racing with
// an atomic one is a data race (Go's race detector reports it). racekit's
// front end records each atomic operation also as a data access under a
// lock private to the word, so detectors pair it with plain accesses
// (am-add-read, am-add-reset) while atomics never race with each other; a
// detector fed atomic events alone would miss those two. The plain read
// and the plain store also race with each other.
//
// The correct use beside it: a payload written with plain stores and then
// published by an atomic flag, read after an atomic load of the flag. No
// lock: a lockset false alarm; the atomics order it.
package atomicmix

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Config sizes a run.
type Config struct {
	Workers int
	Incs    int // increments per worker
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Workers: 3, Incs: 30} }

// Counter is updated atomically by workers, and read and reset plainly.
type Counter struct {
	n int64
}

// Inc is atomic.
func (c *Counter) Inc() {
	atomic.AddInt64(&c.n, 1) // racekit:race id=am-add-read,am-add-reset kind=race benign=false
}

// Snapshot is a plain read: the bug.
func (c *Counter) Snapshot() int64 {
	return c.n // racekit:race id=am-add-read,am-read-reset kind=race benign=false
}

// Reset is a plain write: the bug.
func (c *Counter) Reset() {
	c.n = 0 // racekit:race id=am-add-reset,am-read-reset kind=race benign=false
}

// Mailbox publishes one payload with an atomic flag: correct.
type Mailbox struct {
	payload [4]int
	ready   atomic.Int32
}

// Publish writes the payload, then raises the flag.
func (m *Mailbox) Publish(v int) {
	for i := range m.payload {
		m.payload[i] = v + i // racekit:norace id=am-publish why="the atomic store of ready orders the payload before the reader's atomic load"
	}
	m.ready.Store(1)
}

// Await spins until the flag is up, then reads the payload.
func (m *Mailbox) Await() int {
	for m.ready.Load() == 0 {
		runtime.Gosched()
	}
	s := 0
	for i := range m.payload {
		s += m.payload[i] // racekit:norace id=am-publish why="see Publish"
	}
	return s
}

// Result summarizes a run.
type Result struct {
	Final   int64 // counter at the end (resets make it smaller)
	Samples int
	Mail    int // the payload sum the reader saw
}

// Run: workers increment atomically, a monitor snapshots and resets
// plainly; a publisher and a reader use the mailbox.
func Run(cfg Config) Result {
	c := &Counter{}
	mb := &Mailbox{}
	var wg sync.WaitGroup
	for w := 0; w < cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < cfg.Incs; i++ {
				c.Inc()
			}
		}()
	}
	res := Result{}
	var mon sync.WaitGroup
	mon.Add(3)
	go func() {
		defer mon.Done()
		for i := 0; i < cfg.Incs; i++ {
			c.Snapshot()
			res.Samples++
		}
	}()
	go func() {
		defer mon.Done()
		c.Reset()
	}()
	go func() {
		defer mon.Done()
		res.Mail = mb.Await()
	}()
	mb.Publish(100)
	wg.Wait()
	mon.Wait()
	res.Final = atomic.LoadInt64(&c.n)
	return res
}
