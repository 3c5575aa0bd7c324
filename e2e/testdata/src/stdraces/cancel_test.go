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
func TestRaceWriteAfterDeferredCancel(t *testing.T) {
	x := 0
	ctxs := make(chan context.Context, 1)
	go func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer func() { x = 1 }() // race: x
		defer cancel()
		ctxs <- ctx
	}()
	ctx := <-ctxs
	<-ctx.Done()
	sink = x // race: x
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
