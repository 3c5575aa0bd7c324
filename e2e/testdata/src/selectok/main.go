// Select over several channels, with a send case, a receive case, a
// comma-ok receive and a default.
package main

import (
	"fmt"
	"time"
)

var a, b int

func main() {
	in := make(chan int)
	out := make(chan int, 1)
	quit := make(chan struct{})
	go func() {
		a = 1
		in <- 1
		b = <-out
		close(quit)
	}()
	got := 0
	for done := false; !done; {
		select {
		case v := <-in:
			got += v + a
			out <- 2
		case _, ok := <-quit:
			done = !ok
		case <-time.After(5 * time.Second):
			done = true
		default:
			time.Sleep(time.Millisecond)
		}
	}
	fmt.Println(got, b)
}
