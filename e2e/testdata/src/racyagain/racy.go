// Package racyagain has one race that two tests make: go test -race fails
// both, and so must racekit test, which reports the race in the first
// and names it again in the second (e2e.TestTestReportJSON).
package racyagain

// Race writes a new variable from two goroutines, unordered.
func Race() {
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1 // race: x
		done <- true
	}()
	*x = 2 // race: x
	<-done
}
