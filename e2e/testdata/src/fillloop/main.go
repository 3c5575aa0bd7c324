// Fill and copy loops, each recorded as one range per slice before the
// loop (instrument/fillloop.go): a fill races with another goroutine's
// read of one element, a copy's reads with a write of one source element;
// a fill after a receive from the filling goroutine does not race.
package main

import "fmt"

func fill(b []byte, v byte) {
	for i := 0; i < len(b); i++ {
		b[i] = v // race: fill
	}
}

func copyInto(dst, src []byte) {
	for i := 0; i < len(dst); i++ {
		dst[i] = src[i] + 1 // race: copy
	}
}

func main() {
	data := make([]byte, 64)
	done := make(chan bool)
	go func() {
		fill(data, 1)
		done <- true
	}()
	x := data[10] // race: fill
	<-done
	fill(data, 2)

	src, out := make([]byte, 64), make([]byte, 64)
	go func() {
		copyInto(out, src)
		done <- true
	}()
	src[3] = 7 // race: copy
	<-done
	fmt.Println(x, out[0], data[0])
}
