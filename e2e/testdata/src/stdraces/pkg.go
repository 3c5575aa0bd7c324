// Package stdraces is the ground truth of races inside standard-library
// code (instrument/stdcalls.go, the interceptor table), in the style of
// Go's race suite ($GOROOT/src/runtime/race/testdata): each TestRace* has
// one race, between two goroutines, at least one side inside a std
// function (a shared strings.Builder, a slice sorted while it is read),
// marked "// race: TAG" at the user's lines that make it; each TestNoRace*
// uses std code whose synchronization is internal (sync.Map, log.Logger,
// os.File) or uses it correctly, and has none. A test marked
// "// racekit: not seen" is a race go test -race reports that racekit
// does not yet (the reason follows). e2e.TestStdRaces runs every test
// alone, under go test -race and instrumented.
package stdraces

import "time"

// sink keeps results alive.
var sink any

// apart lets the other goroutine's map access finish before the caller's,
// with no happens-before edge between them: two map writes that really
// overlap end the run in the runtime's "fatal error: concurrent map
// writes" before any report (CI, one run in many).
func apart() { time.Sleep(10 * time.Millisecond) }
