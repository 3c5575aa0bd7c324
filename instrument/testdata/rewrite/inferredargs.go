// A generic function passed where its type arguments are inferred from the
// parameter stays in place: a BarrierPair's temporaries and a go
// statement's arguments would leave nothing to infer them from.
package p

import (
	"cmp"
	"maps"
	"slices"
)

type config struct {
	md   map[string][]string
	keys []int
}

func equal(a, b *config) bool {
	eq := maps.EqualFunc(a.md, b.md, slices.Equal)
	go slices.SortFunc(b.keys, cmp.Compare)
	return eq
}
