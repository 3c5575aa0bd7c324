// A goroutine makes an error and cancels a context with it as the cause,
// through a func(error) kept in a struct as errgroup keeps it; main's HTTP
// call with that context fails and returns the cause (net/http returns
// context.Cause(ctx)), whose fields main then reads. No race: the
// standard library saw the cancel before it returned the cause, which go
// test -race sees through its instrumented context and net/http. racekit
// sees neither, and took the read for a race with the goroutine's write
// (held-out go-containerregistry, whose errgroup cancels with the failing
// upload's error) until a call into untraced code that takes a context
// and fails acquires the cancels when that context is done
// (instrument's ctxSeenCall, rt.CtxSeen), and a cancel function stored
// as another function type records its release when it runs
// (instrument's cancelStored).
package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httputil"
	"runtime"
	"time"
)

type failure struct{ msg string }

// group keeps its cancel as errgroup.Group does.
type group struct{ cancel func(error) }

func (f *failure) Error() string { return f.msg }

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	g := &group{cancel: cancel}
	go func() {
		f := &failure{}
		f.msg = "upload failed"
		g.cancel(f)
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, "http://example.invalid/", nil)
	if err != nil {
		panic(err)
	}
	// Wait for the goroutine to end, by a count that orders nothing.
	for i := 0; i < 5000 && runtime.NumGoroutine() > 1; i++ {
		time.Sleep(time.Millisecond)
	}
	_, err = httputil.DumpRequestOut(req, false)
	if err == nil {
		fmt.Println("no error")
		return
	}
	fmt.Println(err.Error())
}
