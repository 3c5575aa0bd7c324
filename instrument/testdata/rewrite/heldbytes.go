// Bytes a std object holds (a bufio.Reader's buffer, a Scanner's): their
// allocation is recorded when the program first sees them (rt.HeldBy), in
// every position a result can be used; a discarded, deferred or go call's
// results are not.
package p

import "bufio"

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
