// Two goroutines append to one slice variable.
package main

import (
	"fmt"
	"sync"
)

var log []string

func main() {
	var wg sync.WaitGroup
	for _, s := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			log = append(log, s) // race: l
		}()
	}
	wg.Wait()
	fmt.Println(len(log))
}
