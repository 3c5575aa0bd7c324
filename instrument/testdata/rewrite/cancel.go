package p

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

// A CancelFunc releases rt's context object where it is called: a plain
// call before it runs, a deferred or go call when it runs (the defer
// statement evaluates the function value early), one handed to std when
// std calls it.
func cancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cctx, ccancel := context.WithCancelCause(ctx)
	defer ccancel(nil)
	go ccancel(context.Canceled)
	t.Cleanup(cancel)
	time.AfterFunc(time.Second, cancel)
	cancel()
	<-cctx.Done()
}

type failure struct{ err error }

func (f *failure) Error() string { return "failed" }

// A CancelCauseFunc's release comes with the call, after its cause is
// made: the function value is evaluated first.
func resolve(err error) (context.Context, func(error)) {
	ctx, cancel := context.WithCancelCause(context.Background())
	return ctx, func(err error) {
		cancel(&failure{err: err})
	}
}

type closer struct{ ctx context.Context }

// A Done channel kept (returned) is marked for the receives to come; one
// received from at once is not.
func (c *closer) closed() <-chan struct{} { return c.ctx.Done() }

func waitDone(ctx context.Context) {
	<-ctx.Done()
}

// A CancelCauseFunc kept as a func(error) (errgroup's Group) or a
// CancelFunc as a func() is called where the rewriter sees no cancel: the
// value stored is wrapped, and records the release when it runs.
type group struct {
	cancel func(error)
	stop   func()
	keep   context.CancelFunc
}

func storeCancels(ctx context.Context) (*group, context.Context) {
	ctx, cancel := context.WithCancelCause(ctx)
	g := &group{cancel: cancel}
	sctx, stop := context.WithCancel(ctx)
	g.stop = stop
	g.keep = stop
	_ = group{cancel, stop, stop}
	_ = sctx
	return g, ctx
}

// The same with the functions in escaping variables (captured by a
// goroutine: grpc's serverHandlerTransport.HandleStreams): the read hook
// takes the variable's address, so the stored value's wrap is outside it.
func storeEscaping(ctx context.Context) *group {
	var cancel context.CancelFunc
	ctx, cancel = context.WithCancel(ctx)
	_, cause := context.WithCancelCause(ctx)
	go func() {
		cancel()
		cause(nil)
	}()
	g := &group{cancel: cause, stop: cancel}
	_ = group{cause, cancel, cancel}
	g.stop = cancel
	return g
}

// A context's Done call in a select case records what it did inside
// package context (its mutex, its channel's store: rt.CtxDoneCall),
// whichever case proceeds; a WithTimeout of it as a parent takes its
// mutex (rt.CtxParent).
func pollDone(ctx context.Context, c chan int) {
	select {
	case <-ctx.Done():
	case <-c:
	default:
	}
	sub, stop := context.WithTimeout(ctx, time.Second)
	defer stop()
	<-sub.Done()
	// An Err that returns non-nil looks up its context's channel
	// (rt.CtxErr: a deadline's cancel); a context read from a field too.
	if sub.Err() != nil {
		return
	}
	l := &loader{Context: sub}
	_ = l.Context.Err()
}

// A WithCancel-style call keeps its context under its parent for the
// cancel (rt.CtxParentOf, rt.CtxMade), a nested one too; a
// standard-library call that registers with its context takes the
// context's mutex (rt.CtxParent, rt.ReqCtxParent for a request's), one
// that only reads it does not.
func registers(ctx context.Context, d *net.Dialer, c *http.Client, req *http.Request) {
	sub, stop := context.WithTimeout(ctx, time.Second)
	defer stop()
	inner, innerStop := context.WithCancel(first(context.WithCancel(sub)))
	defer innerStop()
	if conn, err := d.DialContext(inner, "tcp", "localhost:1"); err == nil {
		conn.Close()
	}
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
	}
	_, _ = (&net.Resolver{}).LookupHost(inner, "localhost")
}

func first(ctx context.Context, _ context.CancelFunc) context.Context { return ctx }

// A parent read from a shared field: its read hook, which takes the
// field's address, goes inside rt.CtxParentOf and rt.CtxParent
// (golang.org/x/tools/go/packages: errgroup.WithContext(ld.Context)).
type loader struct{ Context context.Context }

func fieldParents(ld *loader, d *net.Dialer) {
	go func() { _ = ld.Context }()
	c, cancel := context.WithCancel(ld.Context)
	defer cancel()
	_ = c
	if conn, err := d.DialContext(ld.Context, "tcp", "localhost:1"); err == nil {
		conn.Close()
	}
}
