// append, copy and ranging over slices with a value variable.
package p

func slices(dst, src []int, b []byte, s string) int {
	dst = append(dst, 1, 2)
	dst = append(dst, src...)
	b = append(b, s...)
	n := copy(dst, src)
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
