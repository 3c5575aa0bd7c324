// Publication through sync/atomic functions: a store releases, a load that
// sees it acquires.
package main

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

var (
	data  [4]int
	ready int32
	hits  int64
)

func main() {
	go func() {
		data[0], data[3] = 1, 4
		atomic.AddInt64(&hits, 1)
		atomic.StoreInt32(&ready, 1)
	}()
	for atomic.LoadInt32(&ready) == 0 {
		runtime.Gosched()
	}
	fmt.Println(data[0]+data[3], atomic.LoadInt64(&hits))
}
