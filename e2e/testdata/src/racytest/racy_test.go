package racytest

import "testing"

func TestBefore(t *testing.T) {}

func TestRacy(t *testing.T) {
	done := make(chan bool)
	start(done)
	Add()
	<-done
}

// start runs Add in a goroutine created two frames below the test.
func start(done chan bool) {
	go func() {
		Add()
		done <- true
	}()
}

func TestAfter(t *testing.T) {}
