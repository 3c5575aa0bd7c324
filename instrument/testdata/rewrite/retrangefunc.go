package p

import "iter"

func upTo(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

// A function that defers calls leaves the trace at its normal returns
// (rt.Ret), but not at one in the body of a range over a function: that
// body runs inside the iterator's yield, whose frame is above this one's
// until the iterator returns. A function literal in that body has returns
// of its own (Ret there is its own).
func firstAbove(n, k int) int {
	defer func() {}()
	for i := range upTo(n) {
		if i > k {
			return i // no Ret
		}
		f := func() int {
			defer func() {}()
			return 1 // Ret: the literal's
		}
		_ = f()
	}
	for i := range n {
		if i > k {
			return i // Ret: a range over an int
		}
	}
	return -1 // Ret
}
