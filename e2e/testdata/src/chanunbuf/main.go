// An unbuffered channel: the receive is synchronized before the send
// completes, so the receiver's earlier write is visible to the sender after
// its send.
package main

import "fmt"

var x int

func main() {
	ch := make(chan int)
	go func() {
		x = 1
		<-ch
	}()
	ch <- 0
	fmt.Println(x)
}
