// Package rffig2 is Figure 2 of the RaceFuzzer paper (Sen, PLDI'08):
// statement 8 (the read of x) runs after many statements of thread1, and
// statement 10 (the write) at the start of thread2, so a plain run almost
// never runs 10 after 8 and reaches ERROR; RaceFuzzer creates the race
// with probability 1 and reaches ERROR in half of the runs, whatever the
// number of statements before 8.
package rffig2

import "sync"

var (
	x     int
	L     sync.Mutex
	M     sync.Mutex
	steps int
)

// f is one of the statements f1()...f5() before statement 8. It locks M,
// so each is a scheduling point of racekit's controlled scheduler (a lock,
// unlike an atomic operation, adds no edge to hybrid detection's
// happens-before).
func f() {
	M.Lock()
	steps++
	M.Unlock()
}

// Run runs Figure 2 with n statements before statement 8.
func Run(n int) {
	x = 0
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // thread1
		defer wg.Done()
		L.Lock() // 1
		for i := 0; i < n; i++ {
			f() // 2-6
		}
		L.Unlock()  // 7
		if x == 0 { // 8
			panic("ERROR") // 9
		}
	}()
	go func() { // thread2
		defer wg.Done()
		x = 1    // 10
		L.Lock() // 11
		f()      // 12
		L.Unlock()
	}()
	wg.Wait()
}

// ready is only read (true from the start): reading it races with nothing.
var ready = true

// RunGuarded is Run with statement 8 reading ready first, on the same
// line. That read is harmless, but a pair given by lines made it a point
// of the pair: thread1 waited there, thread2 at 10, neither racing the
// other, and the random release of thread2 ran 10 before 8 came, so
// about half the runs missed the race. Named by its accesses (phase 1's
// hybrid pairs carry the column and the kind), the pair is 8's read of x
// and 10's write, and the race is created in every run (§3.2).
func RunGuarded(n int) {
	x = 0
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // thread1
		defer wg.Done()
		L.Lock() // 1
		for i := 0; i < n; i++ {
			f() // 2-6
		}
		L.Unlock()           // 7
		if ready && x == 0 { // 8g
			panic("ERROR") // 9
		}
	}()
	go func() { // thread2
		defer wg.Done()
		x = 1    // 10g
		L.Lock() // 11
		f()      // 12
		L.Unlock()
	}()
	wg.Wait()
}
