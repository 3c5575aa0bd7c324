// Package racy lets the tests of deliberately racy subjects step aside
// under Go's race detector. CI runs `go test -race ./...`; a subject whose
// whole point is a data race would fail it, so its test calls Skip, and is
// exercised without -race (go test ./bench/subjects/..., racekit test,
// racekit bench). Race-free subjects do not call Skip: -race then checks
// their claim to be race-free.
package racy

import "testing"

// Skip skips the test when the race detector is on.
func Skip(t testing.TB) {
	t.Helper()
	if Enabled {
		t.Skip("deliberately racy subject; run without -race (see docs/subjects.md)")
	}
}
