package rt

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/trace"
)

// loopWorkload is instrumented code as the rewriter emits it for
//
//	func F() { for i := 0; i < outer; i++ { for j := 0; j < inner; j++ { smpArr[...] = 1; mu.Lock(); mu.Unlock() } } }
//
// called calls times: the loop's state made from the enclosing flag, the
// flag shadowed at the top of each iteration and passed to the access
// hooks and to the lock hooks (for their read of the lock's word).
func loopWorkload(calls, outer, inner int) func(uint32) {
	return func(uint32) {
		base := RegisterFile("l.go", []string{"F"}, make([]uint32, 3*3))
		for c := 0; c < calls; c++ {
			rec := Enter(base)
			lo := LoopOf(rec)
			for i := 0; i < outer; i++ {
				rec := lo.Iter()
				li := LoopOf(rec)
				for j := 0; j < inner; j++ {
					rec := li.Iter()
					W(&smpArr[(i*inner+j)%len(smpArr)], base+1, rec)
					MutexLock(&smpMu, base+2, rec)
					MutexUnlock(&smpMu, base+2, rec)
				}
			}
			Leave(base)
		}
	}
}

// written returns the indexes into smpArr of the trace's writes, in order,
// and the number of lock acquisitions.
func written(tr *trace.Trace) (idx []int, locks int) {
	idx, locks, _ = lockWords(tr)
	return idx, locks
}

// lockWords is written with the number of reads of smpMu's word.
func lockWords(tr *trace.Trace) (idx []int, locks, reads int) {
	base := uintptr(unsafe.Pointer(&smpArr[0]))
	for _, e := range tr.Events {
		switch {
		case e.Op == trace.OpWrite:
			idx = append(idx, int((uintptr(e.Obj)-base)/unsafe.Sizeof(smpArr[0])))
		case e.Op == trace.OpAcquire:
			locks++
		case e.Op == trace.OpRead && e.Obj == uint64(uintptr(unsafe.Pointer(&smpMu))):
			reads++
		}
	}
	return idx, locks, reads
}

// wantLoop is the reference: the iterations (as indexes written) a loop
// region samples, from the policy's Schedule run call by call (Next) per
// execution of each loop, only inside sampled iterations of the enclosing
// region, the function's calls dispatched by a per-goroutine Counter; and
// the lock acquisitions a sampled run records. Every critical section
// (empty in an unsampled iteration, holding the read of the lock's word in
// a sampled one) is in the reference trace, with the sampled frames and
// writes and the edges of each call from untraced code (Enter, Leave), and
// sample.Edges drops the redundant ones, as the run does.
func wantLoop(p sample.Policy, calls, outer, inner int) (out []int, locks int) {
	b := trace.NewBuilder()
	var fn sample.Counter
	for c := 0; c < calls; c++ {
		sampled := fn.Next(&p.Schedule)
		if sampled {
			b.Enter("g", "F")
		}
		b.Rcv("g", "io") // the test's goroutine enters traced code (Enter)
		var lo sample.Counter
		for i := 0; i < outer; i++ {
			outerOn := sampled && lo.Next(&p.Schedule)
			var li sample.Counter
			for j := 0; j < inner; j++ {
				on := outerOn && li.Next(&p.Schedule)
				if on {
					out = append(out, (i*inner+j)%len(smpArr))
					b.Write("g", fmt.Sprint("x", out[len(out)-1]), "w")
				}
				b.Acq("g", "mu")
				if on {
					b.Read("g", "mu word", "unlock")
				}
				b.Rel("g", "mu")
			}
		}
		b.Snd("g", "io")
		if sampled {
			b.Exit("g", "F")
		}
	}
	kept, _ := sample.EdgesKept(b.Trace())
	for _, e := range kept.Events {
		if e.Op == trace.OpAcquire {
			locks++
		}
	}
	return out, locks
}

func withLoops(t *testing.T, on bool) {
	t.Helper()
	saved := loopsEnv
	loopsEnv = on
	t.Cleanup(func() { loopsEnv = saved; resetSampling() })
}

// With RACEKIT_SAMPLE_LOOPS=1 each loop execution is a region: a call of
// 2000 iterations records TL-Ad's bursts (iterations 0-9, 100-109,
// 1100-1109), nested loops narrow further, a second call of the function
// is decided by the function's counter, and every lock is recorded but
// those sample.Edges drops (an empty critical section right after the
// goroutine's own), the read of its word only in the iterations sampled.
func TestLoopRegions(t *testing.T) {
	withLoops(t, true)
	for _, c := range []struct {
		name                string
		calls, outer, inner int
	}{
		{"one long loop", 1, 1, 2000},
		{"nested", 2, 120, 150},
		{"many calls", 40, 2, 30},
	} {
		for _, name := range []string{"tl-ad", "tl-fx", "ucp", "g-ad"} {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				tr := recordSampled(t, false, name, 1, "", loopWorkload(c.calls, c.outer, c.inner))
				got, locks, reads := lockWords(tr)
				p, _ := sample.Lookup(name)
				want, wantLocks := wantLoop(p, c.calls, c.outer, c.inner)
				if !slices.Equal(got, want) {
					t.Fatalf("writes recorded at %v (%d), want %v (%d)", head(got), len(got), head(want), len(want))
				}
				if locks != wantLocks || locks < len(want) {
					t.Fatalf("%d lock acquisitions recorded, want %d of %d (Edges drops the others)", locks, wantLocks, c.calls*c.outer*c.inner)
				}
				if reads != 2*len(want) {
					t.Fatalf("%d reads of the lock's word recorded, want %d (Lock and Unlock in each sampled iteration)", reads, 2*len(want))
				}
			})
		}
	}
	if got, _ := written(recordSampled(t, false, "tl-ad", 1, "", loopWorkload(1, 1, 2000))); len(got) != 30 {
		t.Fatalf("tl-ad over 2000 iterations recorded %d, want 30 (bursts at 0, 100, 1100)", len(got))
	}
}

// Without RACEKIT_SAMPLE_LOOPS, and with the per-call samplers, a loop
// passes its enclosing decision on: a sampled call records every
// iteration, as LiteRace's function regions do.
func TestLoopRegionsOff(t *testing.T) {
	for _, c := range []struct {
		loops   bool
		sampler string
	}{{false, "tl-ad"}, {true, "rnd25"}, {false, ""}, {true, ""}} {
		t.Run(fmt.Sprintf("loops=%v/%s", c.loops, c.sampler), func(t *testing.T) {
			withLoops(t, c.loops)
			tr := recordSampled(t, false, c.sampler, 3, "", loopWorkload(3, 4, 50))
			got, _ := written(tr)
			// The reference: the function's decisions, every iteration.
			var want []int
			p, _ := sample.Lookup(c.sampler)
			var fn sample.Counter
			rng := sample.NewRand(3, tr.Events[0].G)
			for k := 0; k < 3; k++ {
				switch {
				case c.sampler == "":
				case p.Scope == sample.PerCall:
					if !rng.Below(sample.Threshold(p.Prob)) {
						continue
					}
				case !fn.Next(&p.Schedule):
					continue
				}
				for i := 0; i < 4*50; i++ {
					want = append(want, i)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("writes recorded at %v (%d), want %v (%d)", head(got), len(got), head(want), len(want))
			}
		})
	}
}

// A Loop that passes a decision on keeps passing it after its counter
// wraps.
func TestLoopPassOnWraps(t *testing.T) {
	l := LoopOf(true)
	l.left = 2
	for i := 0; i < 5; i++ {
		if !l.Iter() {
			t.Fatalf("iteration %d: false", i)
		}
	}
	l = LoopOf(false)
	l.left = 1
	for i := 0; i < 3; i++ {
		if l.Iter() {
			t.Fatalf("iteration %d: true", i)
		}
	}
}

func head(s []int) []int {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}

// leafWorkload is nfn leaf functions with two copies as instrument's
// leafCopy emits them, called calls times in turn (function c%nfn makes
// call c); withEnter is the same functions with one guarded body (Enter),
// for comparison. With many functions, some take the places in the
// goroutine's table of Counters where others would be looked up first, so
// Sampled's fast path finds some and leaves others to its general path.
// The calls are made from traced code (a frame of caller), where the fast
// path applies.
func leafWorkload(calls, nfn int, withEnter bool) func(uint32) {
	return func(uint32) {
		names := make([]string, nfn+1)
		for i := range names {
			names[i] = fmt.Sprintf("F%d", i)
		}
		names[nfn] = "caller"
		base := RegisterFile("leaf.go", names, make([]uint32, 3*(nfn+1)))
		Enter(base + uint32(nfn))
		defer Leave(base + uint32(nfn))
		for c := 0; c < calls; c++ {
			fn := base + uint32(c%nfn)
			func() {
				if withEnter {
					rec := Enter(fn)
					defer Leave(fn)
					W(&smpArr[c%len(smpArr)], base+uint32(nfn), rec)
					return
				}
				if !Sampled(fn) {
					smpArr[c%len(smpArr)] = 1
					return
				}
				rec := EnterSampled(fn)
				defer Leave(fn)
				W(&smpArr[c%len(smpArr)], base+uint32(nfn), rec)
			}()
		}
	}
}

// A leaf's two copies make Enter's decisions, one counter step per call:
// the same writes as the guarded body, under every sampler and without
// one, and the frames only of the sampled calls. tl-ad's and tp-ad's
// checks take Sampled's fast path, for one function and for forty whose
// Counters crowd the goroutine's table.
func TestSampledLeafCopies(t *testing.T) {
	for _, name := range []string{"", "tl-ad", "tp-ad", "ucp", "rnd25", "g-ad"} {
		for _, nfn := range []int{1, 40} {
			t.Run(fmt.Sprintf("%s/fns=%d", name, nfn), func(t *testing.T) {
				calls := 300 * nfn
				copies := recordSampled(t, false, name, 4, "", leafWorkload(calls, nfn, false))
				guarded := recordSampled(t, false, name, 4, "", leafWorkload(calls, nfn, true))
				got, _ := written(copies)
				want, _ := written(guarded)
				if !slices.Equal(got, want) {
					t.Fatalf("two copies recorded writes %v (%d), one guarded body %v (%d)", head(got), len(got), head(want), len(want))
				}
				if name != "" && len(got) == calls || name == "" && len(got) != calls {
					t.Fatalf("%d of %d calls recorded", len(got), calls)
				}
				enters := 0
				for _, e := range copies.Events {
					if e.Op == trace.OpFuncEnter {
						enters++
					}
				}
				if enters != len(got)+1 { // and the caller's, shown by them
					t.Fatalf("%d frames recorded for %d sampled calls and their caller", enters, len(got))
				}
			})
		}
	}
}

// A column hook (LoopColR: a matrix product's b[k][j] over k) records, with
// loop regions, the elements of the iterations the loop's region samples,
// as the body's own hooks did: tl-ad over 2000 rows reads rows 0-9,
// 100-109 and 1100-1109; without loop regions, every row's.
func TestLoopColRegions(t *testing.T) {
	rows := make([][]uint64, 2000)
	for i := range rows {
		rows[i] = make([]uint64, 4)
	}
	escapeSink = rows
	elems := func(tr *trace.Trace) []int {
		var got []int
		for _, e := range tr.Events {
			if e.Op != trace.OpRead {
				continue
			}
			for i, r := range rows {
				if e.Obj == uint64(uintptr(unsafe.Pointer(&r[2]))) {
					got = append(got, i)
				}
			}
		}
		return got
	}
	body := func(uint32) {
		base := RegisterFile("c.go", []string{"F"}, make([]uint32, 3*3))
		rec := Enter(base)
		LoopColR(rows, 2, 0, len(rows), 1, 0, base+1, base+2, rec)
		Leave(base)
	}
	for _, loops := range []bool{true, false} {
		withLoops(t, loops)
		got := elems(recordSampled(t, false, "tl-ad", 1, "", body))
		var want []int
		for i := range rows {
			if !loops || i < 10 || i >= 100 && i < 110 || i >= 1100 && i < 1110 {
				want = append(want, i)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("loop regions %v: rows read %v (%d), want %v (%d)", loops, head(got), len(got), head(want), len(want))
		}
	}
}
