package rt

import (
	"context"
	"sync"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

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
	a        uint64   // the Done channel's address
	parent   uint64   // the parent's Done channel's address, 0 if none
	up       *ctxNode // the parent's node, while it holds this one
	traced   bool     // cancelled by a traced cancel (ctxCancelled)
	children map[*ctxNode]struct{}
}

var ctxTree struct {
	mu       sync.Mutex
	byCancel map[uintptr]*ctxNode // by the cancel function's address
	byAddr   map[uint64]*ctxNode  // by the Done channel's address
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
		if a, _ = ctxDoneCalled(p.Done(), site); a != 0 {
			emitEdge(trace.OpSyncAcquire, site, ctxMuObj(a))
			emitEdge(trace.OpSyncRelease, site, ctxMuObj(a))
		}
	}
	id := goid()
	ctxTree.mu.Lock()
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
	var a uint64
	if c := context.Context(ctx); c != nil {
		a = chanAddr(c.Done()) // makes the channel: its address names the context from now on
	}
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
	if a == 0 {
		return ctx, cancel
	}
	n := &ctxNode{ctx: ctx, cancel: cancel, fa: funcAddr(cancel), a: a, parent: pa}
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
	}
	ctxTree.byCancel[n.fa] = n
	ctxTree.byAddr[a] = n
	return ctx, cancel
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
	if ctxTree.byCancel[n.fa] == n {
		delete(ctxTree.byCancel, n.fa)
	}
	if ctxTree.byAddr[n.a] == n {
		delete(ctxTree.byAddr, n.a)
	}
	done := n.ctx.Err() != nil
	n.traced = true
	if n.up != nil {
		// Cancelled by now (by its own cancel, or by its deadline, which
		// rt does not see), a context has left its parent.
		delete(n.up.children, n)
		n.up = nil
	}
	emitEdge(trace.OpSyncAcquire, site, ctxMuObj(n.a))
	if done {
		// Already cancelled: the mutex alone, nothing held any more.
		emitEdge(trace.OpSyncRelease, site, ctxMuObj(n.a))
		return
	}
	ctxCancelChildren(n, site)
	emitEdge(trace.OpSyncRelease, site, ctxMuObj(n.a))
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
	if n == nil {
		emitEdge(trace.OpSyncAcquire, site, ctxMuObj(a))
		return
	}
	for ; n != nil && !n.traced && n.ctx.Err() != nil; n = n.up {
		emitEdge(trace.OpSyncAcquire, site, ctxMuObj(n.a))
	}
}
