// Package pipelineleak: channel, a pipeline stage whose consumer stops
// early. The generator sends numbers until it has sent them all; the
// consumer takes the first three and returns, leaving it blocked on a send
// (the Go blog's "Pipelines and cancellation").
//
// truth: leak
package pipelineleak

import (
	"testing"
	"time"
)

func gen(n int) <-chan int {
	out := make(chan int)
	go func() {
		for i := 0; i < n; i++ {
			out <- i
		}
		close(out)
	}()
	return out
}

func TestFirstThree(t *testing.T) {
	c := gen(10)
	sum := 0
	for i := 0; i < 3; i++ {
		sum += <-c
	}
	if sum != 3 {
		t.Fatal(sum)
	}
	time.Sleep(10 * time.Millisecond)
}
