// I/O calls order what the Go race detector sees them order: syscall's
// Read and Write (its ioSync), not recvfrom or sendto; a log call is
// ordered after every earlier one (the Logger's mutex).
package p

import (
	"bytes"
	"io"
	"log"
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
