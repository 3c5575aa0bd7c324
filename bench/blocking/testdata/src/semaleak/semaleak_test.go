// Package semaleak: channel as a semaphore, a slot never given back. Each
// job takes a slot of a buffered channel and gives it back when done; a
// job that fails returns without giving it back, and once both slots are
// lost the next job waits forever.
//
// truth: leak
package semaleak

import (
	"errors"
	"testing"
	"time"
)

var sem = make(chan struct{}, 2)

func job(i int) error {
	sem <- struct{}{}
	if i%2 == 1 {
		return errors.New("failed") // the slot is not given back
	}
	<-sem
	return nil
}

func TestJobs(t *testing.T) {
	for i := 0; i < 4; i++ {
		_ = job(i)
	}
	go job(4) // both slots are lost: waits forever
	time.Sleep(10 * time.Millisecond)
}
