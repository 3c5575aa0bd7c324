package stdraces

import (
	"log"
	"testing"
)

// A log.Logger's Output writes its line to the logger's writer, a file
// here: the write system call releases what the Go race detector calls
// ioSync, and a read system call of any file acquires it, as for Print
// (held-out schollz/croc: its relay logs a failed Listen, and the test
// goroutine reads from a connection before the cancel after which the
// relay's cleanup reads the field the Listen set).
func TestNoRaceLogOutputOrders(t *testing.T) {
	r, w := osPipe(t)
	x := new(int)
	go func() {
		*x = 1
		log.New(w, "", 0).Output(1, "written")
	}()
	buf := make([]byte, 8)
	if _, err := r.Read(buf); err != nil {
		t.Fatal(err)
	}
	sink = *x
}

// A write after the Output is not ordered by it.
func TestRaceLogOutputAfter(t *testing.T) {
	r, w := osPipe(t)
	x := new(int)
	done := make(chan bool)
	go func() {
		log.New(w, "", 0).Output(1, "written")
		*x = 1 // race: logoutputafter
		close(done)
	}()
	buf := make([]byte, 8)
	if _, err := r.Read(buf); err != nil {
		t.Fatal(err)
	}
	sink = *x // race: logoutputafter
	<-done
}
