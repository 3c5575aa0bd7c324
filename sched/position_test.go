package sched

import (
	"slices"
	"testing"

	"github.com/racekit/racekit/trace/text"
)

// Positions counts synchronization, goroutine life, atomics and the
// accesses at the statements under test; any other event takes the
// position of the last positional event before it (-1 before the first).
func TestPositions(t *testing.T) {
	tr, err := text.Parse("pos.rktx", `
T0|r(a)|main.go:1
T0|fork(T1)|main.go:2
T0|enter(f)|main.go:3
T0|w(a)|main.go:4
T0|w(x)|main.go:9
T1|begin|main.go:2
T1|alloc(b)|main.go:5
T1|r(b)|main.go:6
T1|acq(m)|main.go:7
T1|r(x)|lib/main.go:9
T1|call(h)|main.go:8
T1|ret(h)|main.go:8
T1|r(x)|main.go:10
T1|rel(m)|main.go:11
T0|aload(y)|main.go:12
T0|join(T1)|main.go:13
`)
	if err != nil {
		t.Fatal(err)
	}
	// main.go:9 matches lib/main.go:9 at a path boundary.
	got := Positions(tr, SitePair{"main.go:9", "main.go:10"})
	want := []int{
		-1, 0, 0, 0, 1, // T0: r a, fork, enter, w a, w x (under test)
		0, 0, 0, 1, 2, 2, 2, 3, 4, // T1: begin, alloc, r b, acq, r x (under test), call, ret, r x (under test), rel
		2, 3, // T0: aload, join
	}
	if !slices.Equal(got, want) {
		t.Errorf("positions\n got %v\nwant %v", got, want)
	}
	// Without statements under test only synchronization counts.
	got = Positions(tr, nil)
	want = []int{-1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 1, 2}
	if !slices.Equal(got, want) {
		t.Errorf("no pair: positions\n got %v\nwant %v", got, want)
	}
}
