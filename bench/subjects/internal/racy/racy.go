// Package racy lets the tests of deliberately racy subjects step aside
// under Go's race detector. CI runs `go test -race ./...`; a subject whose
// whole point is a data race would fail it, so its test calls Skip, and is
// exercised without -race (go test ./bench/subjects/..., racekit test,
// racekit bench). Race-free subjects do not call Skip: -race then checks
// their claim to be race-free.
package racy

import (
	"runtime/debug"
	"testing"
)

// Enabled reports whether the binary was built with -race. It is read
// from the build settings, not from the race build tag: racekit gives
// that tag its meaning (code that behaves by it behaves as under -race),
// and the subjects are racekit's to run.
var Enabled = raceBuild()

func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// Skip skips the test when the race detector is on.
func Skip(t testing.TB) {
	t.Helper()
	if Enabled {
		t.Skip("deliberately racy subject; run without -race (see docs/subjects.md)")
	}
}
