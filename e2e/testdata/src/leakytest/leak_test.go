// Package leakytest has a test that leaves a goroutine blocked forever on
// a send no one receives (line 18), and one whose goroutines all end.
package leakytest

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

func compute(x int) int { return x * 2 }

func TestLeaky(t *testing.T) {
	results := make(chan int)
	for i := 0; i < 2; i++ {
		go func(i int) {
			results <- compute(i) // the second send blocks forever
		}(i)
	}
	// Both senders wait before the one receive begins (the order in which
	// a receive beginning later is no proof that a send completed), and
	// one still waits after it.
	waitSends(2)
	if r := <-results; r < 0 {
		t.Fatal(r)
	}
	waitSends(1)
}

// waitSends waits until n goroutines are blocked in a channel send (a
// fixed sleep was not enough on a loaded machine).
func waitSends(n int) {
	buf := make([]byte, 1<<16)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if strings.Count(string(buf[:runtime.Stack(buf, true)]), "[chan send") == n {
			return
		}
	}
}

func TestClean(t *testing.T) {
	done := make(chan bool)
	go func() { done <- true }()
	<-done
}
