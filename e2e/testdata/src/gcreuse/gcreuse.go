// Command gcreuse races on an object the garbage collector put at the
// address of a dead one that the reading goroutine read earlier in the
// same epoch (only acquires between: atomic loads). The main goroutine
// reads a field of old, lets it die, and waits on atomic loads; the other
// goroutine runs the GC, allocates until it gets old's address back,
// writes the new object, publishes it, and writes it again after the main
// goroutine read it: that second write and the read race (go run -race
// reports them). It prints "no reuse" when the allocator did not give the
// address back (nothing to check then). Not main.go: whether the race
// happens depends on the allocator, so it is not one of TestPrograms'
// ground-truth programs; e2e TestRaceGCReusedAddress runs it.
package main

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// obj's size is its own size class among the program's objects.
type obj struct {
	f   int
	pad [12]int
}

var (
	sink  *obj
	addr  atomic.Uintptr
	fresh atomic.Pointer[obj]
	none  atomic.Bool
)

func main() {
	old := new(obj)
	sink = old // on the heap
	sink = nil
	done := make(chan bool)
	go reuse(done)
	addr.Store(uintptr(unsafe.Pointer(old))) // a release: the read below opens an epoch
	if old.f != 0 {                          // read at old's address
		os.Exit(2)
	}
	old = nil
	var p *obj
	for p == nil && !none.Load() { // atomic loads only acquire: the epoch goes on
		p = fresh.Load()
	}
	if p == nil {
		fmt.Println("no reuse")
		return
	}
	if p.f != 1 { // the racing read, at old's address again
		os.Exit(3)
	}
	<-done
	fmt.Println("reused")
}

func reuse(done chan bool) {
	defer close(done)
	for addr.Load() == 0 {
	}
	a := addr.Load()
	time.Sleep(20 * time.Millisecond) // the main goroutine reads old and drops it
	runtime.GC()
	runtime.GC()
	var keep []*obj
	for i := 0; i < 1_000_000; i++ {
		q := new(obj)
		if uintptr(unsafe.Pointer(q)) == a {
			q.f = 1
			fresh.Store(q)
			time.Sleep(20 * time.Millisecond) // after the main goroutine's read
			q.f = 2                           // races with it
			return
		}
		keep = append(keep, q)
	}
	none.Store(true)
	_ = keep
}
