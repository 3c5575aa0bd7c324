package rftimeout

import (
	"sync"
	"testing"
	"time"
)

func TestQuery(t *testing.T) {
	var pending sync.WaitGroup
	c := NewCache(300 * time.Microsecond)
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(1)
	go func() { // refreshes the cache now and then
		defer bg.Done()
		for k := 0; ; k++ {
			c.Put(k % 4)
			select {
			case <-stop:
				return
			default:
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	for q := 0; q < 4; q++ {
		Query(100, 100*time.Microsecond, &pending)
		c.Get(q % 4)
	}
	close(stop)
	bg.Wait()
	pending.Wait()
}
