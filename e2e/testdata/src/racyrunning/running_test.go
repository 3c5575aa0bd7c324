// Package racyrunning: a race reported while another test runs fails that
// test too, as go test -race fails every test running when it reports a
// race (testing's checkRaces); a test that ended before it passes.
package racyrunning

import "testing"

var (
	started = make(chan bool)
	raced   = make(chan bool)
	x       int
)

func TestCalm(t *testing.T) {}

func TestRacy(t *testing.T) {
	t.Parallel()
	<-started
	c := make(chan bool)
	go func() {
		x = 1
		c <- true
	}()
	x = 2
	<-c
	raced <- true
}

// TestBystander runs, in parallel with TestRacy, until after its race.
func TestBystander(t *testing.T) {
	t.Parallel()
	started <- true
	<-raced
}
