// The Account benchmark of the thesis (RDIT, section 4.5, Figures 4.6 and
// 4.7), in Go: two goroutines deposit into their own accounts and add the
// amount to the bank's total without a lock, and main waits for them by
// polling their liveness (liveness.Thread.IsAlive, the part of Java's
// native Thread.isAlive) instead of joining them. The only race is on the
// total (lines marked "race: y"). Traced completely, the liveness checks'
// atomics order main's reads after the deposits, and hb reports only that
// race. With package liveness excluded from tracing (TestAccountBarrierPairs),
// the trace misses that synchronization: hb (fasttrack) reports four false
// alarms besides the race, and rdit, reading each call into liveness as a
// BarrierPair reaching the Thread, reports only the race.
package main

import (
	"fmt"
	"time"

	"racekit.test/e2e/account/liveness"
)

// Account is one bank account.
type Account struct {
	Balance int
}

var bankTotal int // y in the thesis

func main() {
	accounts := []*Account{{}, {}}
	threads := []*liveness.Thread{liveness.New(), liveness.New()}
	x1, x2, t1, t2 := accounts[0], accounts[1], threads[0], threads[1]
	go func() {
		x1.Balance += 100 // thesis line 4
		bankTotal += 100  // race: y
		t1.Exit()
	}()
	go func() {
		time.Sleep(50 * time.Millisecond) // T1 goes first, as in Figure 4.7
		x2.Balance += 200                 // thesis line 7
		bankTotal += 200                  // race: y
		t2.Exit()
	}()
	// Thesis lines 10-14: a join written as a liveness loop.
	for i := 0; i < len(threads); i++ {
		t := threads[i]
		if t.IsAlive() {
			i = -1
			time.Sleep(time.Millisecond)
		}
	}
	sum := x1.Balance     // thesis line 16
	sum += x2.Balance     // thesis line 17
	if sum != bankTotal { // thesis line 19
		fmt.Println("error: the accounts hold", sum, "but the bank's total is", bankTotal)
	}
}
