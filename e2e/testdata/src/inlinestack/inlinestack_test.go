package inlinestack

import (
	"sync"
	"testing"
)

func TestRaceThroughWrappers(t *testing.T) {
	c := &Counter{}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		c.Reset()
	}()
	go func() {
		defer wg.Done()
		c.resetTo(7)
	}()
	wg.Wait()
}
