package stdraces

import (
	"context"
	"net"
	"testing"
	"time"
)

// A cancel takes the mutex of each context it cancels: its own, then each
// descendant's in turn (cancelCtx.cancel locks child.mu). What a goroutine
// did before it took a descendant's mutex (a WithCancel of it, or a
// standard-library call that registers with it) happens before the cancel
// of an ancestor returns (held-out schollz/croc: its relay's
// DialContext(s.stop.ctx, ...) and the test's cancel of the parent).
func TestNoRaceCtxCancelDescendant(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	child, cancelChild := context.WithCancel(parent)
	defer cancelChild()
	x := new(int)
	block := make(chan bool)
	go func() {
		*x = 1
		c3, cancel3 := context.WithCancel(child) // propagateCancel: child.mu
		_ = c3
		parkedAfterDone(block)
		cancel3()
	}()
	waitParked(t, "parkedAfterDone")
	cancelParent() // child.cancel: child.mu
	sink = *x
	close(block)
}

// The same two levels down, with the ancestor's cancel deferred: the
// cancel locks each descendant's mutex in turn.
func TestNoRaceCtxCancelGrandchildDeferred(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	child, cancelChild := context.WithCancel(parent)
	defer cancelChild()
	grand, cancelGrand := context.WithTimeout(child, time.Minute)
	defer cancelGrand()
	x := new(int)
	block := make(chan bool)
	go func() {
		*x = 1
		c3, cancel3 := context.WithCancel(grand)
		_ = c3
		parkedAfterDone(block)
		cancel3()
	}()
	waitParked(t, "parkedAfterDone")
	func() { defer cancelParent() }()
	sink = *x
	close(block)
}

// A child cancelled on its own has left its parent: the parent's cancel
// no longer takes its mutex.
func TestRaceCtxCancelRemovedChild(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	child, cancelChild := context.WithCancel(parent)
	cancelChild() // removeChild: parent.children no longer holds it
	x := new(int)
	block := make(chan bool)
	go func() {
		*x = 1 // race: ctxremovedchild
		c3, cancel3 := context.WithCancel(child)
		_ = c3
		parkedAfterDone(block)
		cancel3()
	}()
	waitParked(t, "parkedAfterDone")
	cancelParent()
	sink = *x // race: ctxremovedchild
	close(block)
}

// net's DialContext registers with its context (its connect's
// context.AfterFunc, or the WithDeadline of a Dialer's Timeout), which
// takes the context's mutex, as an ancestor's cancel does after it.
func TestNoRaceCtxDialContext(t *testing.T) {
	l := listenLocal(t)
	parent, cancelParent := context.WithCancel(context.Background())
	child, cancelChild := context.WithCancel(parent)
	defer cancelChild()
	x := new(int)
	block := make(chan bool)
	go func() {
		*x = 1
		var d net.Dialer
		if c, err := d.DialContext(child, "tcp", l.Addr().String()); err == nil {
			defer c.Close()
		}
		parkedAfterDone(block)
	}()
	waitParked(t, "parkedAfterDone")
	cancelParent()
	sink = *x
	close(block)
}

// net.Dial takes no context: nothing orders the write before the cancel.
func TestRaceCtxDialNoContext(t *testing.T) {
	l := listenLocal(t)
	parent, cancelParent := context.WithCancel(context.Background())
	child, cancelChild := context.WithCancel(parent)
	defer cancelChild()
	_ = child.Done()
	x := new(int)
	block := make(chan bool)
	go func() {
		*x = 1 // race: ctxdialnocontext
		if c, err := net.Dial("tcp", l.Addr().String()); err == nil {
			defer c.Close()
		}
		parkedAfterDone(block)
	}()
	waitParked(t, "parkedAfterDone")
	cancelParent()
	sink = *x // race: ctxdialnocontext
	close(block)
}

// listenLocal is a TCP listener on the loopback address that accepts and
// closes connections until the test ends.
func listenLocal(t *testing.T) net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip("no loopback listener:", err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l
}
