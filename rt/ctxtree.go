package rt

import (
	"context"
	"reflect"
	"sync/atomic"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// Contexts. Cancelling a context closes its Done channel inside package
// context, where instrumented code cannot see it: a call of a CancelFunc
// releases ctxObj, and a receive from a context's Done channel, or a
// call of its Err method, acquires it (and timersObj, for contexts a
// deadline cancels).
var ctxObj = NewObject()

// CtxCancel is f (a CancelFunc or CancelCauseFunc), after recording the
// release of ctxObj: instrumented code calls rt.CtxCancel(cancel, site)().
// The mutexes the cancel takes (ctxCancelled) come first: the channels it
// closes, which the release stands for, are closed under them.
func CtxCancel[F any](f F, site uint32) F {
	if on {
		if n := ctxNodeOf(f); n != nil {
			ctxCancelled(n, site)
		}
		emitEdge(trace.OpSyncRelease, site, ctxObj)
	}
	return f
}

// CtxCancelLater is CtxCancel for a deferred call or a go statement
// (defer cancel()): the function value is evaluated there, and the
// release must be recorded when the call runs, after what the frame did
// before it returned.
func CtxCancelLater[F ~func()](f F, site uint32) F {
	if f == nil {
		return nil
	}
	var n *ctxNode // looked up now: the wrapper is another function
	if on {
		n = ctxNodeOf(f)
	}
	return func() {
		if on {
			if n != nil {
				ctxCancelled(n, site)
			}
			emitEdge(trace.OpSyncRelease, site, ctxObj)
		}
		f()
	}
}

// CtxCancelCauseLater is CtxCancelLater for a CancelCauseFunc.
func CtxCancelCauseLater[F ~func(error)](f F, site uint32) F {
	if f == nil {
		return nil
	}
	var n *ctxNode // looked up now: the wrapper is another function
	if on {
		n = ctxNodeOf(f)
	}
	return func(cause error) {
		if on {
			if n != nil {
				ctxCancelled(n, site)
			}
			emitEdge(trace.OpSyncRelease, site, ctxObj)
		}
		f(cause)
	}
}

// A context's own mutex orders what the Go race detector sees inside
// package context: the first call of a cancelCtx's Done makes the channel
// under it (Lock, done.Store, Unlock), and a WithCancel, WithTimeout,
// WithDeadline (and their Cause forms) or AfterFunc of the context as a
// parent takes it (propagateCancel: parent.Done(), then p.mu.Lock()); a
// later Done only loads the channel, an atomic load that acquires the
// first one's store alone. rt keys both objects by the Done channel's
// address (the context's cancelCtx makes it; a+0 to a+3 are its
// messages' objects): ctxMuObj and ctxStoreObj. Held-out
// wneessen/go-mail's test server writes a field, then calls ctx.Done() in
// its accept loop; the test reads the field after a context.WithTimeout
// of that ctx.
func ctxMuObj(a uint64) uint64    { return a + 5 }
func ctxStoreObj(a uint64) uint64 { return a + 6 }

// ctxDoneCalled records what the call of a context's Done method that
// returned c did inside package context (see ctxMuObj): the first call rt
// sees of a channel takes the mutex and releases the store, a later one
// acquires the store. (A first call in untraced code, which rt does not
// see, is taken for the first traced one: its release comes later than
// the real one, which may order more, never less.) It returns the
// channel's address and counters, for the caller's own events (a 0
// address: nothing recorded).
func ctxDoneCalled[C ~chan E | ~<-chan E, E any](c C, site uint32) (uint64, *chanCount) {
	if !on || c == nil || !live.Load() {
		return 0, nil
	}
	a := chanAddr(c)
	if a == 0 {
		return 0, nil
	}
	cc := chanCounts(c, a, site)
	if !cc.ctxMade.Load() && cc.ctxMade.CompareAndSwap(false, true) {
		emitEdge(trace.OpSyncAcquire, site, ctxMuObj(a))
		emitEdge(trace.OpSyncRelease, site, ctxMuObj(a))
		emitEdge(trace.OpSyncRelease, site, ctxStoreObj(a))
		return a, cc
	}
	emitEdge(trace.OpSyncAcquire, site, ctxStoreObj(a))
	return a, cc
}

// CtxDoneCall is c, a call of a context's Done method, after recording
// what the call did (ctxDoneCalled): a select case's channel.
func CtxDoneCall[C ~<-chan E, E any](c C, site uint32) C {
	ctxDoneCalled(c, site)
	return c
}

// CtxParent is parent, the parent context of a WithCancel, WithTimeout,
// WithDeadline, their Cause forms or AfterFunc, after recording what
// propagateCancel does with it: parent.Done() (called here; the call the
// function makes then finds the channel made), then the parent's mutex.
func CtxParent[X context.Context](parent X, site uint32) X {
	if !on || !live.Load() {
		return parent
	}
	if p := context.Context(parent); p != nil {
		if a, _ := ctxDoneCalled(ownDone(p), site); a != 0 {
			emitEdge(trace.OpSyncAcquire, site, ctxMuObj(a))
			emitEdge(trace.OpSyncRelease, site, ctxMuObj(a))
		}
	}
	return parent
}

// ReqCtxParent is CtxParent for the context of an HTTP request (an
// *http.Request: rt does not import net/http) that the callee registers
// with (net/http's transport: a WithCancelCause of it).
func ReqCtxParent[R interface {
	*Q
	Context() context.Context
}, Q any](req R, site uint32) R {
	if req != nil {
		CtxParent(req.Context(), site)
	}
	return req
}

// CtxDoneChan is a call of a context's Done method whose channel traced
// code keeps rather than receives from at once (returned by a Closer's
// HasBeenClosed, stored, passed on): a receive from that channel that
// returns because it is closed acquires the cancels, as RecvCtx does where
// the call is the receive's operand (ristretto's AllocatorPool closes its
// channel after <-closer.HasBeenClosed(): held-out batch BJ).
func CtxDoneChan[C ~<-chan E, E any](c C, site uint32) C {
	if _, cc := ctxDoneCalled(c, site); cc != nil {
		cc.ctxDone.Store(true)
		doneKept.Store(true)
	}
	return c
}

// doneKept tells whether CtxDoneChan marked a channel: until it has, a
// receive does not look its channel up to ask.
var doneKept OwnBool

// CtxDone is recorded after a receive from a context's Done channel or a
// call of its Err method.
func CtxDone(site uint32) {
	if on {
		emitEdge(trace.OpSyncAcquire, site, ctxObj)
		emitEdge(trace.OpSyncAcquire, site, timersObj)
	}
}

// CtxDoneV is CtxDone around a value: rt.CtxDoneV(ctx.Err(), site).
func CtxDoneV[T any](v T, site uint32) T {
	CtxDone(site)
	return v
}

// CtxErr is err, what ctx.Err() returned, after recording what that call
// saw: a non-nil error is an atomic load of what the cancel stored under
// the context's mutex (CtxDone, and ctxDoneSeen for a cancel rt did not
// see); a nil one loads nothing stored and orders nothing.
func CtxErr(err error, ctx context.Context, site uint32) error {
	if err != nil {
		CtxDone(site)
		if on && ctx != nil && live.Load() {
			ctxDoneSeen(chanAddr(ownDone(ctx)), site)
		}
	}
	return err
}

// CtxSeen is recorded after a call into untraced code that takes the
// context ctx and can fail (instrument's ctxSeenCall): when ctx is done by
// then, the callee may have returned because it saw the cancel, inside
// code racekit does not see (net/http returns context.Cause(ctx), an error
// the cancelling goroutine made), so the cancels are acquired as a receive
// from Done acquires them. A context not done orders nothing.
func CtxSeen(ctx context.Context, site uint32) {
	if on && ctx != nil && ownErr(ctx) != nil {
		CtxDone(site)
	}
}

// CtxSeenV is CtxSeen after a call with one result: CtxSeenV(f(ctx), ctx, site).
func CtxSeenV[V any](v V, ctx context.Context, site uint32) V {
	CtxSeen(ctx, site)
	return v
}

// ReqCtxSeen is CtxSeen for the context of an HTTP request (an
// *http.Request: rt does not import net/http).
func ReqCtxSeen[R interface {
	*Q
	Context() context.Context
}, Q any](req R, site uint32) {
	if on && req != nil {
		CtxSeen(req.Context(), site)
	}
}

// ReqCtxSeenV is ReqCtxSeen after a call with one result.
func ReqCtxSeenV[V any, R interface {
	*Q
	Context() context.Context
}, Q any](v V, req R, site uint32) V {
	ReqCtxSeen(req, site)
	return v
}

// RecvCtx is Recv for a context's Done channel.
func RecvCtx[C ~chan E | ~<-chan E, E any](c C, site uint32) E {
	ctxDoneCalled(c, site)
	v := Recv(c, site)
	CtxDoneOf(c, site)
	return v
}

// Recv2Ctx is Recv2 for a context's Done channel.
func Recv2Ctx[C ~chan E | ~<-chan E, E any](c C, site uint32) (E, bool) {
	ctxDoneCalled(c, site)
	v, ok := Recv2(c, site)
	if !ok {
		CtxDoneOf(c, site)
	} else {
		CtxDone(site)
	}
	return v, ok
}

// The contexts traced code makes with a cancel function (WithCancel,
// WithTimeout, WithDeadline and their Cause forms), kept so that a call of
// the cancel records the mutexes package context takes there, as the Go
// race detector sees them: cancelCtx.cancel locks the context's mutex,
// then each child's in turn (child.cancel, recursively, while it holds the
// parent's), and removeChild locks the parent's. What a goroutine did
// before it took a descendant's mutex (a WithCancel of it, or net's
// DialContext, which registers with it) happens before an ancestor's
// cancel returns: held-out schollz/croc's relay writes a field, then
// dials with its context in a new goroutine; the room cleanup reads the
// field after that context is done, which the test's cancel of the
// parent made it. Mutex objects are ctxMuObj of the Done channel.
type ctxNode struct {
	ctx      context.Context // keeps the Done channel, hence its address, alive
	cancel   any             // keeps the cancel function's address, fa, unique
	fa       uintptr
	a        uint64   // the Done channel's address, 0 until it is made (resolve)
	ca       uintptr  // the context's own address (its pointer), which names it until then
	parent   uint64   // the parent's Done channel's address, 0 if none
	up       *ctxNode // the parent's node, while it holds this one
	traced   bool     // cancelled by a traced cancel (ctxCancelled)
	children map[*ctxNode]struct{}
}

var ctxTree struct {
	mu       OwnMutex
	byCancel map[uintptr]*ctxNode // by the cancel function's address
	byAddr   map[uint64]*ctxNode  // by the Done channel's address
	// byCtx holds the nodes whose Done channel is not made yet, by the
	// context's address: CtxMade does not call Done, which would make it
	// (see resolve).
	byCtx map[uintptr]*ctxNode
	// parents holds, per goroutine, the parent contexts' Done addresses
	// CtxParentOf recorded for the calls whose CtxMade has not run yet (a
	// stack: an argument of the call may make a context of its own).
	parents map[uint64][]uint64
}

// funcAddr is the address of the closure f (a func value), which stays
// unique while f is reachable.
func funcAddr[F any](f F) uintptr { return *(*uintptr)(unsafe.Pointer(&f)) }

// CtxParentOf is CtxParent for the parent of a call that returns a cancel
// function: it also records the parent for the call's CtxMade.
// Instrumented code calls rt.CtxMade(context.WithCancel(rt.CtxParentOf(p, site))).
func CtxParentOf[X context.Context](parent X, site uint32) X {
	if !on || !live.Load() {
		return parent
	}
	var a uint64
	if p := context.Context(parent); p != nil {
		if a, _ = ctxDoneCalled(ownDone(p), site); a != 0 {
			emitEdge(trace.OpSyncAcquire, site, ctxMuObj(a))
			emitEdge(trace.OpSyncRelease, site, ctxMuObj(a))
		}
	}
	id := goid()
	ctxTree.mu.Lock()
	if a != 0 {
		if n := ctxTree.byCtx[ctxAddr(context.Context(parent))]; n != nil {
			n.resolve() // its Done just made the channel
		}
	}
	if ctxTree.parents == nil {
		ctxTree.parents = map[uint64][]uint64{}
	}
	ctxTree.parents[id] = append(ctxTree.parents[id], a)
	ctxTree.mu.Unlock()
	return parent
}

// CtxMade is the context and cancel function a WithCancel-style call
// returned, after recording them with the parent its CtxParentOf gave.
func CtxMade[C context.Context, F any](ctx C, cancel F) (C, F) {
	if !on || !live.Load() {
		return ctx, cancel
	}
	id := goid()
	c := context.Context(ctx)
	ctxTree.mu.Lock()
	defer ctxTree.mu.Unlock()
	st := ctxTree.parents[id]
	if len(st) == 0 {
		return ctx, cancel // the parent was not recorded: nothing to register
	}
	pa := st[len(st)-1]
	if len(st) == 1 {
		delete(ctxTree.parents, id)
	} else {
		ctxTree.parents[id] = st[:len(st)-1]
	}
	ca := ctxAddr(c)
	if ca == 0 {
		return ctx, cancel
	}
	n := &ctxNode{ctx: c, cancel: cancel, fa: funcAddr(cancel), ca: ca, parent: pa}
	if up := ctxTree.byAddr[pa]; pa != 0 && up != nil && up.ctx.Err() == nil {
		// A parent already done cancels the child at once and does not
		// hold it.
		if up.children == nil {
			up.children = map[*ctxNode]struct{}{}
		}
		up.children[n] = struct{}{}
		n.up = up
	}
	if ctxTree.byCancel == nil {
		ctxTree.byCancel = map[uintptr]*ctxNode{}
		ctxTree.byAddr = map[uint64]*ctxNode{}
		ctxTree.byCtx = map[uintptr]*ctxNode{}
	}
	ctxTree.byCancel[n.fa] = n
	ctxTree.byCtx[ca] = n
	n.resolve()
	return ctx, cancel
}

// ctxAddr is the address a context value holds (its pointer), 0 for one
// that holds none.
func ctxAddr(c context.Context) uintptr { return uintptr(ctxData(c)) }

// ctxData is the pointer a context value holds, nil for none.
func ctxData(c context.Context) unsafe.Pointer {
	if c == nil {
		return nil
	}
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&c))[1]
}

// resolve names n by its Done channel once the channel is made (by a Done
// call: traced code's, or package context's own, as a WithCancel of n
// makes its parent's), read from the context without calling Done: a
// channel rt made would change the context as the program sees it (two
// fresh contexts made alike are no longer reflect.DeepEqual: held-out
// tus/tusd's gomock expectations failed). ctxTree.mu is held.
func (n *ctxNode) resolve() {
	if n.a != 0 {
		return
	}
	a := peekDone(n.ctx)
	if a == 0 {
		return
	}
	n.a = a
	delete(ctxTree.byCtx, n.ca)
	ctxTree.byAddr[a] = n
}

// resolveAll resolves every node not named by its channel yet, before a
// lookup by a channel's address. ctxTree.mu is held.
func resolveAll() {
	for _, n := range ctxTree.byCtx {
		n.resolve()
	}
}

// peekDone is the address of the Done channel of c, a cancelCtx or a
// context that embeds one (a timerCtx), read from its done field: 0 when
// the channel is not made yet, or c is not of that shape. The channel a
// cancel stores when no Done call made one (package context's closedchan)
// is one for every such context: it names none.
func peekDone(c context.Context) uint64 {
	p := ctxData(c)
	if p == nil {
		return 0
	}
	t := reflect.TypeOf(c)
	off, ok := doneOffsets.m[t]
	if !ok {
		off = doneOffset(t)
		doneOffsets.m[t] = off
	}
	if off == ^uintptr(0) {
		return 0
	}
	n := skipBegin() // rt's look at the done field, not the program's (atomichook.go)
	ch, _ := (*atomic.Value)(unsafe.Add(p, off)).Load().(chan struct{})
	skipEnd(n)
	if a := chanAddr(ch); a != doneOffsets.closed {
		return a
	}
	return 0
}

// doneOffsets caches, per context type, the offset of its done field (^0:
// none), and holds closedchan's address; ctxTree.mu guards it.
var doneOffsets = struct {
	m      map[reflect.Type]uintptr
	closed uint64
}{m: map[reflect.Type]uintptr{}}

// doneOffset is the offset of the done field (an atomic.Value) in the
// struct a context of type t points to, through embedded structs (a
// timerCtx's cancelCtx), or ^0 (none).
func doneOffset(t reflect.Type) uintptr {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return ^uintptr(0)
	}
	f, ok := t.Elem().FieldByName("done")
	if !ok || f.Type != reflect.TypeFor[atomic.Value]() {
		return ^uintptr(0)
	}
	var off uintptr
	st := t.Elem()
	for _, i := range f.Index {
		sf := st.Field(i)
		off += sf.Offset
		st = sf.Type
	}
	return off
}

func init() {
	// closedchan's address: a context cancelled before any Done call.
	c, cancel := context.WithCancel(context.Background())
	cancel()
	ctxTree.mu.Lock()
	doneOffsets.closed = peekDone(c)
	ctxTree.mu.Unlock()
}

// ctxNodeOf is the node of the context whose cancel function is f, nil if
// traced code did not make it.
func ctxNodeOf[F any](f F) *ctxNode {
	ctxTree.mu.Lock()
	defer ctxTree.mu.Unlock()
	return ctxTree.byCancel[funcAddr(f)]
}

// ctxCancelled records what a call of n's cancel function does with
// package context's mutexes (see ctxNode) and forgets the function.
func ctxCancelled(n *ctxNode, site uint32) {
	ctxTree.mu.Lock()
	defer ctxTree.mu.Unlock()
	n.resolve()
	if ctxTree.byCancel[n.fa] == n {
		delete(ctxTree.byCancel, n.fa)
	}
	if ctxTree.byAddr[n.a] == n {
		delete(ctxTree.byAddr, n.a)
	}
	if ctxTree.byCtx[n.ca] == n {
		delete(ctxTree.byCtx, n.ca)
	}
	done := n.ctx.Err() != nil
	n.traced = true
	if n.up != nil {
		// Cancelled by now (by its own cancel, or by its deadline, which
		// rt does not see), a context has left its parent.
		delete(n.up.children, n)
		n.up = nil
	}
	if n.a != 0 {
		// (A context whose channel no Done call made has no child, and
		// no one took its mutex through Done: nothing to record of it.)
		emitEdge(trace.OpSyncAcquire, site, ctxMuObj(n.a))
		if done {
			// Already cancelled: the mutex alone, nothing held any more.
			emitEdge(trace.OpSyncRelease, site, ctxMuObj(n.a))
			return
		}
		ctxCancelChildren(n, site)
		emitEdge(trace.OpSyncRelease, site, ctxMuObj(n.a))
	} else if done {
		return
	}
	if n.parent != 0 {
		emitEdge(trace.OpSyncAcquire, site, ctxMuObj(n.parent))
		emitEdge(trace.OpSyncRelease, site, ctxMuObj(n.parent))
	}
}

// ctxCancelChildren records the child.cancel calls of n's cancel: each
// child not done yet (one done has left n) is locked, its own children
// cancelled inside, and unlocked; n then holds none.
func ctxCancelChildren(n *ctxNode, site uint32) {
	for c := range n.children {
		c.up = nil
		c.traced = true
		if c.ctx.Err() != nil {
			continue
		}
		if c.resolve(); c.a == 0 {
			continue // no Done call made its channel: nothing to record of it
		}
		emitEdge(trace.OpSyncAcquire, site, ctxMuObj(c.a))
		ctxCancelChildren(c, site)
		emitEdge(trace.OpSyncRelease, site, ctxMuObj(c.a))
	}
	n.children = nil
}

// CtxDoneOf is CtxDone for a receive from the Done channel c that returned
// because c was closed: also ctxDoneSeen.
func CtxDoneOf[C ~chan E | ~<-chan E, E any](c C, site uint32) {
	CtxDone(site)
	if on && c != nil && live.Load() {
		ctxDoneSeen(chanAddr(c), site)
	}
}

// ctxDoneSeen records, after a receive from the Done channel at a that
// returned because it was closed, the mutexes of a cancel rt did not see:
// a deadline's, whose timer runs the cancel inside package context
// (timerCtx), or untraced code's. That cancel locked the mutex of the
// context it cancelled, then each descendant's down to this one, before
// it closed the channel: the receive acquires them (this context's, and
// its ancestors' while they are done too). A cancel rt saw (ctxCancelled)
// took them before its release of ctxObj, which CtxDone acquires.
// Held-out croc's TestServerReleasesPort: its relay's context is a child
// of a WithTimeout's, which expires; the relay dialed with the child
// after writing a field its room cleanup reads once the child is done.
func ctxDoneSeen(a uint64, site uint32) {
	if a == 0 {
		return
	}
	ctxTree.mu.Lock()
	defer ctxTree.mu.Unlock()
	n := ctxTree.byAddr[a]
	if n == nil && len(ctxTree.byCtx) > 0 && a != doneOffsets.closed {
		resolveAll() // a channel made since, by a Done call rt did not see
		n = ctxTree.byAddr[a]
	}
	if n == nil {
		emitEdge(trace.OpSyncAcquire, site, ctxMuObj(a))
		return
	}
	for ; n != nil && !n.traced && n.ctx.Err() != nil; n = n.up {
		emitEdge(trace.OpSyncAcquire, site, ctxMuObj(n.a))
	}
}

// ownDone is ctx.Done() called by rt, which may lock the context's mutex
// (its first call makes the channel): rt's look, not the program's, so
// that sync's hook records no edge (ownmutex.go). The program's own
// WithCancel calls it again inside std.
func ownDone(ctx context.Context) <-chan struct{} {
	n := skipBegin()
	defer skipEnd(n)
	return ctx.Done()
}

// ownErr is ctx.Err() called by rt: its load of the context's error (an
// atomic.Value) is rt's look, not the program's (atomichook.go).
func ownErr(ctx context.Context) error {
	n := skipBegin()
	defer skipEnd(n)
	return ctx.Err()
}
