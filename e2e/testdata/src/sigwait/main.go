// A program that waits to be terminated by a signal it does not handle;
// racekit run finishes its trace before it dies.
package main

import (
	"fmt"
	"time"
)

// exit: signal

var n int

func main() {
	done := make(chan bool)
	go func() {
		n = 1 // race: n
		done <- true
	}()
	n = 2 // race: n
	<-done
	fmt.Println("ready")
	time.Sleep(time.Minute)
}
