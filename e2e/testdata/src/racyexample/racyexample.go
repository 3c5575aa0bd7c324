// Package racyexample has examples, so racekit gives its tests no TestMain
// (an example would see its frame) and checkpoints the trace at the end
// of each test and example instead: the races of its test and of its
// last example, which runs last of all, are reported as under go test
// -race (e2e.TestTestCheckpoints).
package racyexample

var counter, total int

// Twice increments counter in two goroutines at once and waits for both.
func Twice() {
	done := make(chan bool)
	for range 2 {
		go func() {
			counter++ // race: twice
			done <- true
		}()
	}
	<-done
	<-done
}

// Sum adds to total in two goroutines at once and waits for both.
func Sum() {
	done := make(chan bool)
	for range 2 {
		go func() {
			total += 2 // race: sum
			done <- true
		}()
	}
	<-done
	<-done
}
