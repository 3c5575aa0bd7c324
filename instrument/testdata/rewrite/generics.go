// Accesses inside generic code, through type parameters.
package p

type list[T any] struct {
	items []T
	count int
}

func (l *list[T]) push(v T) {
	l.items = append(l.items, v)
	l.count++
}

func sum[S ~[]E, E int | float64](s S, m map[string]E) E {
	var t E
	for _, v := range s {
		t += v
	}
	for k := range m {
		t += m[k]
	}
	return t
}
