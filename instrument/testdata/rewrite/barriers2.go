package p

import (
	"maps"
	"slices"
)

type S struct {
	a, b []int
	m    map[string]int
}

// Without goto in the file, := keeps its temporaries in scope.
func define(s *S) int {
	ok := slices.Equal(s.a,
		s.b)
	n, found := slices.BinarySearch(s.a, len(s.b))
	if ok && found {
		return n
	}
	maps.Copy(s.m, map[string]int{"x": 1})
	return 0
}
