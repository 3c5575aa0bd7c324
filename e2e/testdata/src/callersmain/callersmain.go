// Package callersmain has a TestMain of its own: its example sees that
// TestMain's frame, and no other, under go test and racekit test alike
// (e2e.TestTestUnchanged).
package callersmain
