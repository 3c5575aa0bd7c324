// Bytes a std object holds (a bufio.Reader's buffer, a Scanner's): the
// methods that hand them to the program record their allocation when first
// seen with their object (rt.W1Arrays, rt.R1Arrays), also through a
// pointer parameter; a deferred call records nothing.
package p

import (
	"bufio"
	"net"
)

type conn struct {
	br *bufio.Reader
	sc bufio.Scanner
}

func peek(br *bufio.Reader, c *conn) (int, error) {
	if p, err := br.Peek(2); err == nil && p[0] == 1 {
		return int(p[1]), nil
	}
	line, _, err := c.br.ReadLine()
	if err != nil {
		return 0, err
	}
	n := len(c.sc.Bytes()) + len(line)
	br.Peek(1)
	defer br.ReadSlice('\n')
	return n, nil
}

// A Read method: bufio or io.Copy may call it with a buffer they allocated
// (rt.CallerBuf records it when its caller is untraced).
func (c *conn) Read(p []byte) (int, error) {
	return copy(p, "x"), nil
}

// Not io.Reader's signature: nothing.
func (c *conn) Write(p []byte) error {
	return nil
}

// A listener's address: net allocated it at Listen (rt.HeldPtr).
func port(ln net.Listener, c net.Conn) int {
	return ln.Addr().(*net.TCPAddr).Port + len(c.RemoteAddr().String())
}
