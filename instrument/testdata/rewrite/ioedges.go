// I/O calls order what the Go race detector sees them order: syscall's
// Read and Write (its ioSync), not recvfrom or sendto; a log call is
// ordered after every earlier one (the Logger's mutex).
package p

import (
	"bufio"
	"bytes"
	"io"
	"log"
	"net/http"
	"net/rpc"
	"os"
	"os/exec"
	"syscall"
)

func raw(fd int, b []byte) {
	syscall.Write(fd, b)
	syscall.Read(fd, b)
	syscall.Sendto(fd, b, 0, nil)
	syscall.Recvfrom(fd, b, 0)
	syscall.Close(fd)
}

func logs(l *log.Logger) {
	log.Println("a")
	l.Printf("%d", 1)
}

// A buffer's WriteTo writes to its io.Writer, ReadFrom reads its io.Reader.
func buffered(b *bytes.Buffer, w io.Writer, r io.Reader) {
	b.WriteTo(w)
	b.ReadFrom(r)
	b.WriteString("x")
}

// A RoundTrip and an RPC Call write a request and read its reply.
func client(rt http.RoundTripper, req *http.Request, c *rpc.Client) {
	rt.RoundTrip(req)
	c.Call("S.M", 1, nil)
	req.Header.Set("k", "v")
}

// A reader that wraps another returns its Read's results: the read's
// acquire comes before the return.
func wrapRead(r io.Reader, b []byte) (int, error) {
	return r.Read(b)
}

func wrapReadRune(r *bufio.Reader) (rune, int, error) {
	if r == nil {
		return 0, 0, io.EOF
	}
	return r.ReadRune()
}

func count(n int, err error) int { return n }

func readCount(r io.Reader, b []byte) int {
	return count(r.Read(b))
}

// A library's logger interface, whose value may be a *log.Logger: the call
// is marked if it holds one.
type stdLogger interface {
	Print(v ...any)
	Println(v ...any)
	Printf(format string, v ...any)
}

var logger stdLogger

func logVia(l stdLogger) {
	l.Printf("%d", 1)
	logger.Print("x")
}

// Through the interface embedded in a struct (grule-rule-engine's
// LogEntry): not marked, the struct's embedded field read as written.
type logEntry struct {
	stdLogger
	level int
}

var entry logEntry

func logViaEntry() {
	entry.Println("x")
	entry.Printf("%d", entry.level)
}

// A go statement's I/O call gets its edges in the new goroutine: the copy
// releases before it and acquires after it, a pipe's write acquires what
// its reader saw, a read acquires; a generic one is left alone.
func goIO(dst io.Writer, src io.Reader, pw *io.PipeWriter, r io.Reader, b []byte) {
	go io.Copy(dst, src)
	go pw.Write(b)
	go r.Read(b)
	go syscall.Write(1, b)
	go generic(src)
}

func generic[T io.Reader](r T) {}

// A deferred I/O call of no arguments records its edges when it runs, at
// the return (rt.IOLater, IOLaterE); one with arguments at the defer
// statement.
func deferredIO(f *os.File, bw *bufio.Writer, cmd *exec.Cmd, x *int) {
	defer f.Close()
	defer bw.Flush()
	defer cmd.Wait()
	defer f.Write([]byte("bye"))
	*x = 1
}
