// Package rwabba: resource deadlock, AB-BA with read locks. Each side
// read-locks its own index and write-locks the other's: a writer waits for
// the other side's reader, which waits for this side's writer.
//
// truth: deadlock
package rwabba

import (
	"sync"
	"testing"
	"time"
)

type index struct {
	mu sync.RWMutex
	n  int
}

func copyInto(from, to *index) {
	from.mu.RLock()
	defer from.mu.RUnlock()
	to.mu.Lock()
	to.n = from.n
	to.mu.Unlock()
}

func TestSync(t *testing.T) {
	a, b := &index{n: 1}, &index{n: 2}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		copyInto(b, a)
	}()
	copyInto(a, b)
	wg.Wait()
}
