// Cancelling a context publishes what was written before: to a goroutine
// that receives from Done, and to one that polls Err.
package main

import (
	"context"
	"fmt"
	"runtime"
	"sync"
)

var result, status int

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		fmt.Println(result)
	}()
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			runtime.Gosched()
		}
		fmt.Println(status)
	}()
	result, status = 1, 2
	cancel()
	wg.Wait()
}
