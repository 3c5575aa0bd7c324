package p

import "math/bits"

// Fill and copy loops record one range per slice before they run.
func fills(dst, src []byte, n int, v byte) {
	for i := 0; i < len(dst); i++ {
		dst[i] = v
	}
	for j := 2; j < n; j++ {
		dst[j] = src[j] + byte(j)
	}
}

var global []int

type box struct{ s []int }

// Not these: a package variable's slice, a field, a call in the value,
// a step other than i++, a captured slice. Two statements are one loop
// (s[i] = 3; s[i]++ reads and writes s).
func notFills(b *box, n int) func() {
	for i := 0; i < len(global); i++ {
		global[i] = 1
	}
	for i := 0; i < n; i++ {
		b.s[i] = 2
	}
	s := make([]int, n)
	for i := 0; i < n; i++ {
		s[i] = f(i)
	}
	for i := 0; i < n; i++ {
		s[i] = 3
		s[i]++
	}
	for i := 0; i < n; i += 2 {
		s[i] = 4
	}
	c := make([]int, n)
	for i := 0; i < n; i++ {
		c[i] = 5
	}
	return func() { c[0] = 6 }
}

func f(i int) int { return i }

// Element-wise range loops: each slice's reads, then its writes, once.
func ranges(b, dst []byte, key uint32, n int) (uint32, int) {
	for i := range b {
		b[i] ^= byte(key)
		key = bits.RotateLeft32(key, -8)
	}
	h := 0
	for _, c := range b {
		h = h*31 + int(c)
	}
	for i, c := range b {
		dst[i] = c + 1
	}
	for i := range n {
		dst[i] = 0
	}
	return key, h
}

// Not these: a branch, a call that may touch memory or panic, the slice
// assigned in the body, an element not at the loop's index, a range over
// a field, a break.
func notRanges(b []byte, x *box, n uint) int {
	h := 0
	for i := range b {
		if b[i] == 0 {
			b[i] = 1
		}
	}
	for i := range b {
		b[i] = byte(f(i))
	}
	for i := range b {
		q, _ := bits.Div(0, n, 3)
		b[i] = byte(q)
	}
	for i := range b {
		b[i] = 0
		b = b[1:]
	}
	for i := range b {
		h += int(b[0]) + i
	}
	for _, v := range x.s {
		h += v
	}
	for _, c := range b {
		h += int(c)
		break
	}
	return h
}
