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
