package ttlcache

import (
	"sync"
	"testing"
	"time"
)

func TestGets(t *testing.T) {
	var c Cache
	c.Put(time.Millisecond)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Get(5_000_000) // some milliseconds of work, no synchronization
		}()
	}
	wg.Wait()
}
