package p

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
// two statements, a step other than i++, a captured slice.
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
