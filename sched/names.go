package sched

import (
	"slices"
	"strconv"

	"github.com/racekit/racekit/trace"
)

// Names returns the stable creation-order name (see the package doc) of
// every goroutine of a recorded trace: the goroutines that no traced go
// statement forked are roots g0, g1, ... in the order of their IDs (rt
// gives them IDs in the order it first sees them, the order in which it
// numbers roots in controlled mode), and the k-th goroutine that P forks
// (its k-th fork event of a goroutine not seen before) is P.k.
func Names(tr *trace.Trace) map[trace.GID]string {
	seen := map[trace.GID]bool{}
	var roots []trace.GID
	kids := map[trace.GID][]trace.GID{}
	for i := range tr.Events {
		e := &tr.Events[i]
		if !seen[e.G] {
			seen[e.G] = true
			roots = append(roots, e.G)
		}
		if e.Op == trace.OpFork && e.Obj <= 0xFFFFFFFF {
			if c := trace.GID(e.Obj); c != e.G && !seen[c] {
				seen[c] = true
				kids[e.G] = append(kids[e.G], c)
			}
		}
	}
	slices.Sort(roots)
	names := make(map[trace.GID]string, len(seen))
	var name func(g trace.GID, n string)
	name = func(g trace.GID, n string) {
		names[g] = n
		for k, c := range kids[g] {
			name(c, n+"."+strconv.Itoa(k+1))
		}
	}
	for i, g := range roots {
		name(g, "g"+strconv.Itoa(i))
	}
	return names
}
