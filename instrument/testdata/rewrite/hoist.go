// Writes whose right-hand side calls or receives are recorded after it.
package p

var shared []int
var pair [2]int

func produce() []int { return []int{1} }

func two() (int, int) { return 1, 2 }

func hoist(c chan int, p *[2]int) {
	shared = produce()
	pair[0], pair[1] = two()
	p[0] = <-c
	p[1] += <-c + 1
	shared = append(shared,
		produce()...)
}

type flag bool

func next() byte { return 1 }

// A constant or an operator's result takes its type from the assignment:
// in a temporary it keeps it.
func hoistTyped(b []byte, fs []flag, us []uint64, n int) {
	b[0], b[len(b)-1] = next(), 0xff
	fs[0], us[1] = len(produce()) < n, 1<<len(produce())
	us[0] += 1 << len(produce())
}

var failed error

func serve() error { return nil }

// An if's or a switch's init statement cannot become a block: a variable's
// write is recorded before the condition or the tag, after the call.
func hoistInit(c chan int, p *[2]int) {
	if failed = serve(); failed != nil {
		return
	}
	if shared, p[0] = produce(), <-c; len(shared) > 0 {
		return
	}
	switch failed = serve(); {
	case failed != nil:
		return
	}
	for failed = serve(); failed != nil; failed = serve() {
	}
}

var count int

// A constant among the values stays in place; the call's result goes
// through a temporary.
func hoistUntyped() {
	failed, count = serve(), 1
}
