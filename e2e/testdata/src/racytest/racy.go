// Package racytest has one racy test between clean ones: racekit test's
// report must be shaped as go test -race's (e2e.TestTestReportShape):
// both accesses with their whole stacks, the goroutines' creation stacks,
// the report inside the racy test's output and that test failed.
package racytest

var counter int

// Add increments the counter through two calls, so that both accesses
// have a stack of more than one frame.
func Add() { add() }

func add() {
	counter++ // race: counter
}
