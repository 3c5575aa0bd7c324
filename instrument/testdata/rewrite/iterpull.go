package p

import "iter"

// Pulls run their sequence in a coroutine, ordered with the caller at
// each switch (rt.IterPull); iter is imported for them alone.
func pulls(s []int) int {
	next, stop := iter.Pull(func(yield func(int) bool) {
		for _, v := range s {
			if !yield(v) {
				return
			}
		}
	})
	defer stop()
	v, _ := next()
	next2, stop2 := iter.Pull2(func(yield func(int, int) bool) {
		yield(0, v)
	})
	_, w, _ := next2()
	stop2()
	return w
}
