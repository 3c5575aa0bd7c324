// Writes before a go statement are visible to the new goroutine, through a
// method value, a function variable and a closure with arguments.
package main

import (
	"fmt"
	"sync"
)

type worker struct {
	in  []int
	out int
	wg  *sync.WaitGroup
}

func (w *worker) run() {
	defer w.wg.Done()
	for _, v := range w.in {
		w.out += v
	}
}

var shared = map[string]int{}

func main() {
	var wg sync.WaitGroup
	w := &worker{wg: &wg}
	w.in = []int{1, 2}
	shared["x"] = 1
	wg.Add(3)
	go w.run()
	f := func(k string) {
		defer wg.Done()
		_ = shared[k]
	}
	go f("x")
	go func(n int) {
		defer wg.Done()
		_ = shared["x"] + n
	}(len(w.in))
	wg.Wait()
	fmt.Println(w.out)
}
