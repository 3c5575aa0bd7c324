package rt

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// A function that returns normally leaves the trace before its deferred
// calls run (Ret), as under go test -race: their events have the caller's
// frames, whether the function recorded an event of its own (its FuncExit
// comes first) or not (its frame is never recorded); LeaveRet, run last,
// records nothing, and the depth it keeps is given back. A function that
// panics keeps its frame in its deferred calls.
func TestRetLeavesBeforeDeferredCalls(t *testing.T) {
	x, y := escape[int](), escape[int]()
	var base uint32
	names := map[uint64]string{}
	run := func(shown, panics bool) func(uint32) {
		return func(site uint32) {
			base = RegisterFile("ret.go", []string{"F", "C", "T"}, make([]uint32, 3*4))
			names[uint64(base)], names[uint64(base+1)], names[uint64(base+2)] = "F", "C", "T"
			Enter(base + 2) // the test function
			func() {
				defer func() { _ = recover() }()
				Enter(base)
				defer LeaveRet(base)
				defer func() {
					Enter(base + 1)
					W(x, site, true)
					Leave(base + 1)
				}()
				if shown {
					W(y, site, true)
				}
				if panics {
					panic("p")
				}
				Ret(base)
			}()
			W(y, site, true) // back in T
			Leave(base + 2)
		}
	}
	for _, c := range []struct {
		shown, panics bool
		want          []string
	}{
		{false, false, []string{"enter T", "enter C", "w x", "exit C", "w y", "exit T"}},
		{true, false, []string{"enter T", "enter F", "w y", "exit F", "enter C", "w x", "exit C", "w y", "exit T"}},
		{true, true, []string{"enter T", "enter F", "w y", "enter C", "w x", "exit C", "exit F", "w y", "exit T"}},
	} {
		t.Run(fmt.Sprintf("shown=%v,panics=%v", c.shown, c.panics), func(t *testing.T) {
			tr := record(t, false, run(c.shown, c.panics))
			var got []string
			for _, e := range tr.Events {
				switch {
				case e.Op == trace.OpFuncEnter || e.Op == trace.OpFuncExit:
					got = append(got, e.Op.String()+" "+names[e.Obj])
				case e.Op.IsAccess():
					v := "x"
					if e.Obj == uint64(uintptr(unsafe.Pointer(y))) {
						v = "y"
					}
					got = append(got, e.Op.String()+" "+v)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("events %q, want %q", got, c.want)
			}
		})
	}
}
