package confirm

import (
	"sync"
	"time"

	"github.com/racekit/racekit/progress"
)

// fuzzTally counts the runs done and the races created per candidate pair
// (j >= 0) and per package's baseline (j < 0) for fuzz's progress lines:
// one when a pair's last run is done, and one every progress.Interval while
// its runs go on.
type fuzzTally struct {
	prog    *progress.Lines
	pairs   int
	unit    string // what a candidate is: "pair" (a racing pair: a~b), "cycle", "region"
	made    string // what a run that Created did: "created", "deadlocked", "interleaved"
	mu      sync.Mutex
	runs    map[int]int
	created map[int]int
	last    map[int]time.Time
}

func newFuzzTally(prog *progress.Lines, pairs int) *fuzzTally {
	return &fuzzTally{prog: prog, pairs: pairs, unit: "pair", made: "created", runs: map[int]int{}, created: map[int]int{}, last: map[int]time.Time{}}
}

// named sets what the tally's candidates are and what their runs make.
func (f *fuzzTally) named(unit, made string) *fuzzTally {
	f.unit, f.made = unit, made
	return f
}

// done counts run r of unit j (of total runs), named what.
func (f *fuzzTally) done(j int, what string, total int, r Run) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs[j]++
	if r.Created {
		f.created[j]++
	}
	if f.runs[j] < total && time.Since(f.last[j]) < progress.Interval {
		return
	}
	if f.last[j].IsZero() && f.runs[j] < total {
		f.last[j] = time.Now() // its first run: wait progress.Interval for the next line
		return
	}
	f.last[j] = time.Now()
	if j < 0 {
		f.prog.Printf("%s: %d/%d runs", what, f.runs[j], total)
		return
	}
	f.prog.Printf("%s %d/%d %s: %d/%d runs, %d %s", f.unit, j+1, f.pairs, relText(what), f.runs[j], total, f.created[j], f.made)
}

// inParallel calls f(0), ..., f(n-1) on at most workers goroutines and
// returns an error one of the calls returned, nil if none did.
func inParallel(n, workers int, f func(i int) error) error {
	ch := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				if err := f(i); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		ch <- i
	}
	close(ch)
	wg.Wait()
	return first
}
