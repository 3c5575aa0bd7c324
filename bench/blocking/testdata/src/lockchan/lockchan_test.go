// Package lockchan: mixed, a lock held across a channel send. The producer
// sends each item while it holds the queue's lock; the consumer takes the
// lock before it receives. If the consumer reaches its Lock while the
// producer is about to send, each waits for the other (a lock and a
// channel: no lock-order cycle).
//
// truth: deadlock
package lockchan

import (
	"sync"
	"testing"
	"time"
)

type queue struct {
	mu    sync.Mutex
	ch    chan int
	count int
}

func (q *queue) produce(v int) {
	q.mu.Lock()
	q.count++
	q.ch <- v // blocks until the consumer receives
	q.mu.Unlock()
}

func (q *queue) consume() int {
	time.Sleep(time.Millisecond)
	q.mu.Lock()
	n := q.count
	q.mu.Unlock()
	return n + <-q.ch
}

func TestQueue(t *testing.T) {
	q := &queue{ch: make(chan int)}
	go func() {
		time.Sleep(20 * time.Millisecond)
		q.produce(1)
	}()
	if q.consume() < 1 {
		t.Fatal("nothing consumed")
	}
}
