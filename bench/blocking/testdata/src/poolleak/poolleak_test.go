// Package poolleak: channel, a worker pool never shut down. Workers range
// over the jobs channel; the pool has no Close, so when the test is done
// with it every worker waits for a job forever.
//
// truth: leak
package poolleak

import (
	"sync"
	"testing"
)

type pool struct {
	jobs chan func()
}

func newPool(n int) *pool {
	p := &pool{jobs: make(chan func())}
	for i := 0; i < n; i++ {
		go func() {
			for f := range p.jobs {
				f()
			}
		}()
	}
	return p
}

func TestPool(t *testing.T) {
	p := newPool(3)
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		p.jobs <- wg.Done
	}
	wg.Wait()
}
