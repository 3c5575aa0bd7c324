// Publication through the atomic types: Pointer, Bool, Int64 and Value.
package main

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

type config struct{ name string }

var (
	cur   atomic.Pointer[config]
	flag  atomic.Bool
	n     atomic.Int64
	val   atomic.Value
	extra []int
)

func main() {
	go func() {
		cur.Store(&config{name: "a"})
		extra = []int{1}
		n.Add(2)
		val.Store("v")
		flag.Store(true)
	}()
	for !flag.Load() {
		runtime.Gosched()
	}
	fmt.Println(cur.Load().name, len(extra), n.Load(), val.Load())
}
