// A panic in main kills the program; the trace is finished on the way out.
package main

// exit: 2

var n int

func main() {
	done := make(chan bool)
	go func() {
		n++ // race: n
		done <- true
	}()
	n++ // race: n
	<-done
	panic("boom")
}
