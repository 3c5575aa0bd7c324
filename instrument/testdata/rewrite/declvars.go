// Escaping variables declared by other than a var statement or := get an
// allocation event when each new one is created: parameters, results and
// receivers at the top of the body, per-iteration loop variables (go1.22)
// at the top of each iteration, a type switch's and a select receive's
// variable at the top of their clause. A captured variable nothing writes
// after its declaration is not escaping in that sense (readOnly).
package p

import "reflect"

type box struct{ n int }

func (b box) spawn(k int, done chan int) (out int) {
	go func() { k++; done <- b.n + k }()
	defer func() { out++ }()
	return 0
}

func loops(xs []int, m map[string]int, c chan int) {
	for i := 0; i < 3; i++ {
		go func() { c <- i }()
	}
	for _, x := range xs {
		go func() { c <- x }()
	}
	for k, v := range m {
		go func() { _ = k; c <- v }()
	}
	for v := range c {
		go func() { _ = v }()
	}
}

func clauses(x any, c chan int, d chan string) {
	switch v := x.(type) {
	case int:
		go func() { v++; c <- v }()
	case string:
		_ = v
	}
	select {
	case n := <-c:
		go func() { n++; c <- n }()
	case s, ok := <-d:
		go func() { s += "."; _, _ = s, ok }()
	}
}

// A call of a traced variadic function makes a slice of its arguments:
// written out, so that its array's allocation is recorded.
func sum(xs ...int) (n int) {
	for _, x := range xs {
		n += x
	}
	return n
}

func variadic(a, b int, xs []int) int {
	return sum(a, b) + sum() + sum(xs...)
}

func anys(xs ...any) int { return len(xs) }

// An argument that is itself a hooked call (go.uber.org/fx's
// Invoke(fn.Interface())).
func variadicHooked(v reflect.Value) int {
	return anys(v.Interface()) + anys(v.Int(), 1)
}

type param interface{ String() string }

func params(ps ...param) int { return len(ps) }

func vals(vs ...reflect.Value) int { return len(vs) }

// Where a local variable hides the element type's name (dig's
// findMissingDependencies) or its package's, the slice is not written out.
func shadowed(ps []param, v reflect.Value) (n int) {
	for _, param := range ps {
		n += params(param, param)
	}
	n += vals(v, v)
	f := func(vs ...reflect.Value) int { return len(vs) }
	n += f(v, v)
	{
		reflect := 1
		n += vals(v, v) + reflect
	}
	return n
}

// An if or switch statement's init declares variables the statement's
// branches may capture.
func inits(f func() (int, error), c chan error) {
	if n, err := f(); err != nil {
		go func() { c <- err }()
	} else if n > 0 {
		_ = n
	}
	switch n, err := f(); n {
	case 1:
		go func() { c <- err }()
	}
	switch _, err := f(); {
	case err != nil:
		go func() { c <- err }()
	}
}

// readOnly's captured variables are written only where they are declared
// (a parameter at the call, c and w at their :=): their reads are not
// recorded, and no allocation either. p's address is taken, r is
// assigned in a closure, and q is a named result: those stay escaping.
func readOnly(n int, ch chan int) (q int) {
	c := &box{n: n}
	w := [2]int{n, n}
	p := 0
	r := 0
	go func() { ch <- c.n + w[1] + n + q }()
	go func() { r = 1 }()
	ptr := &p
	return *ptr + r
}
