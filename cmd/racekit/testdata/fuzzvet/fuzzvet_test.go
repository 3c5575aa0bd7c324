package fuzzvet

import "testing"

var y int

func TestRun(t *testing.T) {
	if c := Run(); c[0] != 1 || c[1] != 1 {
		t.Fatalf("counts %v", c)
	}
	done := make(chan bool)
	go func() {
		y = 1 // TESTRACE: the child's write
		done <- true
	}()
	y = 2 // TESTRACE: the test's write, before it receives
	<-done
}
