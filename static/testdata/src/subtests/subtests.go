// Package subtests: parallel subtests are thread entries (issue 29). The
// subtests of a loop run beside each other once their t.Parallel has
// returned and the parent's function has returned; what they do before
// t.Parallel, and the parent's code after t.Run, is sequential with them.
package subtests

import testing "testingfake"

type counter struct{ n int }

var hits int

func shared(t *testing.T) {
	c := &counter{}
	for i := 0; i < 2; i++ {
		t.Run("x", func(t *testing.T) {
			t.Parallel()
			c.n++ // want `potential race on c\.n: write at subtests\.go:18:6 in parallel subtest shared\$1 run at subtests\.go:16:8 holding no lock, and read at subtests\.go:18:6 in another instance of the same parallel subtest holding no lock`
		})
	}
	c.n = 0 // the parent's function: before its parallel subtests run
}

// own: each subtest's counter is its own; the write before t.Parallel
// is sequential with the other subtests.
func own(t *testing.T) {
	for i := 0; i < 2; i++ {
		c := &counter{}
		t.Run("y", func(t *testing.T) {
			hits++
			t.Parallel()
			c.n++
		})
	}
}

// sequential: subtests without t.Parallel run one after another.
func sequential(t *testing.T) {
	c := &counter{}
	for i := 0; i < 2; i++ {
		t.Run("z", func(t *testing.T) { c.n++ })
	}
}
