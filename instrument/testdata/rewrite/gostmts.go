// go statements: function literal with arguments, method value, function
// variable, package function, generic function, builtin, a hooked method
// (its wrapper, run by the new goroutine, is not handed the parent's
// goroutine state), and hooks outside every function body (handed nil).
package p

import (
	"fmt"
	"sync"
)

var mu sync.Mutex

var ready = func() chan int { c := make(chan int, 1); c <- 1; return c }()

var first = <-ready

var lockAll = func() { mu.Lock(); mu.Unlock() }

type srv struct{ n int }

func (s *srv) serve(k int) { s.n += k }

func generic[T any](v T) { fmt.Println(v) }

var hook func(string)

func starts(s *srv, c chan int, k int) {
	go func(a, b int) {
		s.n = a + b
	}(k, 2)
	go s.serve(k * 2)
	go hook("x")
	go fmt.Println("y", k == 3)
	go generic(k)
	go close(c)
	mu.Lock()
	go mu.Unlock()
	go func() {
		for range c {
		}
	}()
}
