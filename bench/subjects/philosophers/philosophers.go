// Package philosophers is the dining philosophers of the FastTrack/TREE
// benchmarks (TREE Table 5.1, "philo"): each philosopher takes the two
// forks beside it, lower-numbered first so that no cycle can deadlock,
// eats, and puts them back. It is race-free: every shared word (a fork's
// use count and last user, a plate shared by neighbours) is touched only
// while holding the forks that guard it. Its test runs under -race.
package philosophers

import "sync"

// Config sizes a run.
type Config struct {
	Philosophers int
	Meals        int // meals each philosopher eats
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Philosophers: 5, Meals: 20} }

// Fork is one fork.
type Fork struct {
	mu       sync.Mutex
	uses     int // guarded by mu
	lastUser int // guarded by mu
}

// Table holds the forks and the shared bowls: bowl i sits between
// philosophers i and i+1 and is guarded by fork i+1, which both hold
// when they eat from it.
type Table struct {
	forks []*Fork
	bowls []int
}

// NewTable sets a table for n.
func NewTable(n int) *Table {
	t := &Table{bowls: make([]int, n)}
	for i := 0; i < n; i++ {
		t.forks = append(t.forks, &Fork{lastUser: -1})
	}
	return t
}

// dine is philosopher p's life: meals times, take both forks, eat.
func (t *Table) dine(p, meals int) {
	n := len(t.forks)
	left, right := p, (p+1)%n
	first, second := left, right
	if first > second {
		first, second = second, first
	}
	for m := 0; m < meals; m++ {
		t.forks[first].mu.Lock()
		t.forks[second].mu.Lock()
		for _, f := range []*Fork{t.forks[left], t.forks[right]} {
			f.uses++ // racekit:norace id=ph-n1 why="read after wg.Wait joined the writers"
			f.lastUser = p
		}
		// Alternate between the bowl on the right (bowl p, shared with
		// philosopher p+1; both hold fork p+1) and the one on the left
		// (bowl p-1, shared with p-1; both hold fork p).
		b := p
		if m%2 == 1 {
			b = (p + n - 1) % n
		}
		t.bowls[b]++ // racekit:norace id=ph-n2 why="read after wg.Wait joined the writers"
		t.forks[second].mu.Unlock()
		t.forks[first].mu.Unlock()
	}
}

// Result is the fork usage after dinner.
type Result struct {
	Uses  int // fork uses: 2 per meal
	Bowls int // bowl servings: 1 per meal
}

// Run seats the philosophers and waits until all have eaten.
func Run(cfg Config) Result {
	if cfg.Philosophers < 2 {
		cfg.Philosophers = 2
	}
	t := NewTable(cfg.Philosophers)
	var wg sync.WaitGroup
	for p := 0; p < cfg.Philosophers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			t.dine(p, cfg.Meals)
		}(p)
	}
	wg.Wait()
	var r Result
	for i, f := range t.forks {
		r.Uses += f.uses      // racekit:norace id=ph-n1 why="read after wg.Wait joined the writers"
		r.Bowls += t.bowls[i] // racekit:norace id=ph-n2 why="read after wg.Wait joined the writers"
	}
	return r
}
