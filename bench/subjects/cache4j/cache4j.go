// Package cache4j is a Go version of cache4j (RaceFuzzer Table 1: 3,897
// lines, 2 real races, 1 exception; PECAN Table 1), a thread-safe object
// cache with a cleaner thread that evicts expired entries and sleeps
// between rounds. It keeps the race RaceFuzzer made crash (section 5.3):
// the cleaner sets its _sleep flag without a lock before sleeping and
// clears it, still without the lock, when it wakes; a writer that finds
// the cache full checks the flag under the cleaner's lock and, if set,
// interrupts the cleaner. Interleaved with the clearing, the interrupt
// arrives when the cleaner is not sleeping and cuts its next sleep short
// (in Java an InterruptedException outside the try block killed the
// cleaner thread).
//
// A second, benign race: Get bumps the entry's hit count after releasing
// the cache lock (the count only ranks entries for eviction).
package cache4j

import (
	"strconv"
	"sync"
	"time"
)

// Config sizes a run.
type Config struct {
	Clients  int           // client goroutines
	Ops      int           // Put/Get calls per client
	Capacity int           // entries before Put wakes the cleaner
	TTL      time.Duration // entry lifetime
	Interval time.Duration // the cleaner's sleep
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config {
	return Config{Clients: 3, Ops: 30, Capacity: 8, TTL: 200 * time.Microsecond, Interval: 100 * time.Microsecond}
}

type entry struct {
	value   string
	expires time.Time
	hits    int // bumped after the cache lock is released (benign race)
}

// Cache is the object cache.
type Cache struct {
	mu       sync.Mutex
	data     map[string]*entry
	capacity int
	ttl      time.Duration
	cleaner  *Cleaner
	evicted  int // guarded by mu
}

// Cleaner is the cleaner thread's state.
type Cleaner struct {
	mu        sync.Mutex    // the cleaner object's monitor
	sleep     bool          // _sleep: written without mu, read under it
	interrupt chan struct{} // Thread.interrupt(), one pending at most
	stop      chan struct{}
	interval  time.Duration
	cache     *Cache
	// Counted by the cleaner goroutine only.
	rounds   int
	cutShort int // sleeps ended by an interrupt
}

// New returns a cache and starts its cleaner.
func New(capacity int, ttl, interval time.Duration) *Cache {
	c := &Cache{data: map[string]*entry{}, capacity: capacity, ttl: ttl}
	c.cleaner = &Cleaner{interrupt: make(chan struct{}, 1), stop: make(chan struct{}), interval: interval, cache: c}
	return c
}

// Put stores a value; a full cache wakes the cleaner.
func (c *Cache) Put(k, v string) {
	c.mu.Lock()
	c.data[k] = &entry{value: v, expires: time.Now().Add(c.ttl)}
	full := len(c.data) > c.capacity
	c.mu.Unlock()
	if full {
		c.cleaner.wake()
	}
}

// Get returns a live value.
func (c *Cache) Get(k string) (string, bool) {
	c.mu.Lock()
	e, ok := c.data[k]
	if ok && time.Now().After(e.expires) {
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		return "", false
	}
	// Outside the lock: concurrent Gets lose hits, and the cleaner reads
	// the count (benign: it only orders eviction). Two Gets of one entry,
	// or a Get and the next clean, are usually ordered by their lock chain
	// through the cache lock; only overlapping ones show the race (flaky).
	e.hits++ // racekit:race id=c4-hits kind=race benign=true self flaky racekit:race id=c4-hits-evict kind=race benign=true flaky
	return e.value, true
}

// clean evicts expired entries, and the least-hit one if still over
// capacity.
func (c *Cache) clean() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	var victim string
	least := -1
	for k, e := range c.data {
		if now.After(e.expires) {
			delete(c.data, k)
			c.evicted++
			continue
		}
		if h := e.hits; least < 0 || h < least { // racekit:race id=c4-hits-evict kind=race benign=true flaky
			victim, least = k, h
		}
	}
	if len(c.data) > c.capacity && victim != "" {
		delete(c.data, victim)
		c.evicted++
	}
}

// wake is the writer's side: synchronized (this) { if (_sleep) interrupt(); }
func (cl *Cleaner) wake() {
	cl.mu.Lock()
	if cl.sleep { // racekit:race id=c4-sleep-set,c4-sleep-clear kind=race benign=false
		select {
		case cl.interrupt <- struct{}{}:
		default:
		}
	}
	cl.mu.Unlock()
}

// run is the cleaner thread.
func (cl *Cleaner) run() {
	t := time.NewTimer(cl.interval)
	defer t.Stop()
	for {
		cl.cache.clean()
		cl.rounds++
		// _sleep = true, without the monitor the writer checks it under.
		cl.sleep = true // racekit:race id=c4-sleep-set kind=race benign=false
		t.Reset(cl.interval)
		select {
		case <-cl.interrupt:
			cl.cutShort++
		case <-t.C:
		case <-cl.stop:
			return
		}
		// finally { _sleep = false; } also without the monitor. (Flaky for
		// happens-before: the next round's clean() locks the cache, and a
		// Put that locks it afterwards is ordered after this store; only a
		// wake between the two shows the race.)
		cl.sleep = false // racekit:race id=c4-sleep-clear kind=race benign=false flaky
	}
}

// Result summarizes a run.
type Result struct {
	Hits, Misses int
	Rounds       int // cleaner rounds
	CutShort     int // cleaner sleeps cut short by an interrupt
	Evicted      int
}

// Run starts the cleaner and the clients, then stops the cleaner.
func Run(cfg Config) Result {
	c := New(cfg.Capacity, cfg.TTL, cfg.Interval)
	cleanerDone := make(chan struct{})
	go func() {
		c.cleaner.run()
		close(cleanerDone)
	}()
	var wg sync.WaitGroup
	hits := make([]int, cfg.Clients)
	misses := make([]int, cfg.Clients)
	for cl := 0; cl < cfg.Clients; cl++ {
		wg.Add(1)
		go func(cl int) {
			defer wg.Done()
			for i := 0; i < cfg.Ops; i++ {
				k := "k" + strconv.Itoa((cl*7+i)%(2*cfg.Capacity))
				if i%3 == 0 {
					c.Put(k, "v"+strconv.Itoa(i))
				} else if _, ok := c.Get(k); ok {
					hits[cl]++
				} else {
					misses[cl]++
				}
			}
		}(cl)
	}
	wg.Wait()
	close(c.cleaner.stop)
	<-cleanerDone
	r := Result{Rounds: c.cleaner.rounds, CutShort: c.cleaner.cutShort, Evicted: c.evicted}
	for i := range hits {
		r.Hits += hits[i]
		r.Misses += misses[i]
	}
	return r
}
