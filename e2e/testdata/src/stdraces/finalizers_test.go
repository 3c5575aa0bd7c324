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
