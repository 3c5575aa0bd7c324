package httpsvc

import (
	"errors"
	"sync"
	"time"
)

// ErrPoolClosed is returned by Get after Close.
var ErrPoolClosed = errors.New("connection pool closed")

// Conn is a backend connection. It is owned by one request at a time,
// from Pool.Get to Pool.Put; its fields are touched by the owner without
// any lock.
type Conn struct {
	id       int
	store    *Store
	queries  int       // queries run on this connection
	lastUsed time.Time // when it last ran a query
	broken   bool
}

// Query fetches an item through the connection.
func (c *Conn) Query(id string, work int) (*Item, error) {
	if c.broken {
		return nil, ErrConnBroken
	}
	// The previous owner wrote these before Put; Put's unlock and this
	// owner's Get lock order them, though no lock is held here.
	c.queries++ // racekit:norace id=hs-conn-owner why="the pool's lock orders the previous owner's accesses (before Put) before this owner's (after Get)" self
	it, err := c.store.get(id, work)
	c.lastUsed = time.Now() // racekit:race id=hs-conn-after-put kind=race benign=false flaky
	return it, err
}

// Update writes through the connection.
func (c *Conn) Update(id string, price, stock, rev, work int) (*Item, error) {
	if c.broken {
		return nil, ErrConnBroken
	}
	c.queries++ // racekit:norace id=hs-conn-owner why="see Query" self
	return c.store.update(id, price, stock, rev, work)
}

// PoolStats is a snapshot of the pool.
type PoolStats struct {
	Open    int `json:"open"`
	Idle    int `json:"idle"`
	Waits   int `json:"waits"`
	Created int `json:"created"`
}

// Pool hands out at most max connections.
type Pool struct {
	mu      sync.Mutex
	store   *Store
	idle    []*Conn
	open    int
	max     int
	created int
	closed  bool          // written under mu; checked without it by Get's fast path
	freed   chan struct{} // signalled (non-blocking) by Put
	waits   int           // requests that had to wait: bumped without mu
}

// NewPool returns a pool of at most max connections to store.
func NewPool(store *Store, max int) *Pool {
	return &Pool{store: store, max: max, freed: make(chan struct{}, 1)}
}

// Get takes an idle connection, opens one, or waits for a Put.
func (p *Pool) Get() (*Conn, error) {
	// Fast path without the lock: a stale false only means the locked
	// check below decides.
	if p.closed { // racekit:race id=hs-pool-closed kind=race benign=true flaky
		return nil, ErrPoolClosed
	}
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrPoolClosed
		}
		if n := len(p.idle); n > 0 {
			c := p.idle[n-1]
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			return c, nil
		}
		if p.open < p.max {
			p.open++
			p.created++
			c := &Conn{id: p.created, store: p.store}
			p.mu.Unlock()
			return c, nil
		}
		p.mu.Unlock()
		// Counted outside the lock by every waiting request.
		p.waits++ // racekit:race id=hs-pool-waits kind=race benign=true self flaky racekit:race id=hs-pool-waits-read kind=race benign=true flaky
		select {
		case <-p.freed:
		case <-time.After(time.Millisecond):
		}
	}
}

// Put returns a connection; a broken one is discarded.
func (p *Pool) Put(c *Conn) {
	p.mu.Lock()
	if c.broken || p.closed { // racekit:norace id=hs-n-closed why="both hold p.mu; a lockset detector flags the word because of Get's unlocked check"
		p.open--
	} else {
		p.idle = append(p.idle, c)
	}
	p.mu.Unlock()
	select {
	case p.freed <- struct{}{}:
	default:
	}
}

// Stats reads the pool's counters; waits is read without the lock, like
// it is written.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	st := PoolStats{Open: p.open, Idle: len(p.idle), Created: p.created}
	p.mu.Unlock()
	st.Waits = p.waits // racekit:race id=hs-pool-waits-read kind=race benign=true flaky
	return st
}

// Close refuses further Gets and drops idle connections.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true // racekit:race id=hs-pool-closed kind=race benign=true flaky racekit:norace id=hs-n-closed why="see Put"
	p.open -= len(p.idle)
	p.idle = nil
	p.mu.Unlock()
}

// withConn runs f on a pooled connection. The deferred bookkeeping is the
// bug: it stamps the connection after it went back to the pool, where the
// next request may already be using it.
func (p *Pool) withConn(f func(c *Conn) error) error {
	c, err := p.Get()
	if err != nil {
		return err
	}
	err = f(c)
	p.Put(c)
	if err == nil {
		// After Put: another request may own c now and be stamping it
		// in Query.
		c.lastUsed = time.Now() // racekit:race id=hs-conn-after-put kind=race benign=false flaky racekit:race id=hs-conn-after-put2 kind=race benign=false self flaky
	}
	return err
}
