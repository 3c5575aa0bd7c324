// Package buggyprogram is a ConTest-style kernel in the shape of ConTest's
// BuggyProgram (PECAN Table 1: 385 lines, 4 threads, 5 shared variables,
// 9 races, 1 atomicity violation). The seeds give its size and counts, not
// its code; this version keeps that shape: three workers and a monitor
// share a counter, a stop flag, a lazily built table, a slot array and its
// next-free index, with the classic bugs of each: an unlocked increment, a
// polled flag, an unlocked lazy initialization, and a check-then-act on the
// index whose act is locked but whose check is not.
package buggyprogram

import (
	"runtime"
	"sync"
)

// Config sizes a run.
type Config struct {
	Workers    int // worker goroutines (the monitor is one more)
	Iterations int // steps per worker
	Slots      int // capacity of the slot array
	Limit      int // the monitor raises the stop flag once the counter reaches it
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config {
	return Config{Workers: 3, Iterations: 40, Slots: 64, Limit: 60}
}

// table is built lazily by whichever worker needs it first.
type table struct {
	hits [16]int // one cell per worker: no two workers share a cell
}

// Program holds the five shared variables.
type Program struct {
	mu      sync.Mutex
	counter int    // steps taken, incremented without the lock
	done    bool   // stop flag: written by the monitor, polled by workers
	cache   *table // built on first use, without the lock
	slots   []int  // written under mu
	next    int    // next free slot: written under mu, but checked without it
}

// New returns a program with n slots.
func New(slots int) *Program {
	return &Program{slots: make([]int, slots)}
}

// tbl returns the shared table, building it on first use. Two workers can
// both see nil and both build one: the second overwrites the first, and a
// worker may keep using the lost table.
func (p *Program) tbl() *table {
	// The nil check reads cache while another worker may be storing it.
	if p.cache == nil { // racekit:race id=bp-init-check kind=race benign=false
		// Every worker that saw nil stores its own table: write/write (flaky:
		// two workers must both have seen nil).
		// The new table's zeroing races with another worker's use of it
		// (line of hits below): the table is published without a lock.
		p.cache = &table{} // racekit:race id=bp-init-check,bp-init-use,bp-init-pub kind=race benign=false racekit:race id=bp-init-store kind=race benign=false self flaky
	}
	return p.cache // racekit:race id=bp-init-use kind=race benign=false
}

// record claims the next free slot. The index is read without the lock
// and then stored, plus one, under it: a worker that read the same index
// as another overwrites its slot (a lost claim), an atomicity violation
// on next, and the unlocked read races with the locked store. The read
// and the store are meant to be atomic (racekit anomalies' atomic region).
//
//racekit:atomic
func (p *Program) record(v int) bool {
	n := p.next // racekit:race id=bp-next kind=race benign=false racekit:race id=bp-av kind=atomicity benign=false
	if n >= len(p.slots) {
		return false
	}
	p.mu.Lock()
	p.slots[n] = v
	p.next = n + 1 // racekit:race id=bp-next kind=race benign=false racekit:race id=bp-av kind=atomicity benign=false self racekit:norace id=bp-n1 why="both stores hold p.mu; a lockset detector flags the word because of the unlocked load" self
	p.mu.Unlock()
	return true
}

// worker takes steps until the flag rises or its iterations run out.
func (p *Program) worker(id, iters int) int {
	recorded := 0
	for i := 0; i < iters; i++ {
		// The monitor writes done without any synchronization.
		if p.done { // racekit:race id=bp-done kind=race benign=false flaky
			break
		}
		// Unlocked read-modify-write by every worker: lost increments.
		p.counter++           // racekit:race id=bp-count kind=race benign=false self racekit:race id=bp-mon kind=race benign=false
		p.tbl().hits[id%16]++ // racekit:race id=bp-init-pub kind=race benign=false
		if p.record(id*1000 + i) {
			recorded++
		}
	}
	return recorded
}

// monitor raises the stop flag once the counter reaches limit, or gives
// up when the workers are finished.
func (p *Program) monitor(limit int, finished <-chan struct{}) {
	for {
		// Reads the counter the workers increment without the lock.
		if p.counter >= limit { // racekit:race id=bp-mon kind=race benign=false
			// Workers poll done without synchronization. (Raised after
			// the workers finished, it would be ordered by finished.)
			p.done = true // racekit:race id=bp-done kind=race benign=false flaky
			return
		}
		select {
		case <-finished:
			return
		default:
			runtime.Gosched()
		}
	}
}

// Result is what a run computed.
type Result struct {
	Counter  int // final counter (lost increments make it smaller)
	Recorded int // successful slot claims, as the workers counted them
	Next     int // the final next-free index (lost claims make it smaller)
	Steps    int // steps the workers took
}

// Run starts the workers and the monitor and waits for them.
func Run(cfg Config) Result {
	p := New(cfg.Slots)
	var wg sync.WaitGroup
	recorded := make([]int, cfg.Workers)
	for w := 0; w < cfg.Workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			recorded[w] = p.worker(w, cfg.Iterations)
		}(w)
	}
	finished := make(chan struct{})
	mon := make(chan struct{})
	go func() {
		defer close(mon)
		p.monitor(cfg.Limit, finished)
	}()
	wg.Wait()
	close(finished)
	<-mon
	r := Result{Counter: p.counter, Next: p.next}
	for _, n := range recorded {
		r.Recorded += n
	}
	for _, h := range p.cache.hits {
		r.Steps += h
	}
	return r
}
