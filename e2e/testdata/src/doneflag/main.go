// A plain bool used as a completion flag: a data race, whatever the
// sleeps make the schedule.
package main

import (
	"fmt"
	"time"
)

var done bool
var result int

func main() {
	go func() {
		result = 42 // race: r
		done = true // race: d
	}()
	for !done { // race: d
		time.Sleep(time.Millisecond)
	}
	fmt.Println(result) // race: r
}
