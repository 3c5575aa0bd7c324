// Package sendleak: channel, a send no one receives. The caller waits for
// the worker's result with a timeout; when the timeout wins, the worker's
// send on the unbuffered channel blocks forever (the most common goroutine
// leak in Go services).
//
// truth: leak
package sendleak

import (
	"testing"
	"time"
)

func fetch(timeout time.Duration) (int, bool) {
	ch := make(chan int)
	go func() {
		time.Sleep(20 * time.Millisecond) // the slow backend
		ch <- 42
	}()
	select {
	case v := <-ch:
		return v, true
	case <-time.After(timeout):
		return 0, false
	}
}

func TestFetchTimeout(t *testing.T) {
	if _, ok := fetch(time.Millisecond); ok {
		t.Log("answered in time")
	}
	time.Sleep(50 * time.Millisecond)
}
