// os.Exit ends the program without running deferred calls: the trace is
// finished by the instrumented call, and the race before it is reported.
package main

import (
	"fmt"
	"os"
)

// exit: 3

var n int

func main() {
	done := make(chan bool)
	go func() {
		n = 1 // race: n
		done <- true
	}()
	n = 2 // race: n
	<-done
	fmt.Println(n)
	os.Exit(3)
}
