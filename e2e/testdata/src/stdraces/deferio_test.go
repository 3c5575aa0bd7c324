package stdraces

import (
	"bufio"
	"fmt"
	"testing"
)

// A deferred I/O call runs when the function returns: its write system
// call releases then, after what the function did after the defer
// statement (a goroutine that buffers a line, defers the Flush and sets a
// result before it returns; the reader of the pipe reads the result).
func TestNoRaceDeferredFlush(t *testing.T) {
	r, w := osPipe(t)
	x := new(int)
	go func() {
		bw := bufio.NewWriter(w)
		defer bw.Flush()
		bw.WriteString("line\n")
		*x = 1
	}()
	buf := make([]byte, 5)
	if _, err := r.Read(buf); err != nil {
		t.Fatal(err)
	}
	sink = *x
}

// A write after the deferred call has run (in the caller, after the
// function returned) is not ordered by it.
func TestRaceDeferredFlushThenWrite(t *testing.T) {
	r, w := osPipe(t)
	x := new(int)
	done := make(chan bool)
	go func() {
		func() {
			bw := bufio.NewWriter(w)
			defer bw.Flush()
			bw.WriteString("line\n")
		}()
		*x = 1 // race: deferredflushthenwrite
		close(done)
	}()
	buf := make([]byte, 5)
	if _, err := r.Read(buf); err != nil {
		t.Fatal(err)
	}
	sink = *x // race: deferredflushthenwrite
	<-done
}

// A deferred I/O call with arguments writes when it runs too: its system
// call's release comes after the function's last writes (racekit's edge
// at the defer statement alone, where the arguments are evaluated, left
// the write of x after it unordered).
func TestNoRaceDeferredWriteWithArgs(t *testing.T) {
	r, w := osPipe(t)
	x := new(int)
	go func() {
		defer fmt.Fprintln(w, "done")
		*x = 1
	}()
	buf := make([]byte, 5)
	if _, err := r.Read(buf); err != nil {
		t.Fatal(err)
	}
	sink = *x
}
