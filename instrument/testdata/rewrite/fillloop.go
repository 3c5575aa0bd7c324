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
// a captured slice. Two statements are one loop
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
	c := make([]int, n)
	for i := 0; i < n; i++ {
		c[i] = 5
	}
	return func() { c[0] = 6 }
}

func f(i int) int { return i }

// Steps, offsets and rows: a red-black stencil's inner loop (j += 2, the
// neighbours at j-1 and j+1, rows i-1, i and i+1 of a slice of slices)
// records one range per row, offset and direction, and each row's read.
func stencil(g [][]float64, i, colour, n int, d []int) {
	for j := 1 + (i+colour)%2; j < n-1; j += 2 {
		g[i][j] = 0.25*(g[i-1][j]+g[i+1][j]+g[i][j-1]+g[i][j+1]) - g[i][j]
	}
	for j := 0; j < len(d)-1; j++ {
		d[j] = d[j+1]
	}
	for k := range n {
		d[1+k] = k
	}
}

// A matrix product's inner loop: a row's elements, and a column (each
// row's read and its element at j).
func dot(a, b [][]float64, i, j, n int) float64 {
	s := 0.0
	for k := 0; k < n; k++ {
		s += a[i][k] * b[k][j]
	}
	return s
}

// Not these: a row index the body assigns (a column: g[j][i] is one), a
// step that is not a positive constant, an offset that is not a constant,
// a slice of arrays, a bound that reads memory, a row and column both at
// the loop's index.
func notStencils(g [][]float64, rows [][4]float64, i, n, m int, b *box) {
	for j := 0; j < n; j++ {
		g[i][j] = 1
		i = j
	}
	for j := 0; j < n; j++ {
		g[j][i] = 2
	}
	for j := 0; j < n; j += m {
		g[i][j] = 3
	}
	for j := n; j > 0; j -= 1 {
		g[i][j] = 4
	}
	for j := 0; j < n; j++ {
		g[i][j+m] = 5
	}
	for j := 0; j < n; j++ {
		rows[i][j] = 6
	}
	for j := 0; j < len(b.s)-1; j++ {
		g[i][j] = 7
	}
	for j := 0; j < n; j++ {
		g[j][j] = 8
	}
	for j := 0; j < n; j++ {
		g[j][i+j] = 9
	}
}

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
