// Package waitgroup is the WaitGroup misuse of calling Add inside the
// goroutine instead of before the go statement, here through a task
// tracker whose Begin calls Add (go vet's waitgroup check sees only a
// direct wg.Add at the top of a go func). Wait can then run while the
// counter is still zero and return at once; the caller reads the results
// the goroutines are still writing. The results are even written under a
// mutex, but the caller, trusting Wait, reads them without it. The fixed
// form calls Begin before starting each goroutine.
package waitgroup

import (
	"sync"
	"sync/atomic"
)

// Config sizes a run.
type Config struct {
	Workers int
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Workers: 6} }

// Collector gathers squares.
type Collector struct {
	mu  sync.Mutex
	out []int
}

func (c *Collector) add(v int) {
	c.mu.Lock()
	// Written under mu, read by the buggy caller without it, ordered only
	// if the goroutine's Add happened before Wait.
	c.out = append(c.out, v) // racekit:race id=wg-add-late kind=race benign=false flaky racekit:norace id=wg-n1 why="the fixed Collect reads after a Wait that follows every Begin"
	c.mu.Unlock()
}

// Tracker counts running tasks. When Begin comes too late, the sync
// package sometimes notices (an Add that races with a Wait being woken
// panics with "WaitGroup misuse" or "WaitGroup is reused before previous
// Wait has returned"); the tracker counts those panics instead of
// crashing, so that the subject runs to the end whatever the schedule.
type Tracker struct {
	wg       sync.WaitGroup
	detected atomic.Int32 // misuse panics the sync package raised
}

func (t *Tracker) recover() {
	if p := recover(); p != nil {
		t.detected.Add(1)
	}
}

// Begin registers a task.
func (t *Tracker) Begin() {
	defer t.recover()
	t.wg.Add(1)
}

// End marks a task done.
func (t *Tracker) End() {
	defer t.recover()
	t.wg.Done()
}

// Wait waits for the registered tasks.
func (t *Tracker) Wait() {
	defer t.recover()
	t.wg.Wait()
}

// square computes i*i the slow way (a worker's setup).
func square(i int) int {
	s := 0
	for k := 0; k < 20000; k++ {
		s += i
	}
	return s / 20000 * i
}

// CollectBuggy starts the workers, each registering itself. The second
// result lets the caller wait for workers still running after the tracker's
// Wait returned (so that the program does not exit under them); it is
// waited on after the results were read, so it orders nothing before them.
func CollectBuggy(n int) ([]int, *sync.WaitGroup) {
	c := &Collector{}
	var tr Tracker
	stragglers := &sync.WaitGroup{}
	for i := 0; i < n; i++ {
		stragglers.Add(1)
		go func(i int) {
			defer stragglers.Done()
			v := square(i) // setup before registering: the window grows
			tr.Begin()     // too late: Wait may already have returned
			defer tr.End()
			c.add(v)
		}(i)
	}
	tr.Wait()
	// Believed ordered after every worker by Wait; it is not when Wait saw
	// a zero counter. (Flaky: a worker that already ran Begin and End
	// before Wait is ordered.)
	return append([]int(nil), c.out...), stragglers // racekit:race id=wg-add-late kind=race benign=false flaky
}

// Collect is the fix.
func Collect(n int) []int {
	c := &Collector{}
	var tr Tracker
	for i := 0; i < n; i++ {
		tr.Begin()
		go func(i int) {
			defer tr.End()
			c.add(i * i)
		}(i)
	}
	tr.Wait()
	return c.out // racekit:norace id=wg-n1 why="see add"
}

// Result compares the two.
type Result struct {
	Fixed int // results the fixed version returned: all of them
	Buggy int // results the buggy version returned: maybe fewer
}

// Run collects both ways.
func Run(cfg Config) Result {
	r := Result{Fixed: len(Collect(cfg.Workers))}
	got, stragglers := CollectBuggy(cfg.Workers)
	r.Buggy = len(got)
	stragglers.Wait()
	return r
}
