// main returns while two goroutines it started still run. A binary built
// with -race waits GORACE's atexit_sleep_ms (a second by default) at a
// normal exit, with the other goroutines running and checked, so go test
// -race reports their race and sees what they print; under racekit the
// program must do and report the same (rt/exit.go).
package main

import (
	"fmt"
	"time"
)

// env: GORACE=atexit_sleep_ms=1000

var n int

func main() {
	started := make(chan bool)
	go func() {
		started <- true
		time.Sleep(50 * time.Millisecond)
		n = 1 // race: n
	}()
	go func() {
		time.Sleep(50 * time.Millisecond)
		n = 2 // race: n
		time.Sleep(50 * time.Millisecond)
		fmt.Println("written after main returned")
	}()
	<-started
}
