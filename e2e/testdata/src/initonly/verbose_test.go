package initonly

import "testing"

// TestRaceVerbose: the test writes verbose while a goroutine reads it
// (Log): a race, which the test file's write makes.
func TestRaceVerbose(t *testing.T) {
	done := make(chan int)
	go func() { done <- Log() }()
	verbose = true
	<-done
}
