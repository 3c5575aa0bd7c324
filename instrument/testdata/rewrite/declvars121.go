//go:build go1.21

// Before go1.22 a loop's variables are one per execution of the loop: the
// range's are recorded once, at its first iteration; a for loop's get no
// allocation event.
package p

func oldLoops(xs []int, m map[string]int, c chan int, run func(func())) {
	for _, x := range xs {
		run(func() { _ = x })
	}
	for k, v := range m {
		run(func() { _, _ = k, v })
	}
outer:
	for v := range c {
		run(func() { _ = v })
		if v > 3 {
			break outer
		}
	}
	for i := 0; i < 3; i++ {
		run(func() { _ = i })
	}
}
