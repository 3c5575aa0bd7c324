package stdraces

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A context's own mutex orders what -race sees inside package context: the
// first Done of a context makes its channel under the mutex, and a
// WithTimeout of it as a parent takes the mutex (held-out
// wneessen/go-mail: its test server writes a field, then calls ctx.Done()
// in its accept loop; the test reads the field after a
// context.WithTimeout(ctx, ...)).
func TestNoRaceCtxFirstDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	x := new(int)
	block := make(chan bool)
	go func() {
		*x = 1
		select {
		case <-ctx.Done():
		default:
		}
		parkedAfterDone(block)
	}()
	waitParked(t, "parkedAfterDone")
	c2, cancel2 := context.WithTimeout(ctx, time.Second)
	defer cancel2()
	_ = c2
	sink = *x
	close(block)
}

// A later Done only loads the channel the first one made: it orders
// nothing for a later WithTimeout of the context.
func TestRaceCtxLaterDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = ctx.Done() // the first: here
	x := new(int)
	block := make(chan bool)
	go func() {
		*x = 1 // race: ctxlaterdone
		select {
		case <-ctx.Done():
		default:
		}
		parkedAfterDone(block)
	}()
	waitParked(t, "parkedAfterDone")
	c2, cancel2 := context.WithTimeout(ctx, time.Second)
	defer cancel2()
	_ = c2
	sink = *x // race: ctxlaterdone
	close(block)
}

//go:noinline
func parkedAfterDone(block chan bool) { <-block }

// waitParked waits until some goroutine's stack shows it blocked on a
// channel receive in fn, by reading the stacks (no synchronization the
// race detectors see). A goroutine an earlier test released from fn may
// not have run yet: it is runnable there, not blocked, and does not count
// (it made the tests that follow fail now and then, under -race as under
// racekit, when they ran together: their cancel came before their own
// goroutine had registered).
func waitParked(t *testing.T, fn string) {
	buf := make([]byte, 1<<20)
	for i := 0; i < 5000; i++ {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, "."+fn+"(") && strings.Contains(g, " [chan receive") {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no goroutine reached %s", fn)
}
