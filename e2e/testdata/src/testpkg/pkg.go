// Package testpkg is tested by racekit test: sequential tests, subtests,
// parallel subtests and a cleanup share package state race-free; one test
// has a race.
package testpkg

var state map[string]int

// Reset makes fresh state.
func Reset() { state = map[string]int{} }

// Inc increments a key.
func Inc(k string) { state[k]++ }

// Get reads a key.
func Get(k string) int { return state[k] }
