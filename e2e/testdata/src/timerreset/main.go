// Resetting a timer is ordered before its firing, so the goroutine woken
// by the timer sees what was written before the Reset.
package main

import (
	"fmt"
	"time"
)

var v int

func main() {
	t := time.NewTimer(time.Hour)
	done := make(chan bool)
	go func() {
		<-t.C
		fmt.Println(v)
		done <- true
	}()
	t.Stop()
	v = 2
	t.Reset(time.Millisecond)
	<-done
}
