// Closing a channel publishes what was written before the close.
package main

import (
	"fmt"
	"sync"
)

var config map[string]string

func main() {
	ready := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-ready
			_ = config["k"]
		}()
	}
	config = map[string]string{"k": "v"}
	close(ready)
	wg.Wait()
	v, ok := <-ready
	fmt.Println(v, ok)
}
