package stdraces

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"net/textproto"
	"os"
	"strings"
	"testing"
	"time"
)

// System calls order what Go's race detector sees them order: every write
// system call (syscall.Write, Pwrite, Sendfile) before every later read one
// (syscall.Read, Pread), whatever standard-library call they run inside
// (syscall's ioSync). racekit records those edges at the system calls
// themselves (its patched package syscall), not only around the calls its
// table names as I/O.

// A TLS client's first Write runs the handshake, whose read system calls
// take what the server wrote before its handshake's writes (held-out
// wneessen/go-mail's TestSendMail/fail_on_STARTTLS: textproto's PrintfLine
// on a tls.Client, a write that reads).
func TestNoRaceTLSHandshakeInWrite(t *testing.T) {
	cert := selfSigned(t)
	x := new(int)
	addr := serveOnce(t, func(c net.Conn) {
		*x = 1
		s := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
		s.Handshake()
		s.Read(make([]byte, 1)) // until the client closes
	})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := tls.Client(conn, &tls.Config{InsecureSkipVerify: true})
	defer c.Close()
	if _, err := c.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	sink = *x
}

// textproto's Cmd writes its command line: a write system call the
// server's read of the line comes after.
func TestNoRaceTextprotoCmdOrders(t *testing.T) {
	x := new(int)
	done := make(chan bool)
	addr := serveOnce(t, func(c net.Conn) {
		defer close(done)
		if _, err := textproto.NewConn(c).ReadLine(); err != nil {
			return
		}
		sink = *x
	})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	*x = 1
	if _, err := textproto.NewConn(conn).Cmd("HELO %s", "x"); err != nil {
		t.Fatal(err)
	}
	<-done
}

// A read system call writes its buffer before it acquires (syscall.Read's
// WriteRange, then its Acquire): a file's Read into the program's buffer
// is not ordered after what the writer did to that buffer before its
// write system call.
func TestRaceReadSyscallBufferBeforeAcquire(t *testing.T) {
	r, w := osPipe(t)
	buf := make([]byte, 8)
	go func() {
		sink = buf[0] // race: syscallreadbuf
		w.Write([]byte("x"))
	}()
	if _, err := r.Read(buf); err != nil { // race: syscallreadbuf
		t.Fatal(err)
	}
}

// A bufio.Writer's Write that only fills its buffer makes no system call:
// it orders nothing under go test -race, and a read system call another
// goroutine makes after it takes nothing from it.
func TestRaceBufferedWriteNoSyscall(t *testing.T) {
	_, w := osPipe(t)
	bw := bufio.NewWriterSize(w, 4096)
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1 // race: bufferedwrite
		bw.WriteString("x")
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	if _, err := os.ReadFile("syscallio_test.go"); err != nil {
		t.Fatal(err)
	}
	sink = *x // race: bufferedwrite
	<-done
}

// fmt's Fprintf into a strings.Builder writes memory, not a file: no
// system call, no edge.
func TestRaceFprintfToBuilderNoSyscall(t *testing.T) {
	var sb strings.Builder
	x := new(int)
	done := make(chan bool)
	go func() {
		*x = 1 // race: fprintfbuilder
		fmt.Fprintf(&sb, "%d", 1)
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	if _, err := os.ReadFile("syscallio_test.go"); err != nil {
		t.Fatal(err)
	}
	sink = *x // race: fprintfbuilder
	<-done
}
