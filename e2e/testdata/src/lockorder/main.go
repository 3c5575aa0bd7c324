// Command lockorder: transfer locks its two accounts in argument order, so
// two transfers in opposite directions can deadlock (AB-BA), though this
// run never does: the first goroutine is waited for before the second
// starts, and the second sleeps before its transfer, so main's runs first. iGoodlock
// (racekit deadlocks) reports main and the second goroutine's transfers;
// the first goroutine's is ordered before both by wg.Wait. guarded takes
// a lock around its transfers in both directions: no cycle.
package main

import (
	"fmt"
	"sync"
	"time"
)

type account struct {
	mu  sync.Mutex
	bal int
}

func transfer(from, to *account, n int) {
	from.mu.Lock()
	defer from.mu.Unlock()
	to.mu.Lock() // deadlock: AB-BA
	defer to.mu.Unlock()
	from.bal -= n
	to.bal += n
}

var bank sync.Mutex

func guarded(from, to *account, n int) {
	bank.Lock()
	defer bank.Unlock()
	transfer(from, to, n)
}

func main() {
	a, b := &account{bal: 100}, &account{bal: 100}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		transfer(a, b, 10)
	}()
	wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Late enough that main's transfer is done: the run never
		// deadlocks, though nothing but time orders the two.
		time.Sleep(100 * time.Millisecond)
		transfer(b, a, 5)
	}()
	transfer(a, b, 1)
	wg.Wait()

	c, d := &account{bal: 100}, &account{bal: 100}
	wg.Add(2)
	go func() { defer wg.Done(); guarded(c, d, 1) }()
	go func() { defer wg.Done(); guarded(d, c, 1) }()
	wg.Wait()
	fmt.Println(a.bal, b.bal, c.bal, d.bal)
}
