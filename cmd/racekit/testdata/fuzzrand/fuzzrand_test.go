package fuzzrand

import (
	"sync"
	"testing"
)

func TestPool(t *testing.T) {
	var p Pool
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Get()
			p.Put()
		}()
	}
	wg.Wait()
}
