package jobsys

import (
	"container/heap"
	"errors"
	"sync"
)

// ErrQueueClosed is returned by Push after Close.
var ErrQueueClosed = errors.New("queue closed")

// jobHeap orders jobs by priority, then by ID (FIFO within a priority).
type jobHeap []*Job

func (h jobHeap) Len() int { return len(h) }
func (h jobHeap) Less(i, k int) bool {
	if h[i].spec.Priority != h[k].spec.Priority { // racekit:norace id=js-spec-prio why="Submit writes the spec before Push takes the queue lock"
		return h[i].spec.Priority > h[k].spec.Priority // racekit:norace id=js-spec-prio why="see Submit"
	}
	return h[i].id < h[k].id // racekit:norace id=js-id why="see Registry.add"
}
func (h jobHeap) Swap(i, k int) { h[i], h[k] = h[k], h[i] }
func (h *jobHeap) Push(x any)   { *h = append(*h, x.(*Job)) }
func (h *jobHeap) Pop() any {
	old := *h
	n := len(old)
	j := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return j
}

// Queue is a blocking priority queue.
type Queue struct {
	mu       sync.Mutex
	nonEmpty *sync.Cond
	h        jobHeap
	closed   bool
	pushed   int
	popped   int
}

// NewQueue returns an empty queue.
func NewQueue() *Queue {
	q := &Queue{}
	q.nonEmpty = sync.NewCond(&q.mu)
	return q
}

// Push adds a job.
func (q *Queue) Push(j *Job) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrQueueClosed
	}
	heap.Push(&q.h, j)
	q.pushed++
	q.nonEmpty.Signal()
	return nil
}

// Pop blocks until a job is available or the queue is closed and empty;
// it also returns when wake is called (ok false, closed false).
func (q *Queue) Pop() (j *Job, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.h) == 0 && !q.closed {
		q.nonEmpty.Wait()
		if len(q.h) == 0 && !q.closed {
			return nil, false // woken for another reason (a resize)
		}
	}
	if len(q.h) == 0 {
		return nil, false
	}
	q.popped++
	return heap.Pop(&q.h).(*Job), true
}

// wake wakes every waiting worker (after a resize, so that surplus
// workers notice they must exit).
func (q *Queue) wake() {
	q.mu.Lock()
	q.nonEmpty.Broadcast()
	q.mu.Unlock()
}

// Close stops further pushes and wakes all poppers.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.nonEmpty.Broadcast()
	q.mu.Unlock()
}

// Closed reports whether Close was called.
func (q *Queue) Closed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

// Len is the number of queued jobs.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.h)
}

// Counts returns the pushes and pops so far.
func (q *Queue) Counts() (pushed, popped int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pushed, q.popped
}
