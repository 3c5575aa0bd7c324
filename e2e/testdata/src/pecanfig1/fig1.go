// Package pecanfig1 is Figure 1 of the PECAN paper (Huang and Zhang,
// ISSTA'11), rebuilt from its text (see detect/anomaly's papers_test.go):
// statements 1-7, the races (2,5), (2,6) and (3,7); the observed run is
// <1,2,3,5,6,7> here (thread 2 starts late), and running 7 before 3
// reaches ERROR (4).
package pecanfig1

import (
	"sync"
	"time"
)

var (
	x, y int
	l    sync.Mutex
)

// Thread1 is t1 of Figure 1.
func Thread1() {
	l.Lock()
	x = 0 // 1
	l.Unlock()
	y = 1       // 2
	if x == 1 { // 3
		panic("ERROR") // 4
	}
}

// Thread2 is t2 of Figure 1.
func Thread2() int {
	n := 0
	if y == 0 { // 5
		n++
	}
	y = 2 // 6
	l.Lock()
	x = 1 // 7
	l.Unlock()
	return n
}

// Run runs both threads; thread 2 starts late, so that a plain run shows
// the harmless order (3 before 7).
func Run() {
	x, y = 0, 0
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); Thread1() }()
	go func() { defer wg.Done(); time.Sleep(100 * time.Millisecond); Thread2() }()
	wg.Wait()
}
