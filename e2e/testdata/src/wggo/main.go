// WaitGroup.Go (Go 1.25) starts goroutines whose ends Wait waits for.
package main

import (
	"fmt"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	parts := make([]string, 3)
	prefix := "p"
	for i := range parts {
		wg.Go(func() {
			parts[i] = prefix + fmt.Sprint(i)
		})
	}
	wg.Wait()
	prefix = "q"
	fmt.Println(parts, prefix)
}
