// Package racysubtest has a race in a subtest: under go test -race -json
// and racekit test -json alike the subtest and its parent fail, each with
// one end event, and the report is among the subtest's output events
// (e2e.TestTestReportJSON).
package racysubtest

var x int

// Twice increments x in two goroutines at once.
func Twice() {
	done := make(chan bool)
	go func() {
		x++ // race: twice
		done <- true
	}()
	x++ // race: twice
	<-done
}
