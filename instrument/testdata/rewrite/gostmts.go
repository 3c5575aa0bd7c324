// go statements: function literal with arguments, method value, function
// variable, package function, generic function, builtin.
package p

import "fmt"

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
	go func() {
		for range c {
		}
	}()
}
