// A goroutine writes a slice element that main reads, unsynchronized.
package main

import (
	"fmt"
	"time"
)

func main() {
	s := make([]int, 4)
	go func() {
		s[2] = 7 // race: s
	}()
	time.Sleep(10 * time.Millisecond)
	fmt.Println(s[2]) // race: s
}
