package leakverdict

import "testing"

var done = make(chan bool, 1)

func TestLeaker(t *testing.T) { Leak(done) }

// TestVictim writes x at once, then waits for the leaked goroutine's
// write: whichever comes first, the race is reported while TestVictim runs.
func TestVictim(t *testing.T) {
	Write()
	<-done
}

func TestAfter(t *testing.T) {}
