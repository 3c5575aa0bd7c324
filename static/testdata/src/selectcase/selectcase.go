// Package selectcase: a select's receive orders only its own branch. The
// goroutine stores result, then closes done; the caller's done branch
// reads result after the close (handoff: no warning), its quit branch
// reads it with nothing ordering the store (the race of bench/subjects'
// selecttimeout, st-partial, which handoff removed while the whole select
// counted as a receive from done).
package main

func query(quit chan bool) (int, bool) {
	var result int
	done := make(chan bool)
	go func() {
		result = 42 // want `potential race on result: write at selectcase\.go:13:3 in goroutine query\$1 started at selectcase\.go:12:2 holding no lock, and read at selectcase\.go:20:10 in query after the go statement at selectcase\.go:12:2 holding no lock`
		close(done)
	}()
	select {
	case <-done:
		return result, true
	case <-quit:
		return result, false
	}
}

func main() {
	query(make(chan bool))
}
