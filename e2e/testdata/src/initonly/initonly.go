// Package initonly reads package variables that only their declarations
// write (e2e TestInitOnlyVars): their reads are not recorded, so that a
// constructor reading one stays inlinable (filippo.io/edwards25519's
// NewIdentityPoint) and a lookup table costs nothing; a variable an
// in-package test writes is recorded still.
package initonly

type Point struct{ x, y, z int }

func (p *Point) Set(q *Point) *Point {
	*p = *q
	return p
}

var identity = &Point{0, 1, 1}

// NewIdentityPoint is inlined by the compiler, and the Point it makes
// stays on its caller's stack.
func NewIdentityPoint() *Point { return new(Point).Set(identity) }

var table = [4]uint32{1, 10, 100, 1000}

func Sum(b []byte) uint32 {
	s := uint32(0)
	for _, c := range b {
		s += table[c&3]
	}
	return s
}

// verbose is set by a test (verbose_test.go), while Log reads it.
var verbose bool

func Log() int {
	if verbose {
		return 1
	}
	return 0
}
