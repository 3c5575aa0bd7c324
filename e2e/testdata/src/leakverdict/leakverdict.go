// Package leakverdict: a test leaves a goroutine running, which races with
// the next test. Package testing counts race reports in each test's
// active window, so go test -race fails the test running when the race is
// reported (the next one), not the test that started the goroutine, which
// had passed already; racekit must give each test the same verdict
// (analyze's reportedIn; e2e.TestTestReportJSON).
package leakverdict

import "time"

var x int

// Leak starts a goroutine that writes x 50 ms later, then sends on done.
func Leak(done chan<- bool) {
	go func() {
		time.Sleep(50 * time.Millisecond)
		x = 1 // race: leak
		done <- true
	}()
}

// Write writes x.
func Write() {
	x = 2 // race: leak
}
