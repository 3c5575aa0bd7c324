package rt

import (
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/racekit/racekit/sched"
)

// TestSchedPairAccesses: the pair names two accesses (issue 29), and rt's
// hooks hand each access's column, kind and size to its point, so that
//
//	copy(dst, src)      // pairs.go:3, the write of dst[0:4] at column 2
//	v := y + dst[2]     // pairs.go:5, a read of y at column 7, of dst[2] at 11
//
// race: the copy's range holds dst[2] (before, the points compared start
// addresses, &dst[0] against &dst[2], and never met), and the harmless
// read of y on line 5 is no point of the pair (it would postpone the
// reader). RaceFuzzer creates the race in every run, as Example 2 of the
// paper argues (§3.2), through rt's own hooks (Copy, R).
func TestSchedPairAccesses(t *testing.T) {
	base := schedFile("/src/pairs.go", []uint32{1, 1, 0, 3, 2, 0, 5, 7, 0, 5, 11, 0, 6, 1, 0}, 0)
	other, copySite, ySite, elemSite, waitSite := base, base+1, base+2, base+3, base+4
	pair := sched.SitePair{"pairs.go:3:2:w", "pairs.go:5:11:r"}
	runs := 30
	if testing.Short() {
		runs = 10
	}
	for seed := uint64(1); seed <= uint64(runs); seed++ {
		dst, src := make([]int, 4), []int{1, 2, 3, 4}
		var y, v int
		var wg sync.WaitGroup
		var M sync.Mutex
		sch := controlled(t, sched.NewRaceFuzzer(seed), "racefuzzer", seed, pair, func() {
			WaitGroupAdd(&wg, 2, other, true)
			c1 := Fork(other)
			go func() {
				Begin(c1)
				defer End(c1)
				defer WaitGroupDone(&wg, other, true)
				MutexLock(&M, other, true) // something before the copy
				MutexUnlock(&M, other, true)
				Copy(dst, src, copySite, true)
				c1.Ok()
			}()
			c2 := Fork(other)
			go func() {
				Begin(c2)
				defer End(c2)
				defer WaitGroupDone(&wg, other, true)
				v = *R(&y, ySite, true) + *R(&dst[2], elemSite, true)
				c2.Ok()
			}()
			WaitGroupWait(&wg, waitSite, true)
		})
		_ = v
		races := sch.NotesOf("race")
		if len(races) == 0 {
			t.Fatalf("seed %d: the race of the copy and dst[2] was not created (%d steps)", seed, len(sch.Steps))
		}
		for _, r := range races {
			if !strings.Contains(r, "pairs.go:3") || !strings.Contains(r, "pairs.go:5") {
				t.Errorf("seed %d: race %q, want the copy (line 3) and the read (line 5)", seed, r)
			}
		}
		for _, st := range sch.Steps {
			if st.Kind == sched.KindRead && st.Site == "/src/pairs.go:5" && st.Obj == uint64(uintptr(unsafe.Pointer(&y))) {
				t.Errorf("seed %d: the read of y was a point of the pair", seed)
			}
		}
	}
}
