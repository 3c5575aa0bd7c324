// Functions the Go race detector does not instrument are left alone; goto
// targets are not wrapped in blocks.
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
