package sleepers

import (
	"sync"
	"testing"
	"time"
)

var hits int

// TestRacy races on hits: a pair for racekit fuzz, and a test that
// departs before TestSleepers runs.
func TestRacy(t *testing.T) {
	done := make(chan bool)
	go func() {
		hits++ // RACY
		done <- true
	}()
	hits++ // RACY
	<-done
}

// TestSleepers is issue 33's report: a hundred goroutines that each sleep
// a millisecond, 0.02s in a plain run.
func TestSleepers(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(100)
	for i := 0; i < 100; i++ {
		go func() {
			defer wg.Done()
			time.Sleep(time.Millisecond)
		}()
	}
	wg.Wait()
}

// TestSleepersCalled is the same in the package's own code.
func TestSleepersCalled(t *testing.T) {
	Sleep(100, time.Millisecond)
}
