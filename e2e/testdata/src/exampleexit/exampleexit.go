// Package exampleexit has an example, so racekit gives its tests no
// TestMain (the example would see its frame) and its test binary exits
// through the testing package's os.Exit. A binary built with -race waits
// GORACE's atexit_sleep_ms there (a second by default) with its other
// goroutines running and checked: the race of the two goroutines Late
// leaves behind, 50 ms after the tests are done, is reported by go test
// -race, and must be by racekit (the patched runtime's exit hook,
// rt/exit.go; e2e.TestExampleExitWait).
package exampleexit

import "time"

var n int

// Late starts two goroutines that write n 50 ms later, and returns.
func Late() {
	for i := range 2 {
		go func() {
			time.Sleep(50 * time.Millisecond)
			n = i // race: late
		}()
	}
}
