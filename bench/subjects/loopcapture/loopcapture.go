// Package loopcapture is the Go bug of goroutines started in a loop that
// capture a variable the loop keeps writing. Before Go 1.22 the loop
// variable itself was that variable; since Go 1.22 each iteration has its
// own, so the program here writes the shared variable explicitly, as code
// that hoists "the current item" out of the loop still does. The
// goroutines read the variable while the loop overwrites it: they may
// process the wrong item, some items twice and others never.
//
// The fixed form, passing the item as an argument, sits beside it.
package loopcapture

import "sync"

// Item is a unit of work.
type Item struct {
	ID     int
	Weight int
}

// Config sizes a run.
type Config struct {
	Items int
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Items: 12} }

func process(it Item) int { return it.ID*100 + it.Weight }

// ProcessAllBuggy starts one goroutine per item; each reads cur, which
// the loop overwrites for the next item.
func ProcessAllBuggy(items []Item) []int {
	results := make([]int, len(items))
	var wg sync.WaitGroup
	var cur Item // pre-1.22 "for _, cur := range items" shared one variable
	for i := range items {
		// The loop's write races with the reads of goroutines started in
		// earlier iterations.
		cur = items[i] // racekit:race id=lc-cur kind=race benign=false
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = process(cur) // racekit:race id=lc-cur kind=race benign=false
		}(i)
	}
	wg.Wait()
	return results
}

// ProcessAll is the fix: each goroutine gets its item as an argument.
func ProcessAll(items []Item) []int {
	results := make([]int, len(items))
	var wg sync.WaitGroup
	for i, it := range items {
		wg.Add(1)
		go func(i int, it Item) {
			defer wg.Done()
			results[i] = process(it)
		}(i, it)
	}
	wg.Wait()
	return results
}

// Items returns n items.
func Items(n int) []Item {
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{ID: i, Weight: i % 7}
	}
	return items
}

// Result compares the two versions.
type Result struct {
	Wrong int // results of the buggy version that differ from the fixed one
	Items int
}

// Run processes the items both ways.
func Run(cfg Config) Result {
	items := Items(cfg.Items)
	good, bad := ProcessAll(items), ProcessAllBuggy(items)
	r := Result{Items: len(items)}
	for i := range good {
		if good[i] != bad[i] {
			r.Wrong++
		}
	}
	return r
}
