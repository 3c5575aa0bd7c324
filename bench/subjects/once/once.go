// Package once is lazy initialization with sync.Once, done right and
// wrong. Right: every reader calls once.Do, which orders the initializer's
// writes before its return in every goroutine; no lock is held, so a
// lockset detector flags the pair (a false alarm). Wrong: a "fast path"
// checks a ready flag outside the Once and skips Do when it is set. The
// flag's read races with the initializer's write, and a reader that takes
// the fast path reads the configuration with nothing ordering it after the
// initializer's writes (flaky: only readers that come late take it).
package once

import (
	"strconv"
	"sync"
)

// Config sizes a run.
type Config struct {
	Readers int
	Keys    int
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Readers: 4, Keys: 8} }

// Settings is configuration loaded on first use.
type Settings struct {
	once   sync.Once
	ready  bool
	values map[string]string
	keys   int
}

func (s *Settings) load() {
	m := make(map[string]string, s.keys)
	for i := 0; i < s.keys; i++ {
		m["k"+strconv.Itoa(i)] = "v" + strconv.Itoa(i) // racekit:race id=once-fast-map kind=race benign=false flaky racekit:norace id=once-do-map why="see once-do"
	}
	s.values = m   // racekit:race id=once-fast kind=race benign=false flaky racekit:norace id=once-do why="once.Do orders the initializer before every Do's return"
	s.ready = true // racekit:race id=once-flag kind=race benign=false
}

// Get is the correct accessor.
func (s *Settings) Get(k string) string {
	s.once.Do(s.load)
	return s.values[k] // racekit:norace id=once-do,once-do-map why="see load"
}

// GetFast is the broken double-check: the flag is read outside the Once.
func (s *Settings) GetFast(k string) string {
	if !s.ready { // racekit:race id=once-flag kind=race benign=false
		s.once.Do(s.load)
	}
	// On the fast path nothing orders this read after load's write.
	return s.values[k] // racekit:race id=once-fast,once-fast-map kind=race benign=false flaky
}

// Result counts correct answers.
type Result struct {
	Lookups int
	Correct int
}

// Run lets readers look up every key, half through each accessor, on one
// Settings each (so that the correct accessor is exercised on its own).
func Run(cfg Config) Result {
	good := &Settings{keys: cfg.Keys}
	bad := &Settings{keys: cfg.Keys}
	var wg sync.WaitGroup
	correct := make([]int, cfg.Readers)
	for r := 0; r < cfg.Readers; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for i := 0; i < cfg.Keys; i++ {
				k := "k" + strconv.Itoa((r+i)%cfg.Keys)
				want := "v" + strconv.Itoa((r+i)%cfg.Keys)
				if good.Get(k) == want {
					correct[r]++
				}
				if bad.GetFast(k) == want {
					correct[r]++
				}
			}
		}(r)
	}
	wg.Wait()
	res := Result{Lookups: 2 * cfg.Readers * cfg.Keys}
	for _, c := range correct {
		res.Correct += c
	}
	return res
}
