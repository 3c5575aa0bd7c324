// Package variables, locals, captured and address-taken variables.
package p

var (
	count int
	table [4]int
	name  string
)

type point struct{ x, y int }

func vars(n int) int {
	count = n         // write of a package variable
	count += n        // read and write
	count++           // read and write
	local := count    // read; local is private
	local++           // not recorded
	var arr [3]int    // a local array
	arr[1] = local    // not recorded
	table[n%4] = 1    // element of a package array
	name = name + "x" // read and write
	p := point{1, 2}
	p.x++ // private struct: not recorded
	return arr[1] + table[0] + p.y
}

func captured() int {
	x := 0
	f := func() { x++ } // x is captured: shared
	f()
	y := 1
	q := &y // y's address is taken: shared
	*q = 2
	return x + y
}

// Named results a literal captures: a bare return reads them; := that
// redeclares a shared variable writes it.
func named() (a int, err error) {
	defer func() { a++ }()
	a, b := 1, 2
	_ = b
	return
}
