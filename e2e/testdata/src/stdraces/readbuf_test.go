package stdraces

import (
	"bytes"
	"io"
	"testing"
)

// A Read writes the bytes it returns, not its whole buffer (rt.Fill): Go's
// race detector sees bytes.Reader's copy of n bytes, and a read system
// call's n bytes.

// The read fills the first bytes of the buffer while another goroutine
// writes the first one.
func TestRaceReadFillsBuffer(t *testing.T) {
	buf := make([]byte, 16)
	r := bytes.NewReader([]byte("abcd"))
	c := make(chan bool)
	go func() {
		buf[0] = 'x' // race: readfill
		c <- true
	}()
	r.Read(buf) // race: readfill
	<-c
}

// io.ReadFull likewise, through the reader it is given.
func TestRaceReadFullFillsBuffer(t *testing.T) {
	buf := make([]byte, 4)
	r := bytes.NewReader([]byte("abcdefgh"))
	c := make(chan bool)
	go func() {
		buf[3] = 'x' // race: readfull
		c <- true
	}()
	io.ReadFull(r, buf) // race: readfull
	<-c
}

// A read of 4 bytes into a 16-byte buffer leaves its tail alone: another
// goroutine writes there at the same time.
func TestNoRaceReadBufferTail(t *testing.T) {
	buf := make([]byte, 16)
	r := bytes.NewReader([]byte("abcd"))
	c := make(chan bool)
	go func() {
		buf[12] = 'x'
		c <- true
	}()
	if n, _ := r.Read(buf); n != 4 {
		t.Fatalf("read %d bytes", n)
	}
	<-c
}

// An io.Pipe's reader copies after it receives the writer's buffer: what
// the writer wrote into the reader's buffer before its Write is ordered
// before the copy (recorded at the release inside the Read, not at its
// call).
func TestNoRacePipeReaderBufferBeforeWrite(t *testing.T) {
	pr, pw := io.Pipe()
	buf := make([]byte, 8)
	go func() {
		buf[0] = 'x'
		pw.Write([]byte("abcd"))
		pw.Close()
	}()
	if n, _ := pr.Read(buf); n != 4 {
		t.Fatalf("read %d bytes", n)
	}
}

// ... and the copy is ordered before what the writer does after its Write
// returns, which waits for the reader to take the data.
func TestNoRacePipeReaderBufferAfterWrite(t *testing.T) {
	pr, pw := io.Pipe()
	buf := make([]byte, 8)
	c := make(chan byte)
	go func() {
		pw.Write([]byte("abcd"))
		c <- buf[0]
	}()
	if n, _ := pr.Read(buf); n != 4 {
		t.Fatalf("read %d bytes", n)
	}
	<-c
}
