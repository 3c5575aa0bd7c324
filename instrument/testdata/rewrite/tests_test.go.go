// A test file: test functions, subtests, Parallel, Cleanup, examples.
package p

import (
	"fmt"
	"testing"
)

var state int

func TestState(t *testing.T) {
	state = 1
	t.Cleanup(func() { state = 0 })
	t.Run("sub", func(t *testing.T) {
		t.Parallel()
		_ = state
	})
}

func BenchmarkState(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
		}
	})
}

func ExampleState() {
	fmt.Println(state)
	// Output: 0
}

func helper(t *testing.T) { t.Helper() }
