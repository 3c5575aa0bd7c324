// Command linescan counts the lines of a file with bufio.Reader.ReadSlice:
// the floor for any Go text-trace reader, and the baseline that
// bench/std-throughput.sh prints beside racekit's STD reader.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: linescan FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	start := time.Now()
	r := bufio.NewReaderSize(f, 1<<20)
	n := 0
	for {
		_, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		n++
	}
	d := time.Since(start)
	fmt.Printf("linescan: %s: %d lines in %v: %.2fM lines/s\n", os.Args[1], n, d.Round(time.Millisecond), float64(n)/d.Seconds()/1e6)
}
