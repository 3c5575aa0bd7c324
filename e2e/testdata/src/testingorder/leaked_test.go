package testingorder

import (
	"sync"
	"testing"
	"time"
)

var leakedX int

var leakDone = make(chan bool, 1)

// TestRaceLeakedGoroutine leaves a goroutine running: package testing
// starts the next top-level test once this one has ended, and nothing
// orders the goroutine's write before that (the next test waits for it
// only after its own write). The sleep, which orders nothing, lets the
// write come before the test's end in time.
func TestRaceLeakedGoroutine(t *testing.T) {
	go func() {
		leakedX = 1 // race: leakednext
		leakDone <- true
	}()
	time.Sleep(20 * time.Millisecond)
}

func TestRaceLeakedGoroutineNext(t *testing.T) {
	leakedX = 2 // race: leakednext
	<-leakDone
}

var joinedX int

// TestNoRaceJoinedBeforeNext: a goroutine the test waits for is ordered
// before the next top-level test.
func TestNoRaceJoinedBeforeNext(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		joinedX = 1
	}()
	wg.Wait()
}

func TestNoRaceJoinedBeforeNextNext(t *testing.T) {
	joinedX = 2
}

var beforeParallel int

// TestNoRaceBeforeParallelThenNext: t.Parallel lets package testing start
// the next top-level test, after what the test did before it.
func TestNoRaceBeforeParallelThenNext(t *testing.T) {
	beforeParallel = 1
	t.Parallel()
}

func TestNoRaceBeforeParallelThenNextNext(t *testing.T) {
	beforeParallel = 2
}
