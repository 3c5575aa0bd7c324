package jobsys

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrAttemptTimeout is the error of an attempt that ran out of time.
var ErrAttemptTimeout = errors.New("attempt timed out")

// Backoff is the delay policy between attempts.
type Backoff struct {
	Base time.Duration
	Max  time.Duration
}

// Delay is the wait before attempt n+1 (n from 1): doubling, capped.
func (b Backoff) Delay(n int) time.Duration {
	d := b.Base
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	if d > b.Max {
		d = b.Max
	}
	return d
}

// attempt runs h once, giving up after timeout (0: no limit). The attempt
// runs in its own goroutine so that a stuck handler cannot block the
// worker; on timeout the goroutine is abandoned and keeps running. The
// bug: it writes the caller's out and err variables, which the timeout
// branch reads (and returns) while the abandoned goroutine may be writing
// them (flaky: only in runs where a timeout fires).
func attempt(ctx context.Context, h handler, input string, n int, timeout time.Duration, abandoned *Group) (string, error) {
	if timeout <= 0 {
		return h(input, n)
	}
	var out string
	var err error
	done := make(chan struct{})
	abandoned.Add(1)
	go func() {
		defer abandoned.Done()
		out, err = h(input, n) // racekit:race id=js-retry-err,js-retry-err-w,js-retry-err-r kind=race benign=false flaky
		close(done)
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return out, err
	case <-t.C:
		// "Report what the attempt had so far": reads the variables the
		// abandoned goroutine will write.
		if err == nil { // racekit:race id=js-retry-err kind=race benign=false flaky
			err = ErrAttemptTimeout // racekit:race id=js-retry-err-w kind=race benign=false flaky
		}
		return "", fmt.Errorf("attempt %d: %w", n, err) // racekit:race id=js-retry-err-r kind=race benign=false flaky
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// retryable reports whether an attempt's error deserves another try.
func retryable(err error) bool {
	return errors.Is(err, ErrTransient) || errors.Is(err, ErrAttemptTimeout)
}

// Group counts goroutines still running (abandoned attempts), so that
// Shutdown can wait for them. Its counter is guarded by a one-slot channel
// used as a mutex: no sync.Mutex is ever held, so a lockset detector flags
// the counter; the channel orders every access (the k-th receive is
// synchronized before the (k+1)-th send completes).
type Group struct {
	token chan struct{}
	n     int
}

// NewGroup returns an empty group.
func NewGroup() *Group {
	g := &Group{token: make(chan struct{}, 1)}
	g.token <- struct{}{}
	return g
}

// Add registers n goroutines.
func (g *Group) Add(n int) {
	<-g.token
	g.n += n // racekit:norace id=js-group why="a one-slot channel serializes the counter's accesses" self
	g.token <- struct{}{}
}

// Done unregisters one.
func (g *Group) Done() { g.Add(-1) }

// Running is the number of registered goroutines.
func (g *Group) Running() int {
	<-g.token
	defer func() { g.token <- struct{}{} }()
	return g.n // racekit:norace id=js-group why="see Add"
}

// Wait polls until no goroutine is registered or the deadline passes.
func (g *Group) Wait(deadline time.Duration) bool {
	stop := time.Now().Add(deadline)
	for g.Running() > 0 {
		if time.Now().After(stop) {
			return false
		}
		time.Sleep(100 * time.Microsecond)
	}
	return true
}
