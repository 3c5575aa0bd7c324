// A goroutine writes x, then a file; main polls the file until it can
// read it, then reads x: a write system call is ordered before a later
// read one, as for the Go race detector.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

var x int

func main() {
	dir, _ := os.MkdirTemp("", "iofile")
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "data")
	go func() {
		x = 42
		f, _ := os.Create(name)
		f.Write([]byte("done"))
		f.Close()
	}()
	for {
		f, err := os.Open(name)
		if err != nil {
			time.Sleep(time.Millisecond)
			continue
		}
		buf := make([]byte, 8)
		n, _ := f.Read(buf)
		f.Close()
		if n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	fmt.Println(x)
}
