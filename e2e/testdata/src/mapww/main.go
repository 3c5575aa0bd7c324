// Two goroutines write one map. The child writes 50ms after it starts,
// well after main's write in real time, so that the Go runtime's check of
// concurrent map writes (a fatal error) does not fire; nothing orders the
// two writes for a race detector.
package main

import (
	"fmt"
	"time"
)

func main() {
	m := map[string]int{}
	done := make(chan bool)
	go func() {
		time.Sleep(50 * time.Millisecond)
		m["a"] = 1 // race: m
		done <- true
	}()
	m["b"] = 2 // race: m
	<-done
	fmt.Println(len(m))
}
