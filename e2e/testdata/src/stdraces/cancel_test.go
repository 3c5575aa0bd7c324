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
