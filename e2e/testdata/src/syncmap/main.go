// A sync.Map publishes a value written before Store to a goroutine that
// Loads it.
package main

import (
	"fmt"
	"runtime"
	"sync"
)

type entry struct{ n int }

func main() {
	var m sync.Map
	go func() {
		e := &entry{}
		e.n = 5
		m.Store("k", e)
	}()
	for {
		if v, ok := m.Load("k"); ok {
			fmt.Println(v.(*entry).n)
			return
		}
		runtime.Gosched()
	}
}
