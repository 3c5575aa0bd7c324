package testingorder

import (
	"testing"
	"testing/synctest"
)

// TestNoRaceSynctestWait: synctest.Wait returns once every other
// goroutine of the bubble is durably blocked, after what they did before.
func TestNoRaceSynctestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var x int
		ch := make(chan bool)
		go func() {
			x = 1
			<-ch
		}()
		synctest.Wait()
		_ = x
		close(ch)
	})
}

// TestNoRaceSynctestReturn: synctest.Test returns after every goroutine of
// the bubble has exited.
func TestNoRaceSynctestReturn(t *testing.T) {
	var x int
	synctest.Test(t, func(t *testing.T) {
		go func() {
			x = 1
		}()
	})
	_ = x
}

var bubbleX int

// TestRaceSynctestBeforeWait: inside a bubble goroutines are concurrent
// until Wait.
func TestRaceSynctestBeforeWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &bubbleX
		go func() {
			*x = 1 // race: bubble
		}()
		*x = 2 // race: bubble
		synctest.Wait()
	})
}
