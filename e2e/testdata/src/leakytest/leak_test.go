// Package leakytest has a test that leaves a goroutine blocked forever on
// a send no one receives (line 16), and one whose goroutines all end.
package leakytest

import (
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
	if r := <-results; r < 0 {
		t.Fatal(r)
	}
	time.Sleep(200 * time.Millisecond) // for the second goroutine to reach its send, on a busy machine too
}

func TestClean(t *testing.T) {
	done := make(chan bool)
	go func() { done <- true }()
	<-done
}
