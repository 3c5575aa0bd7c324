// Map reads, writes, comma-ok, delete, clear, op-assign and range.
package p

func maps(m map[string]int, k string) int {
	m[k] = 1
	v := m[k]
	w, ok := m["x"]
	if !ok {
		m[k] += 2
		m[k]++
	}
	delete(m, "x")
	for key, val := range m {
		v += len(key) + val
	}
	clear(m)
	return v + w + len(m)
}

// A range naming neither key nor value needs no order: MR, not MRange.
func count(m map[string]int) (n int) {
	for range m {
		n++
	}
	for _, _ = range m {
		n++
	}
	for k = range m {
		n += len(k)
	}
	return n
}

var k string
