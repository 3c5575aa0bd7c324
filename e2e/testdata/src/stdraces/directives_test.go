//go:build linux

package stdraces

import (
	"io"
	"log"
	"os"
	"syscall"
	"testing"
)

// What Go's race detector records inside a //go:norace function and around
// raw system calls (lesismal/nbio, whose event loops are all norace and
// syscall: corpus session 55).

// The runtime's slicecopy checks a copy wherever it is made, here in a
// norace test function.
//
//go:norace
func TestRaceCopyInNoraceFunc(t *testing.T) {
	b := make([]byte, 8)
	c := make(chan bool)
	go func() {
		sink = string(b) // race: copy
		c <- true
	}()
	copy(b, "abcdefgh") // race: copy
	<-c
}

//go:norace
func noraceSend(c chan int, v int) { c <- v }

//go:norace
func noraceRecv(c chan int) int { return <-c }

// A norace function's channel operations order what they order.
func TestNoRaceChanInNoraceFunc(t *testing.T) {
	x := new(int)
	c := make(chan int)
	go func() {
		*x = 1
		noraceSend(c, 1)
	}()
	noraceRecv(c)
	sink = *x
}

//go:norace
func noraceWrite(p *int) { *p = 2 }

// A norace function's own loads and stores are not checked.
func TestNoRaceWriteInNoraceFunc(t *testing.T) {
	x := new(int)
	c := make(chan bool)
	go func() {
		noraceWrite(x)
		c <- true
	}()
	noraceWrite(x)
	<-c
}

func socketpair(t *testing.T) [2]int {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fds[0]); syscall.Close(fds[1]) })
	return fds
}

// sendto and recvfrom order nothing for the Go race detector (syscall's
// ioSync is Read's and Write's): the receiver runs after the sender, and
// still races.
func TestRaceAfterRecvfrom(t *testing.T) {
	fds := socketpair(t)
	x := new(int)
	go func() {
		*x = 1 // race: sendto
		syscall.Sendto(fds[0], []byte{1}, 0, nil)
	}()
	syscall.Recvfrom(fds[1], make([]byte, 1), 0)
	sink = *x // race: sendto
}

// Write and Read do.
func TestNoRaceAfterRead(t *testing.T) {
	fds := socketpair(t)
	x := new(int)
	go func() {
		*x = 1
		syscall.Write(fds[0], []byte{1})
	}()
	syscall.Read(fds[1], make([]byte, 1))
	sink = *x
}

// A Logger's calls are ordered by its mutex, whatever it writes to.
func TestNoRaceLoggerOrders(t *testing.T) {
	fds := socketpair(t)
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	l := log.New(null, "", 0)
	x := new(int)
	go func() {
		*x = 1
		l.Print("a")
		syscall.Sendto(fds[0], []byte{1}, 0, nil)
	}()
	syscall.Recvfrom(fds[1], make([]byte, 1), 0)
	l.Print("b")
	sink = *x
}

// But a Logger of io.Discard returns before it takes the mutex.
func TestRaceLoggerOfDiscard(t *testing.T) {
	fds := socketpair(t)
	l := log.New(io.Discard, "", 0)
	x := new(int)
	go func() {
		*x = 1 // race: discard
		l.Print("a")
		syscall.Sendto(fds[0], []byte{1}, 0, nil)
	}()
	syscall.Recvfrom(fds[1], make([]byte, 1), 0)
	l.Print("b")
	sink = *x // race: discard
}
