// Package ring3: resource deadlock, a ring of three: each worker locks its
// own shard, then its right neighbour's, to move one item. All three can
// hold their own and wait for the next. The workers start 10ms apart.
//
// truth: deadlock
package ring3

import (
	"sync"
	"testing"
	"time"
)

type shard struct {
	mu    sync.Mutex
	items int
}

func move(from, to *shard) {
	from.mu.Lock()
	to.mu.Lock()
	from.items--
	to.items++
	to.mu.Unlock()
	from.mu.Unlock()
}

func TestRing(t *testing.T) {
	s := []*shard{{items: 5}, {items: 5}, {items: 5}}
	var wg sync.WaitGroup
	for i := range s {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 10 * time.Millisecond)
			move(s[i], s[(i+1)%len(s)])
		}()
	}
	wg.Wait()
}
