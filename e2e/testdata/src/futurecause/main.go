// A worker resolves a future by cancelling its context with a cause it
// makes in the call (cancel(&resolution{err})), and main reads the
// cause's field after Done, as alitto/pond/v2's futures do. No race: the
// cancel closes Done after the cause is made. racekit released the
// context before the call's argument was evaluated, and reported the
// read of the field against the cause's making, in 55 of pond's tests
// (held-out batch CB), until a CancelCauseFunc's release came with the
// call (instrument's callexpr, rt.CtxCancelCauseLater).
package main

import (
	"context"
	"errors"
	"fmt"
)

type resolution struct{ err error }

func (r *resolution) Error() string { return "resolved" }

type future struct{ ctx context.Context }

func newFuture() (*future, func(error)) {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &future{ctx: ctx}, func(err error) {
		cancel(&resolution{err: err})
	}
}

func (f *future) wait() error {
	<-f.ctx.Done()
	if r, ok := context.Cause(f.ctx).(*resolution); ok {
		return r.err
	}
	return nil
}

func main() {
	for i := 0; i < 20; i++ {
		f, resolve := newFuture()
		go resolve(errors.New("task failed"))
		if err := f.wait(); err == nil {
			panic("no error")
		}
	}
	f, resolve := newFuture()
	go func() { resolve(nil) }()
	fmt.Println(f.wait())
}
