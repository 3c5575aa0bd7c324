// A program killed by SIGKILL leaves a trace cut short; its flushed prefix
// still holds the race.
package main

import (
	"os"
	"syscall"
	"time"
)

// exit: killed

var n int

func main() {
	done := make(chan bool)
	go func() {
		n = 1 // race: n
		done <- true
	}()
	n = 2 // race: n
	<-done
	time.Sleep(500 * time.Millisecond) // the flush timer writes the block
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}
