//go:build go1.21

// A range over a map in a file whose language version (go1.21, from its
// build constraint) has no range-over-func: the map is read, the order is
// Go's own.
package p

func keysOld(m map[string]int) (n int) {
	for k, v := range m {
		n += len(k) + v
	}
	for range m {
		n++
	}
	return n
}
