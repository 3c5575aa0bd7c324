// A //go:norace function's plain accesses are not recorded, its
// synchronization, map operations, copies and function literals are (the
// runtime records them for the Go race detector); goto targets are not
// wrapped in blocks; //racekit:atomic marks an atomic region.
package p

import "sync"

var g int

//go:norace
func untouched() { g++ }

type loop struct {
	mu    sync.Mutex
	conns map[int][]byte
	ch    chan []byte
	n     int
}

//go:norace
func (l *loop) add(fd int, addr []byte) {
	b := make([]byte, len(addr))
	copy(b, addr)
	l.mu.Lock()
	l.conns[fd] = b
	l.n++
	l.mu.Unlock()
	for i, x := range b {
		b[i] = x + 1
	}
	go func() {
		l.n--
		l.ch <- b
	}()
}

//go:nosplit
func split() { g++ }

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
