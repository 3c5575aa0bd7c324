// Package recvleak: channel, a receive that never returns. A consumer
// ranges over a jobs channel that the producer forgets to close.
//
// truth: leak
package recvleak

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestConsume(t *testing.T) {
	jobs := make(chan int)
	var done atomic.Int64
	go func() {
		for j := range jobs {
			done.Add(int64(j))
		}
	}()
	for i := 1; i <= 3; i++ {
		jobs <- i
	}
	// close(jobs) forgotten
	time.Sleep(10 * time.Millisecond)
}
