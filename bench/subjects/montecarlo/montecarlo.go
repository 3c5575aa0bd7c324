// Package montecarlo is a Go version of the Java Grande Forum's
// MonteCarlo (RaceFuzzer Table 1: 3,619 lines, 1 real race; PECAN Table 1;
// TREE Table 5.1): a financial simulation that prices by generating many
// random walks of an asset's returns. The main thread prepares one task per
// walk, each carrying its own random-number state, and starts the worker
// threads, each with its block of tasks (JGF's ilow..iupper); a worker
// advances each task's state as it walks, stores the task's result, adds it
// to a shared running total, and at the end appends its results to the
// shared, locked, results list.
//
// The real race is that total: the workers add to it without a lock, so
// additions are lost and the reported expected return is wrong. The random
// state is written by the main thread and then by a worker with no lock in
// common, a lockset false alarm: starting the worker orders them.
package montecarlo

import (
	"math"
	"sync"
)

// Config sizes a run.
type Config struct {
	Tasks   int // random walks
	Steps   int // time steps per walk
	Threads int // worker goroutines
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Tasks: 16, Steps: 20, Threads: 3} }

// Parameters of the underlying asset (as JGF's rate data would give).
const (
	drift      = 0.05
	volatility = 0.2
	dtime      = 1.0 / 365
	startPrice = 100.0
)

// Task is one random walk.
type Task struct {
	ID     int
	seed   uint64  // random state: set by main, advanced by the worker
	Result float64 // final price of the walk
}

// Sim is the shared state of one simulation.
type Sim struct {
	mu      sync.Mutex
	results []float64 // guarded by mu
	total   float64   // running sum of results: updated without mu (the bug)
}

// next advances the task's random state and returns a standard normal
// deviate (Box-Muller over two uniforms).
func (t *Task) next() float64 {
	u := [2]float64{}
	for k := range u {
		// The main thread wrote seed before starting this worker; no
		// common lock, but the go statement orders it.
		t.seed = t.seed*6364136223846793005 + 1442695040888963407 // racekit:norace id=mc-seed why="main writes the seed before the go statement that starts the worker"
		u[k] = (float64(t.seed>>11) + 0.5) / float64(1<<53)
	}
	return math.Sqrt(-2*math.Log(u[0])) * math.Cos(2*math.Pi*u[1])
}

// walk runs one task's random walk and records its result.
func (s *Sim) walk(t *Task, steps int) float64 {
	price := startPrice
	for i := 0; i < steps; i++ {
		ret := (drift-0.5*volatility*volatility)*dtime + volatility*math.Sqrt(dtime)*t.next()
		price *= math.Exp(ret)
	}
	t.Result = price
	// Unlocked read-modify-write from every worker: additions are lost.
	s.total += price // racekit:race id=mc-total kind=race benign=false self
	return price
}

// worker walks tasks[lo:hi] and then appends its results under the lock.
func (s *Sim) worker(tasks []*Task, steps int) {
	mine := make([]float64, 0, len(tasks))
	for _, t := range tasks {
		mine = append(mine, s.walk(t, steps))
	}
	s.mu.Lock()
	s.results = append(s.results, mine...) // racekit:norace id=mc-n1 why="read after wg.Wait joined the writers"
	s.mu.Unlock()
}

// Result is the simulation's output.
type Result struct {
	Mean     float64 // total / tasks, from the racy running sum
	Exact    float64 // mean recomputed from the tasks after the run
	Recorded int     // results in the locked list
}

// Run prepares the tasks, runs the workers and averages.
func Run(cfg Config) Result {
	s := &Sim{}
	tasks := make([]*Task, cfg.Tasks)
	for i := range tasks {
		t := &Task{ID: i}
		t.seed = uint64(i)*0x9E3779B97F4A7C15 + 1 // racekit:norace id=mc-seed why="see Task.next"
		tasks[i] = t
	}
	var wg sync.WaitGroup
	per := (cfg.Tasks + cfg.Threads - 1) / cfg.Threads
	for lo := 0; lo < cfg.Tasks; lo += per {
		hi := min(lo+per, cfg.Tasks)
		wg.Add(1)
		go func(block []*Task) {
			defer wg.Done()
			s.worker(block, cfg.Steps)
		}(tasks[lo:hi])
	}
	wg.Wait()
	r := Result{Mean: s.total / float64(cfg.Tasks), Recorded: len(s.results)} // racekit:norace id=mc-n1 why="read after wg.Wait joined the writers"
	for _, t := range tasks {
		r.Exact += t.Result
	}
	r.Exact /= float64(cfg.Tasks)
	return r
}
