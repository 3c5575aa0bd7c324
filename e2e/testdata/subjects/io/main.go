// I/O-bound subject: two goroutines each write and read back a file in
// small chunks.
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

func churn(dir string, id int) int {
	p := filepath.Join(dir, fmt.Sprint("f", id))
	f, err := os.Create(p)
	if err != nil {
		panic(err)
	}
	w := bufio.NewWriterSize(f, 512)
	line := []byte("racekit io subject line\n")
	for i := 0; i < 50000; i++ {
		w.Write(line)
	}
	w.Flush()
	f.Close()
	f, _ = os.Open(p)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n += len(sc.Bytes())
	}
	return n
}

func main() {
	dir, _ := os.MkdirTemp("", "rkio")
	defer os.RemoveAll(dir)
	var wg sync.WaitGroup
	res := make([]int, 2)
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = churn(dir, i)
		}()
	}
	wg.Wait()
	fmt.Println(res[0] + res[1])
}
