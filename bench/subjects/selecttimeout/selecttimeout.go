// Package selecttimeout is the Go bug of a select with a timeout whose
// timeout branch still touches what the abandoned goroutine is writing.
// Query runs a backend call in a goroutine that stores the result and then
// closes done; the caller waits for done or a timer. On the done branch
// the close orders the store before the caller's read (a lockset false
// alarm); on the timeout branch the caller returns the partial result it
// reads while the goroutine may be storing it: a data race, present only
// in runs where the timeout fires (flaky by nature; the driver makes the
// backend slow and the timeout short so that it usually does).
package selecttimeout

import (
	"sync"
	"time"
)

// Config sizes a run.
type Config struct {
	Queries int
	Work    int           // backend loop iterations (its slowness)
	Timeout time.Duration // the caller's patience
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config {
	return Config{Queries: 4, Work: 3_000_000, Timeout: 10 * time.Microsecond}
}

// Client issues queries; it keeps track of abandoned backend calls so
// that Close can wait for them.
type Client struct {
	pending sync.WaitGroup
}

func backend(work, q int) int {
	x := q
	for i := 0; i < work; i++ {
		x = x*1103515245 + 12345
	}
	return x&0xffff | 1
}

// Query returns the backend's answer, or (partial, false) on timeout.
func (c *Client) Query(q, work int, timeout time.Duration) (int, bool) {
	var result int
	done := make(chan struct{})
	c.pending.Add(1)
	go func() {
		defer c.pending.Done()
		// Stored while the caller may already be on the timeout branch.
		result = backend(work, q) // racekit:race id=st-partial kind=race benign=false flaky racekit:norace id=st-done why="close(done) orders the store before the done branch's read"
		close(done)
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return result, true // racekit:norace id=st-done why="see the goroutine"
	case <-t.C:
		// BUG: "return what we have so far" reads the variable the
		// abandoned goroutine is about to store.
		return result, false // racekit:race id=st-partial kind=race benign=false flaky
	}
}

// Close waits for abandoned backend calls.
func (c *Client) Close() { c.pending.Wait() }

// Result counts the outcomes.
type Result struct {
	Answered, TimedOut int
	Partial            int // timed-out queries whose partial result was non-zero
}

// Run issues the queries one after another.
func Run(cfg Config) Result {
	c := &Client{}
	var r Result
	for q := 0; q < cfg.Queries; q++ {
		v, ok := c.Query(q, cfg.Work, cfg.Timeout)
		switch {
		case ok:
			r.Answered++
		case v != 0:
			r.Partial++
			r.TimedOut++
		default:
			r.TimedOut++
		}
	}
	c.Close()
	return r
}
