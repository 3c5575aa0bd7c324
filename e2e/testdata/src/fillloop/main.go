// Fill and copy loops, each recorded as one range per slice before the
// loop (instrument/fillloop.go): a fill races with another goroutine's
// read of one element, a copy's reads with a write of one source element;
// a fill after a receive from the filling goroutine does not race. Range
// loops likewise: a mask (each element read and written) races with
// another goroutine's write of one element, a sum over the values with a
// write, a clear over a range of an int with a read.
package main

import (
	"fmt"
	"math/bits"
)

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

func mask(b []byte, key uint32) uint32 {
	for i := range b {
		b[i] ^= byte(key) // race: mask
		key = bits.RotateLeft32(key, -8)
	}
	return key
}

func sum(b []byte) (h int) {
	for _, c := range b { // race: sum
		h = h*31 + int(c)
	}
	return h
}

func clear8(b []byte) {
	for i := range 8 {
		b[i] = 0 // race: clear
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

	buf := make([]byte, 128)
	go func() {
		mask(buf, 0xdeadbeef)
		done <- true
	}()
	buf[100] = 1 // race: mask
	<-done
	mask(buf, 1)

	sums := make([]byte, 32)
	go func() {
		x = byte(sum(sums))
		done <- true
	}()
	// Element 0, as for clear below: -race keeps 4 accesses per 8 bytes,
	// and the loop's later reads of a word push out a write of its last byte.
	sums[0] = 2 // race: sum
	<-done

	small := make([]byte, 16)
	go func() {
		clear8(small)
		done <- true
	}()
	y := small[0] // race: clear
	<-done
	z := small[9] // after the receive, and never cleared: no race
	fmt.Println(x, y, z, out[0], data[0], buf[0])
}
