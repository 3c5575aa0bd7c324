package chanmsg

import (
	"sync"
	"testing"
)

// A semaphore of capacity 1: the k-th receive (a release) is synchronized
// before the (k+1)-th send (an acquire) completes. (Of chan int: Go's race
// detector keys a buffered channel's edges by buffer slot, and all the
// slots of a channel of struct{} are one address.)
func TestNoRaceSemaphoreOfOne(t *testing.T) {
	sem := make(chan int, 1)
	var x int
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- 0
			x++
			<-sem
		}()
	}
	wg.Wait()
}

// A worker pool of capacity 2 whose holders write disjoint data.
func TestNoRaceSemaphorePool(t *testing.T) {
	sem := make(chan int, 2)
	var d [8]int
	var wg sync.WaitGroup
	for i := range d {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- 0
			d[i]++
			<-sem
		}()
	}
	wg.Wait()
	for i := range d {
		_ = d[i]
	}
}

// Both messages received: the consumer is ordered after both producers.
func TestNoRaceTwoProducersBothReceived(t *testing.T) {
	c := make(chan int, 2)
	var d [2]int
	for i := range 2 {
		go func() {
			d[i] = 1
			c <- i
		}()
	}
	<-c
	<-c
	_ = d[0] + d[1]
}

// A receive that returns because the channel is closed is ordered after
// the close.
func TestNoRaceCloseThenReceive(t *testing.T) {
	c := make(chan int)
	var x int
	go func() {
		x = 1
		close(c)
	}()
	_, ok := <-c
	_ = ok
	_ = x
}

// A range loop ends when the channel is closed: after the close.
func TestNoRaceRangeUntilClose(t *testing.T) {
	c := make(chan int, 3)
	var x int
	go func() {
		for i := range 3 {
			c <- i
		}
		x = 1
		close(c)
	}()
	for range c {
	}
	_ = x
}

// Unbuffered: the receive is synchronized before the send completes.
func TestNoRaceUnbufferedReceiveBeforeSend(t *testing.T) {
	c := make(chan int)
	var x int
	go func() {
		_ = x
		<-c
	}()
	c <- 1
	x = 1
}

// A select's receive orders like a receive.
func TestNoRaceSelectReceive(t *testing.T) {
	c := make(chan int, 1)
	done := make(chan bool)
	var x int
	go func() {
		x = 1
		c <- 1
	}()
	select {
	case <-c:
		_ = x
	case <-done:
	}
}
