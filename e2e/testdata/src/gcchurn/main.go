// Race-free churn of memory the standard library allocates, with the
// garbage collector running back to back (issue 28, memory reuse): each
// worker gets fresh arrays from hex.DecodeString and fmt.Appendf, which
// allocate in untraced code, and writes into them; one goroutine runs
// runtime.GC() until the workers are done, and each worker computes for a
// while on locals (no event) after fmt.Appendf, so a GC cycle often ends
// between that allocation and the worker's next event. rt writes the
// allocation at that event (rt/mallochook.go); when it dropped it instead,
// once a cycle's marking had ended, the new array kept the accesses of the
// dead one of another worker at its address: a false race. No race.
package main

import (
	"encoding/hex"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

const (
	workers = 4
	rounds  = 1000
)

func main() {
	var stop atomic.Bool
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		for !stop.Load() {
			runtime.GC()
		}
	}()
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			sum := 0
			for r := 0; r < rounds; r++ {
				raw, err := hex.DecodeString("00112233445566778899aabbccddeeff")
				if err != nil {
					panic(err)
				}
				raw[r%len(raw)]++
				msg := fmt.Appendf(nil, "w%d r%d", w, r)
				x := spin(r) // no event: a GC cycle may end here
				msg[0] = 'W' + byte(x&1)
				sum += int(raw[0]) + int(msg[0])
			}
			mu.Lock()
			total += sum
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	stop.Store(true)
	<-gcDone
	fmt.Println("total", total)
}

// spin computes on locals only, which record nothing, for a while.
func spin(r int) int {
	x := float64(r)
	for i := 0; i < 20000; i++ {
		x = math.Sqrt(x + float64(i))
	}
	return int(x)
}
