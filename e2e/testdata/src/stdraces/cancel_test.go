package stdraces

import (
	"context"
	"testing"
	"time"
)

// A deferred cancel releases when it runs, after the frame's last writes,
// not where the defer statement evaluates it (elazarl/goproxy's MITM
// handler: defer finishRequest(), and the test read the response body's
// close count once the request's context was done).
func TestNoRaceDeferredCancel(t *testing.T) {
	x := 0
	ctxs := make(chan context.Context, 1)
	go func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ctxs <- ctx
		x = 1
	}()
	ctx := <-ctxs
	<-ctx.Done()
	sink = x
}

func TestNoRaceDeferredCancelCause(t *testing.T) {
	x := 0
	ctxs := make(chan context.Context, 1)
	go func() {
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		ctxs <- ctx
		x = 1
	}()
	ctx := <-ctxs
	<-ctx.Done()
	sink = x
}

// A CancelFunc handed to std is called there (rt.CtxCancelLater).
func TestNoRaceCancelAfterFunc(t *testing.T) {
	x := 0
	ctxs := make(chan context.Context, 1)
	go func() {
		ctx, cancel := context.WithCancel(context.Background())
		ctxs <- ctx
		x = 1
		time.AfterFunc(time.Millisecond, cancel)
	}()
	ctx := <-ctxs
	<-ctx.Done()
	sink = x
}

// Deferred calls run last in, first out: this write comes after the cancel.
// The test waits for the goroutine's end (done, closed after the write)
// after its read: go test -race missed the race when the test's process
// exited before the goroutine's write (CI, session 64).
func TestRaceWriteAfterDeferredCancel(t *testing.T) {
	x := 0
	ctxs := make(chan context.Context, 1)
	done := make(chan bool)
	go func() {
		defer close(done)
		ctx, cancel := context.WithCancel(context.Background())
		defer func() { x = 1 }() // race: x
		defer cancel()
		ctxs <- ctx
	}()
	ctx := <-ctxs
	<-ctx.Done()
	sink = x // race: x
	<-done
}

// context.AfterFunc's f runs after the cancel (package context starts its
// goroutine there): eclipse/paho.golang's shutdown, registered with
// AfterFunc, waited on a WaitGroup that Connect had added to before its
// cancel.
func TestNoRaceContextAfterFuncAfterCancel(t *testing.T) {
	x := 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	context.AfterFunc(ctx, func() {
		sink = x
		close(done)
	})
	x = 1
	cancel()
	<-done
}

func TestRaceContextAfterFuncWriteAfterCancel(t *testing.T) {
	x := 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	context.AfterFunc(ctx, func() {
		sink = x // race: x
		close(done)
	})
	cancel()
	x = 1 // race: x
	<-done
}

// context.AfterFunc's stop returns false once the cancel has run the
// AfterFunc's once (package context: a.once.Do(func() { go a.f() }) after
// it cancelled a), an atomic load of what the cancel stored: the stop is
// ordered after the cancel, whether or not f's goroutine has run.
func TestNoRaceContextAfterFuncStopFalse(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, func() {})
	x := new(int)
	go func() {
		*x = 1
		cancel()
	}()
	time.Sleep(20 * time.Millisecond)
	if !stop() {
		sink = *x
	}
}

// A stop that returns true removes the AfterFunc from its parent under the
// parent's mutex (removeChild), which a later cancel of the parent takes.
func TestNoRaceContextAfterFuncStopThenCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, func() {})
	x := new(int)
	done := make(chan bool)
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
		sink = *x
		close(done)
	}()
	*x = 1
	stop()
	<-done
}

// A stop that returns true orders nothing else: a write another goroutine
// made with no cancel races with a read after it.
func TestRaceContextAfterFuncStopTrue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := context.AfterFunc(ctx, func() {})
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1 // race: afterfuncstoptrue
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	if stop() {
		sink = *x // race: afterfuncstoptrue
	}
	<-done
}

// closer keeps a context and its cancel, and hands out the Done channel
// (ristretto's z.Closer: HasBeenClosed).
type closer struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newCloser() *closer {
	c := &closer{}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

func (c *closer) hasBeenClosed() <-chan struct{} { return c.ctx.Done() }

// A receive from a Done channel that traced code kept (returned, stored)
// is ordered after the cancel that closed it, as one from ctx.Done() is
// (ristretto's AllocatorPool closes its channel once HasBeenClosed's
// channel is closed, after a flusher's send on it ended).
func TestNoRaceKeptDoneChannel(t *testing.T) {
	c := newCloser()
	x := 0
	done := make(chan bool)
	go func() {
		<-c.hasBeenClosed()
		x++
		done <- true
	}()
	x = 1
	c.cancel()
	<-done
}

// The same in a select, on a stored channel.
func TestNoRaceKeptDoneSelect(t *testing.T) {
	c := newCloser()
	ch := c.hasBeenClosed()
	x := 0
	done := make(chan bool)
	go func() {
		select {
		case <-ch:
			x++
		case <-time.After(time.Minute):
		}
		done <- true
	}()
	x = 1
	c.cancel()
	<-done
}

// What follows the cancel is not ordered before the receive.
func TestRaceKeptDoneWriteAfterCancel(t *testing.T) {
	c := newCloser()
	x := 0
	done := make(chan bool)
	go func() {
		<-c.hasBeenClosed()
		x++ // race: x
		done <- true
	}()
	c.cancel()
	x = 1 // race: x
	<-done
}
