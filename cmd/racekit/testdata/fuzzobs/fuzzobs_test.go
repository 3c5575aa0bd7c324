package fuzzobs

import (
	"sync"
	"testing"
	"time"
)

// The second caller sleeps so that, recorded, it takes the fast path (no
// synchronization orders it after the first; under racekit fuzz's
// controlled scheduler the sleep is virtual and any order can happen).
func TestGet(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		Get()
	}()
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		if v := Get(); v != 42 {
			t.Errorf("Get() = %d, want 42", v)
		}
	}()
	wg.Wait()
}
