package stdraces

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A file's or connection's own lock, internal/poll's fdMutex: every
// operation on one descriptor locks it with sync/atomic's CompareAndSwap
// on its state word, and a Close marks it closed, so Go's race detector
// orders each operation after every earlier one on the same descriptor,
// and a Close before the operation it made fail. Nothing orders two
// descriptors' operations but the system calls' edge (a write before a
// later read).

// waitSize waits until the file at path holds n bytes: a stat system
// call, which orders nothing under either detector.
func waitSize(t *testing.T, path string, n int64) {
	t.Helper()
	for {
		fi, err := os.Stat(path)
		if err != nil {
			t.Error(err)
			return
		}
		if fi.Size() >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// tempFile creates a file in a directory of t's, closed at t's end (a
// second Close only fails), and returns it and its path.
func tempFile(t *testing.T) (*os.File, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, path
}

// Two writers of one file in turn: the second's lock comes after the
// first's unlock (os.Stderr's writers, a log file's).
func TestNoRaceFileWritersInTurn(t *testing.T) {
	f, path := tempFile(t)
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1
		f.Write([]byte("a"))
	}()
	go func() {
		waitSize(t, path, 1)
		f.Write([]byte("b"))
		*x = 2
		close(done)
	}()
	<-done
}

// A Close, then a Write on another goroutine that fails because of it:
// the Write's lock finds the descriptor closed.
func TestNoRaceCloseThenWriteFails(t *testing.T) {
	f, _ := tempFile(t)
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1
		f.Close()
	}()
	go func() {
		for {
			if _, err := f.Write([]byte("a")); err != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		*x = 2
		close(done)
	}()
	<-done
}

// Two writers of one connection in turn, the second after the server read
// the first's bytes (a read system call, on another descriptor, which the
// first's write is ordered before, but not the second's goroutine).
func TestNoRaceConnWritersInTurn(t *testing.T) {
	got := make(chan bool, 1)
	addr := serveOnce(t, func(c net.Conn) {
		c.Read(make([]byte, 1))
		got <- true
		c.Read(make([]byte, 1))
	})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1
		conn.Write([]byte("a"))
	}()
	go func() {
		for len(got) == 0 {
			time.Sleep(time.Millisecond)
		}
		conn.Write([]byte("b"))
		*x = 2
		close(done)
	}()
	<-done
}

// Writes to two files: each descriptor's lock orders only its own
// operations, and a write system call is ordered before read ones only.
func TestRaceWritersOfTwoFiles(t *testing.T) {
	f1, path1 := tempFile(t)
	f2, _ := tempFile(t)
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1 // race: twofiles
		f1.Write([]byte("a"))
	}()
	go func() {
		waitSize(t, path1, 1)
		f2.Write([]byte("b"))
		*x = 2 // race: twofiles
		close(done)
	}()
	<-done
}

// A read from memory (a bufio.Reader over a strings.Reader) makes no
// system call: a write system call before it on another goroutine orders
// nothing before it.
func TestRaceMemoryReadAfterWriteSyscall(t *testing.T) {
	f, path := tempFile(t)
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1 // race: memread
		f.Write([]byte("a"))
	}()
	go func() {
		waitSize(t, path, 1)
		br := bufio.NewReader(strings.NewReader("line\n"))
		br.ReadString('\n')
		*x = 2 // race: memread
		close(done)
	}()
	<-done
}

// A Close of a pipe's write end is no write system call: the reader's
// read that returns its end of file is ordered after the writes before
// it, not after the Close, under -race as under racekit.
func TestRaceClosePipeThenEOF(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	x := new(int)
	done := make(chan bool)
	go func() {
		w.Write([]byte("a"))
		*x = 1 // race: closepipe
		w.Close()
	}()
	go func() {
		buf := make([]byte, 8)
		for {
			if _, err := r.Read(buf); err != nil {
				break
			}
		}
		*x = 2 // race: closepipe
		close(done)
	}()
	<-done
}

// A Close of one file orders nothing before another goroutine's later
// read system call on another.
func TestRaceCloseThenOtherRead(t *testing.T) {
	f1, _ := tempFile(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f2"), []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1 // race: closeother
		f1.Close()
	}()
	go func() {
		time.Sleep(20 * time.Millisecond)
		os.ReadFile(filepath.Join(dir, "f2"))
		*x = 2 // race: closeother
		close(done)
	}()
	<-done
}
