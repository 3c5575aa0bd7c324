// Package chanmsg holds channel programs whose races only the Go memory
// model's per-message channel edges expose (and programs those edges
// order), each run under go test -race and recorded by racekit
// (e2e TestChanMessages). "// race: TAG" marks the two lines of a race.
package chanmsg

import (
	"sync"
	"testing"
)

// Two producers send one message each on a buffered channel, the second
// only after the first sent (through ready, which orders nothing the
// consumer sees); the consumer received only the first message, so it is
// not ordered after the second producer's write.
func TestRaceTwoProducers(t *testing.T) {
	c := make(chan int, 2)
	ready := make(chan bool)
	var d [2]int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		d[0] = 1
		c <- 0
		close(ready)
	}()
	go func() {
		defer wg.Done()
		<-ready
		d[1] = 1 // race: second
		c <- 1
	}()
	v := <-c
	_ = d[1-v] // race: second
	wg.Wait()
}

// The same with the receive in a select.
func TestRaceTwoProducersSelect(t *testing.T) {
	c := make(chan int, 2)
	ready := make(chan bool)
	var d [2]int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		d[0] = 1
		c <- 0
		close(ready)
	}()
	go func() {
		defer wg.Done()
		<-ready
		d[1] = 1 // race: second
		c <- 1
	}()
	select {
	case v := <-c:
		_ = d[1-v] // race: second
	}
	wg.Wait()
}

// A semaphore of capacity 2 lets two holders in at once.
func TestRaceSemaphoreOfTwo(t *testing.T) {
	sem := make(chan int, 2)
	var x int
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- 0
			x++ // race: sem
			<-sem
		}()
	}
	wg.Wait()
}

// The receive got the message sent before the write, not the close after
// it.
func TestRaceMessageBeforeClose(t *testing.T) {
	c := make(chan int, 1)
	var x int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c <- 1
		x = 1 // race: close
		close(c)
	}()
	<-c
	_ = x // race: close
	wg.Wait()
}
