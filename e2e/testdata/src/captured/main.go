// A captured local variable written by a goroutine and read by main
// without waiting for it.
package main

import (
	"fmt"
	"time"
)

func main() {
	x := 0
	go func() {
		x = 1 // race: x
	}()
	time.Sleep(10 * time.Millisecond)
	fmt.Println(x) // race: x
}
