// append, copy and ranging over slices with a value variable.
package p

func slices(dst, src []int, b []byte, s string) int {
	dst = append(dst, 1, 2)
	dst = append(dst, src...)
	b = append(b, s...)
	var args []any
	args = append(args, s, 1, nil) // converted to the element type: rt.Append sees the growth
	var errs []error
	errs = append(errs, (*myErr)(nil))
	_ = errs
	n := copy(dst, src) + len(args)
	n += copy(b, s)
	sum := 0
	for i, v := range src {
		sum += v * i
	}
	for _, v := range dst {
		if v < 0 {
			continue
		}
		sum += v
	}
	for i := range src {
		sum += i
	}
	return sum + n
}

func rangeArrayPtr(pa *[4]int) (t int) {
outer:
	for _, v := range pa {
		if v > 10 {
			break outer
		}
		t += v
	}
	return
}

type myErr struct{}

func (*myErr) Error() string { return "" }
