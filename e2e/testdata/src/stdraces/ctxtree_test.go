package stdraces

import (
	"context"
	"net"
	"reflect"
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
	read := make(chan int)
	go func() {
		<-child.Done() // closed by child.cancel, under child.mu
		read <- *x
	}()
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
	sink = <-read
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
// takes the context's mutex, as an ancestor's cancel does after it,
// before it closes the channel another goroutine waits on (held-out
// croc's relay, in its shape: a field written, then a goroutine that
// dials; the room cleanup reads the field once the context is done).
func TestNoRaceCtxDialContext(t *testing.T) {
	l := listenLocal(t)
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()
	type stop struct {
		ctx    context.Context
		cancel context.CancelFunc
		server *int
	}
	s := &stop{}
	s.ctx, s.cancel = context.WithCancel(parent)
	done := make(chan bool)
	go func() {
		ticker := time.NewTicker(time.Hour)
		defer ticker.Stop()
		select {
		case <-ticker.C:
		case <-s.ctx.Done():
			sink = *s.server
		}
		close(done)
	}()
	block := make(chan bool)
	go func() {
		s.server = new(int)
		go func() {
			d := &net.Dialer{Timeout: time.Second}
			if c, err := d.DialContext(s.ctx, "tcp", l.Addr().String()); err == nil {
				c.Close()
			}
			parkedAfterDone(block)
		}()
	}()
	waitParked(t, "parkedAfterDone")
	cancelParent()
	<-done
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

// A deadline cancels its context on the timer's goroutine, inside package
// context, which locks each descendant's mutex before it closes the
// descendant's channel (held-out croc's TestServerReleasesPort: a relay
// whose context is a child of a WithTimeout's).
func TestNoRaceCtxDeadlineDescendant(t *testing.T) {
	parent, cancelParent := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancelParent()
	child, cancelChild := context.WithCancel(parent)
	defer cancelChild()
	_ = child.Done() // the first Done: here, so the writer's orders nothing
	x := new(int)
	read := make(chan int)
	go func() {
		ticker := time.NewTicker(time.Hour)
		defer ticker.Stop()
		select {
		case <-ticker.C:
		case <-child.Done():
			read <- *x
		}
	}()
	block := make(chan bool)
	go func() {
		*x = 1
		c3, cancel3 := context.WithCancel(child) // propagateCancel: child.mu
		_ = c3
		parkedAfterDone(block)
		cancel3()
	}()
	sink = <-read
	close(block)
}

// The same with the write ordered before another context's mutex only.
func TestRaceCtxDeadlineOtherContext(t *testing.T) {
	parent, cancelParent := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancelParent()
	child, cancelChild := context.WithCancel(parent)
	defer cancelChild()
	other, cancelOther := context.WithCancel(context.Background())
	defer cancelOther()
	x := new(int)
	read := make(chan int)
	go func() {
		ticker := time.NewTicker(time.Hour)
		defer ticker.Stop()
		select {
		case <-ticker.C:
		case <-child.Done():
			read <- *x // race: ctxdeadlineother
		}
	}()
	block := make(chan bool)
	go func() {
		*x = 1 // race: ctxdeadlineother
		c3, cancel3 := context.WithCancel(other)
		_ = c3
		parkedAfterDone(block)
		cancel3()
	}()
	sink = <-read
	close(block)
}

// A non-nil Err is an atomic load of what the deadline's cancel stored
// under the context's mutex, after it took the mutex: as a receive from
// Done, it is ordered after what came before a registration with the
// context.
func TestNoRaceCtxErrAfterDeadline(t *testing.T) {
	parent, cancelParent := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancelParent()
	child, cancelChild := context.WithCancel(parent)
	defer cancelChild()
	_ = child.Done() // the first Done: here, so the writer's orders nothing
	x := new(int)
	block := make(chan bool)
	go func() {
		*x = 1
		c3, cancel3 := context.WithCancel(child) // propagateCancel: child.mu
		_ = c3
		parkedAfterDone(block)
		cancel3()
	}()
	for child.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	sink = *x
	close(block)
}

// A nil Err loads nothing a cancel stored: it orders nothing, not even
// after another context's cancel.
func TestRaceCtxErrNil(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	other, cancelOther := context.WithCancel(context.Background())
	_ = other
	x := new(int)
	block := make(chan bool)
	go func() {
		*x = 1 // race: ctxerrnil
		cancelOther()
		parkedAfterDone(block)
	}()
	waitParked(t, "parkedAfterDone")
	if ctx.Err() == nil {
		sink = *x // race: ctxerrnil
	}
	close(block)
}

// Recording a context must not change it: two fresh contexts made alike
// are reflect.DeepEqual, as gomock's argument matchers compare them
// (held-out tus/tusd's gcsstore tests expect a call with a
// context.WithCancel(context.Background()) of their own; racekit, which
// called Done on each new context to name it, made their channels, and
// the mock saw different contexts), and stay so after a Done of a third.
func TestNoRaceCtxUnchangedByRecording(t *testing.T) {
	a, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	b, cancelB := context.WithCancelCause(context.Background())
	defer cancelB(nil)
	c, cancelC := context.WithCancel(context.Background())
	defer cancelC()
	d, cancelD := context.WithCancelCause(context.Background())
	defer cancelD(nil)
	<-time.After(time.Millisecond) // a receive racekit records, unrelated
	if !reflect.DeepEqual(a, c) || !reflect.DeepEqual(b, d) {
		t.Fatal("two fresh contexts made alike differ")
	}
}
