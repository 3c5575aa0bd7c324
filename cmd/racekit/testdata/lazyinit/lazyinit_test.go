package lazyinit

import (
	"sync"
	"testing"
)

func TestWorkers(t *testing.T) {
	p := &Program{}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Work(i)
		}()
	}
	wg.Wait()
}
