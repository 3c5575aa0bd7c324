// Two sends on a buffered channel are not ordered with each other: their
// senders' writes race (the receiver's reads are ordered after both).
package main

import "fmt"

var x int

func main() {
	ch := make(chan int, 2)
	go func() {
		x = 1 // race: x
		ch <- 1
	}()
	go func() {
		x = 2 // race: x
		ch <- 2
	}()
	<-ch
	<-ch
	fmt.Println(x)
}
