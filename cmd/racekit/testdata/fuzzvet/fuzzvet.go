// Package fuzzvet is racekit fuzz's phase 1 union test (fuzz_test.go):
// one race both hybrid and vet report, one vet reports falsely, and (in
// the test file, which vet does not analyze) one only hybrid reports.
package fuzzvet

import "sync"

// Z is written by both workers without a lock: a real race (both report it).
var Z int

// Run starts two workers and waits for them.
func Run() []int {
	var wg sync.WaitGroup
	counts := make([]int, 2)
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			counts[i]++ // FALSE: each worker its own element (vet cannot tell them apart)
			Z = i       // RACE: both workers write Z
		}(i)
	}
	wg.Wait()
	return counts
}
