// Package rffig1 is Figure 1 of the RaceFuzzer paper (Sen, PLDI'08): a
// real race on z (statements 5 and 7) that reaches ERROR1 when 7 runs
// first, and accesses to x (statements 1 and 10) that hybrid detection
// reports but that cannot be brought next to each other: they are ordered
// through y, which the lock L protects.
package rffig1

import "sync"

var (
	x, y, z int
	L       sync.Mutex
)

// Thread1 is thread1 of Figure 1.
func Thread1() {
	x = 1    // 1
	L.Lock() // 2
	y = 1    // 3
	L.Unlock()
	if z == 1 { // 5
		panic("ERROR1")
	}
}

// Thread2 is thread2 of Figure 1.
func Thread2() {
	z = 1       // 7
	L.Lock()    // 8
	if y == 1 { // 9
		if x != 1 { // 10
			panic("ERROR2")
		}
	}
	L.Unlock() // 14
}

// Run runs both threads from the initial state x = y = z = 0.
func Run() {
	x, y, z = 0, 0, 0
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); Thread1() }()
	go func() { defer wg.Done(); Thread2() }()
	wg.Wait()
}
