// sync.OnceValue computes a table once; callers read it.
package main

import (
	"fmt"
	"sync"
)

var build = sync.OnceValue(func() map[string]int {
	return map[string]int{"a": 1}
})

var init2 = sync.OnceFunc(func() { shared = 3 })

var shared int

func main() {
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			init2()
			_ = build()["a"] + shared
		}()
	}
	wg.Wait()
	fmt.Println(build()["a"])
}
