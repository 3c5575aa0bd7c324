package stdraces

import (
	"runtime"
	"testing"
	"time"
)

// Finalizers and cleanups run on one runtime goroutine. Go's race
// detector orders each batch after everything before it, so a finalizer
// never races with what its object's goroutine did before the object
// died, in a first batch or in any later one; racekit once ordered only
// the first run.

// collect runs the garbage collector and gives the finalizer goroutine
// time to run what it queued.
func collect() {
	runtime.GC()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
}

func TestNoRaceFinalizersInTurn(t *testing.T) {
	for range 3 {
		c := make(chan bool)
		go func() {
			x := new([4]int)
			runtime.SetFinalizer(x, func(x *[4]int) { x[0] = 7 })
			x[0] = 1
			c <- true
		}()
		<-c
		collect()
	}
}

func TestNoRaceCleanupsInTurn(t *testing.T) {
	for range 3 {
		c := make(chan bool)
		go func() {
			x := new([4]int)
			y := new([4]int)
			runtime.AddCleanup(x, func(y *[4]int) { y[0] = 7 }, y)
			y[0] = 1
			runtime.KeepAlive(x)
			c <- true
		}()
		<-c
		collect()
	}
}

func TestRaceFinalizerInTurn(t *testing.T) {
	y := 0
	_ = y
	for i := range 2 {
		c := make(chan bool)
		go func() {
			x := new([4]int)
			runtime.SetFinalizer(x, func(*[4]int) {
				if i == 1 {
					y = 42 // race: fin
				}
			})
			c <- true
		}()
		<-c
		collect()
	}
	y = 66 // race: fin
}

// Two cleanups of one batch run one after the other on one goroutine, but
// Go's race detector runs each in a race context of its own, forked at the
// batch's start: nothing orders one after the other (Go's suite's
// TestRaceBetweenCleanups, with its object of two words so that the
// objects are not in the tiny allocator's blocks).
func TestRaceBetweenCleanupsOfOneBatch(t *testing.T) {
	type obj struct {
		v int
		p *int
	}
	shared := new(int)
	write := func(x int) {
		*shared = x // race: batch
	}
	a, b := new(obj), new(obj)
	runtime.AddCleanup(a, write, 1)
	runtime.AddCleanup(b, write, 2)
	a, b = nil, nil
	collect()
}

// Cleanups of two batches: the later batch starts after everything before
// it, the earlier batch's cleanups included (racefingo), so the two writes
// are ordered though nothing else orders them.
func TestNoRaceCleanupsOfTwoBatches(t *testing.T) {
	type obj struct {
		v int
		p *int
	}
	shared := new(int)
	write := func(x int) { *shared = x }
	for i := range 2 {
		a := new(obj)
		runtime.AddCleanup(a, write, i)
		a = nil
		collect()
	}
}
