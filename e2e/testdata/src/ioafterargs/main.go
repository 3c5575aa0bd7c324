// A goroutine writes a message to a pipe with io.WriteString(w,
// s.render()), where render records what it rendered in s, and main reads
// s after reading the message from the pipe. No race: the write to the
// pipe comes after its arguments are evaluated, and go test -race orders
// a file's Write before the Read that sees it (internal/poll's ioSync).
// racekit recorded that release while the first argument (w) was
// evaluated, before render ran, and reported main's read of s.renders
// against render's write, until the release went with the last argument
// (instrument's callexpr: rt.IOBefore).
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

type sender struct {
	renders int
	last    string
}

func (s *sender) render(i int) string {
	s.renders++
	s.last = fmt.Sprintf("message %d", i)
	return s.last + "\n"
}

func main() {
	r, w, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	s := &sender{}
	const n = 5
	go func() {
		for i := 0; i < n; i++ {
			if _, err := io.WriteString(w, s.render(i)); err != nil {
				panic(err)
			}
		}
	}()
	br := bufio.NewReader(r)
	var line string
	for i := 0; i < n; i++ {
		if line, err = br.ReadString('\n'); err != nil {
			panic(err)
		}
	}
	fmt.Println(line == s.last+"\n", s.renders)
}
