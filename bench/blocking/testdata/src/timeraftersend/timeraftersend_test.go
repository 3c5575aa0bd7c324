// Package timeraftersend: channel, a result sent after its caller gave up.
// The caller selects between the reply and its own done channel, and the
// handler replies on an unbuffered channel after the caller has left.
//
// truth: leak
package timeraftersend

import (
	"testing"
	"time"
)

type request struct {
	reply chan int
}

func serve(reqs <-chan request) {
	for r := range reqs {
		go func() {
			time.Sleep(5 * time.Millisecond)
			r.reply <- 1 // nobody receives: the caller left
		}()
	}
}

func TestCallCancelled(t *testing.T) {
	reqs := make(chan request)
	go serve(reqs)
	done := make(chan struct{})
	close(done) // the caller is cancelled before the reply comes
	r := request{reply: make(chan int)}
	reqs <- r
	select {
	case <-r.reply:
	case <-done:
	}
	close(reqs)
	time.Sleep(20 * time.Millisecond)
}
