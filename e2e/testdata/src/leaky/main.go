// Command leaky leaves two goroutines blocked forever: a worker sending a
// result no one reads (line 13) and a goroutine receiving from a channel
// never closed (line 25); a third stops when it reads its own close.
package main

import (
	"fmt"
	"time"
)

func worker(jobs <-chan int, results chan<- int) {
	for j := range jobs {
		results <- j * 2 // blocks forever once main stops reading
	}
}

func main() {
	jobs := make(chan int, 2)
	results := make(chan int)
	go worker(jobs, results)
	jobs <- 1
	jobs <- 2
	fmt.Println(<-results)
	done := make(chan struct{})
	go func() { <-done }() // never closed
	quit := make(chan bool)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-quit:
				return
			default:
			}
			if i == 3 {
				close(quit)
			}
		}
	}()
	time.Sleep(200 * time.Millisecond) // for the goroutines to block, on a busy machine too
}
