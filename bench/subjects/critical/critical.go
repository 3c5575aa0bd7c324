// Package critical is a Go version of ConTest's Critical (PECAN Table 1:
// 70 lines, 3 threads, 1 shared variable): two threads guard a "critical
// section" with nothing but a shared turn variable. Each sets the variable
// to its own number and then checks that it still holds it; the other
// thread's store can land between the two, so the check fails, and every
// access to the variable is a data race.
package critical

import "sync"

// Config sizes a run.
type Config struct {
	Iterations int // rounds per thread
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Iterations: 50} }

// Section is the shared state: one variable.
type Section struct {
	turn int
}

// section0 is thread 0's loop: claim, check, count violations. Its claim
// and check are meant to be atomic (racekit anomalies' atomic region).
//
//racekit:atomic
func (s *Section) section0(iters int) (violations int) {
	for i := 0; i < iters; i++ {
		// Unsynchronized store; thread 1 stores and loads the same word.
		s.turn = 0 // racekit:race id=crit-ww,crit-w0r1 kind=race benign=false racekit:race id=crit-av0,crit-av1 kind=atomicity benign=false
		// Thread 1's store may come between the store and this load: the
		// two accesses of thread 0 are meant to be atomic (crit-av0).
		if s.turn != 0 { // racekit:race id=crit-w1r0 kind=race benign=false racekit:race id=crit-av0 kind=atomicity benign=false
			violations++
		}
	}
	return violations
}

// section1 is thread 1's loop, the mirror image.
//
//racekit:atomic
func (s *Section) section1(iters int) (violations int) {
	for i := 0; i < iters; i++ {
		s.turn = 1       // racekit:race id=crit-ww,crit-w1r0 kind=race benign=false racekit:race id=crit-av0,crit-av1 kind=atomicity benign=false
		if s.turn != 1 { // racekit:race id=crit-w0r1 kind=race benign=false racekit:race id=crit-av1 kind=atomicity benign=false
			violations++
		}
	}
	return violations
}

// Result counts the failed checks of each thread.
type Result struct {
	Violations [2]int
	Final      int // the variable after both threads are done
}

// Run starts the two threads from the main one and waits for both.
func Run(cfg Config) Result {
	s := &Section{turn: -1}
	var r Result
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); r.Violations[0] = s.section0(cfg.Iterations) }()
	go func() { defer wg.Done(); r.Violations[1] = s.section1(cfg.Iterations) }()
	wg.Wait()
	r.Final = s.turn
	return r
}
