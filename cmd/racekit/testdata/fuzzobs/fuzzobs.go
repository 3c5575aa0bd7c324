// Package fuzzobs is racekit fuzz's "observed" verdict test
// (fuzz_test.go): Get publishes data through a plain flag (double-checked
// locking without an atomic). Phase 2 creates the race on ready; it never
// creates the race on data (the unlocked read comes after a read of ready
// == true, which comes after the write), yet a recorded run in which the
// second caller takes the fast path has the two accesses to data
// unordered by happens-before: a data race of the Go memory model.
package fuzzobs

import "sync"

var (
	mu    sync.Mutex
	ready bool
	data  int
)

// Get returns data, setting it on the first call.
func Get() int {
	if ready { // FLAG: the unlocked read
		return data // DATA: the unlocked read, after ready
	}
	mu.Lock()
	defer mu.Unlock()
	if !ready {
		data = 42    // DATA: the write
		ready = true // FLAG: the write
	}
	return data
}
