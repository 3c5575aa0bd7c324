// Channel send, receive, comma-ok receive, close, and range.
package p

func chans(c chan int, out chan<- int, in <-chan int) int {
	c <- 1
	x := <-c
	y, ok := <-in
	if ok {
		out <- x + y
	}
	<-c
	close(out)
	for v := range c {
		x += v
	}
	for range in {
	}
	var z int
	z, ok = <-in
	return x + z
}

func sendExpr(c chan []int, f func() []int) {
	c <- f()
	c <- nil
}

func recvAssign(c chan int) (n int) {
	var v int
	var ok bool
	v = <-c
	v, ok = <-c
	_, ok = <-c
	if ok {
		goto done
	}
	n = <-c // a named result: not shared, assigned in place
done:
	return n + v
}

// Channels made with a direction (testify's isEmpty(make(chan<- struct{}))):
// MakeChan takes every channel type.
func directedMake() (chan<- struct{}, <-chan int) {
	return make(chan<- struct{}), make(<-chan int, 1)
}

// A range over a channel that a goto jumps back to: no block around the
// loop (a goto may not jump into one), its receives recorded all the same.
func gotoRange(c chan int, again bool) (n int) {
retry:
	for v := range c {
		if v < 0 {
			continue retry
		}
		n += v
	}
	if again {
		again = false
		goto retry
	}
	return n
}
