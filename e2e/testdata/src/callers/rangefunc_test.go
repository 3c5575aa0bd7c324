package callers

import (
	"iter"
	"testing"
)

func upTo(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

var touched int

// firstAbove returns from the body of a range over a function, in a
// function that defers a call: the iterator's frame is above its own
// there (racekit's rt.Ret at that return took the iterator's frame for
// firstAbove's, and the iterator's return then panicked in rt:
// minio-go's retry loop, corpus batch FV).
func firstAbove(n, k int) int {
	touched++
	defer func() { touched++ }()
	for i := range upTo(n) {
		if i > k {
			return i
		}
	}
	return -1
}

func TestReturnFromRangeOverFunc(t *testing.T) {
	if got := firstAbove(10, 3); got != 4 {
		t.Fatalf("firstAbove(10, 3) = %d, want 4", got)
	}
}
