// Functions the Go race detector does not instrument are left alone; goto
// targets are not wrapped in blocks; //racekit:atomic marks an atomic region.
package p

var g int

//go:norace
func untouched() { g++ }

func jumps(c chan int) {
	goto recv
recv:
	select {
	case g = <-c:
	}
}

// take's invocations are atomic regions, inside its FuncEnter/Exit.
//
//racekit:atomic
func take() int {
	g--
	return g
}
