package rt

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/racekit/racekit/filter"
	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/filter/tree"
	"github.com/racekit/racekit/trace"
)

// The workloads' data is package-level, so that every run of a workload
// touches the same addresses and traces of two runs can be compared event
// by event.
var (
	smpArr [1024]uint64
	smpMu  sync.Mutex
	smpMus [8]sync.Mutex // one per goroutine of sampleWorkload
	smpI32 int32
	smpWG  sync.WaitGroup
)

// Sites of the workloads, relative to the base RegisterFile returns:
// functions A, B, C, then access sites.
const (
	smpFnA = iota
	smpFnB
	smpFnC
	smpSiteA
	smpSiteB
	smpSiteRoot
	smpSiteLock
	smpSiteFork
	smpNSites
)

// sampleBody is one goroutine's deterministic work: calls of A (some
// calling B, some C recursively), accesses in each frame and between
// frames (the start routine's), and a lock now and then, which starts a
// new dedup epoch. What it does depends only on id, never on other
// goroutines.
func sampleBody(base uint32, id int) {
	R(&smpArr[id], base+smpSiteRoot, true) // outside every frame, as in a start routine
	for i := 0; i < 300; i++ {
		// As instrumented code: the frame's decision is a local, passed to
		// each access hook of the frame.
		a := Enter(base + smpFnA)
		R(&smpArr[(id*97+i)%1000], base+smpSiteA, a)
		W(&smpArr[(id*97+3*i)%1000], base+smpSiteA, a)
		R(&smpArr[(id*97+i)%1000], base+smpSiteA, a) // a repeat: deduplicated
		if i%4 == 0 {
			b := Enter(base + smpFnB)
			RW(&smpArr[(id*31+i)%1000], base+smpSiteB, b)
			Leave(base + smpFnB)
		}
		if i%23 == 0 {
			sampleRec(base, id, 3)
		}
		if i%9 == 0 {
			// Its own lock: which critical sections a sampled run drops
			// (sample.Edges) must not depend on the other goroutines.
			MutexLock(&smpMus[id], base+smpSiteLock, true)
			W(&smpArr[1000+id], base+smpSiteA, a)
			MutexUnlock(&smpMus[id], base+smpSiteLock, true)
		}
		R(&smpArr[(id*97+i)%1000], base+smpSiteA, a) // still in A
		Leave(base + smpFnA)
		W(&smpArr[(id*13+i)%1000], base+smpSiteRoot, true)
	}
}

func sampleRec(base uint32, id, n int) {
	c := Enter(base + smpFnC)
	W(&smpArr[(id*7+n)%1000], base+smpSiteB, c)
	if n > 0 {
		sampleRec(base, id, n-1)
	}
	R(&smpArr[(id*7+n+1)%1000], base+smpSiteB, c)
	Leave(base + smpFnC)
}

// sampleWorkload runs sampleBody in the calling goroutine (born in
// untraced code: the test's) and in nfork forked goroutines at once.
func sampleWorkload(nfork int) func(uint32) {
	return func(uint32) {
		base := RegisterFile("s.go", []string{"A", "B", "C"}, make([]uint32, 3*smpNSites))
		wg := &smpWG
		var ended sync.WaitGroup // untraced: End recorded before Finish
		for k := 1; k <= nfork; k++ {
			WaitGroupAdd(wg, 1, base+smpSiteFork, true)
			c := Fork(base + smpSiteFork)
			ended.Add(1)
			go func() {
				defer ended.Done()
				Begin(c)
				defer End(c)
				defer WaitGroupDone(wg, base+smpSiteFork, true)
				sampleBody(base, k)
				c.Ok()
			}()
		}
		sampleBody(base, 0)
		WaitGroupWait(wg, base+smpSiteFork, true)
		ended.Wait()
	}
}

// sampleWorkloadSites is sampleWorkload for gs-ad, whose goroutines of
// one go statement share counters, so that their decisions depend on how
// they interleave: only goroutines of different go statements run at once.
// The calling goroutine (born in untraced code: its own counters) forks
// one goroutine at a second go statement, which runs concurrently with
// everything else, then forks nseq goroutines at the first go statement
// one after another, each after the previous one ended, then runs the body
// itself.
func sampleWorkloadSites(nseq int) func(uint32) {
	return func(uint32) {
		base := RegisterFile("s.go", []string{"A", "B", "C"}, make([]uint32, 3*(smpNSites+1)))
		siteFork2 := base + smpNSites
		wg := &smpWG
		var ended sync.WaitGroup // untraced: End recorded before Finish
		run := func(c *Child, site uint32, k int) {
			defer ended.Done()
			Begin(c)
			defer End(c)
			defer WaitGroupDone(wg, site, true)
			sampleBody(base, k)
			c.Ok()
		}
		WaitGroupAdd(wg, 1, siteFork2, true)
		c := Fork(siteFork2)
		ended.Add(1)
		go run(c, siteFork2, nseq+1)
		for k := 1; k <= nseq; k++ {
			var one sync.WaitGroup
			one.Add(1)
			WaitGroupAdd(wg, 1, base+smpSiteFork, true)
			c := Fork(base + smpSiteFork)
			ended.Add(1)
			go func() {
				defer one.Done()
				run(c, base+smpSiteFork, k)
			}()
			one.Wait() // untraced: the next worker starts after this one's End
		}
		sampleBody(base, 0)
		WaitGroupWait(wg, base+smpSiteFork, true)
		ended.Wait()
	}
}

// recordSampled records f with sampler name ("" for none) in mode, and the
// filter settings restored afterwards.
func recordSampled(t *testing.T, dedup bool, name string, seed int64, mode string, f func(uint32)) *trace.Trace {
	t.Helper()
	if err := setSampler(name, seed, mode); err != nil {
		t.Fatal(err)
	}
	defer resetSampling()
	// The WaitGroup annotations depend on how the workers interleave
	// (which Add finds the counter at 0): not what these tests compare.
	wgMisuse = false
	defer func() { wgMisuse = true }()
	return record(t, dedup, f)
}

// perG splits the events of tr kept by keep into one sequence per
// goroutine, each event as "op site obj flags" (Seqs differ between runs).
func perG(tr *trace.Trace, keep func(e *trace.Event) bool) map[trace.GID][]string {
	m := map[trace.GID][]string{}
	for i := range tr.Events {
		e := &tr.Events[i]
		if keep(e) {
			m[e.G] = append(m[e.G], fmt.Sprintf("%v %d %#x %d", e.Op, e.Site, e.Obj, e.Flags))
		}
	}
	return m
}

// perGShown is perG of the events sample.Shown leaves: the frames that
// hold no kept event left out, as a sampled run leaves out its unsampled
// ones (Enter, showFrames).
func perGShown(tr *trace.Trace, keep func(e *trace.Event) bool) map[trace.GID][]string {
	m := map[trace.GID][]string{}
	for _, e := range sample.Shown(tr, keep) {
		m[e.G] = append(m[e.G], fmt.Sprintf("%v %d %#x %d", e.Op, e.Site, e.Obj, e.Flags))
	}
	return m
}

// perGEpochs is perGShown up to what dedup may vary (sample.Epochs).
func perGEpochs(tr *trace.Trace, keep func(e *trace.Event) bool) map[trace.GID][]string {
	return sample.Epochs(tr, keep, func(e *trace.Event) string {
		return fmt.Sprintf("%v %d %#x %d", e.Op, e.Site, e.Obj, e.Flags)
	})
}

func comparePerG(t *testing.T, what string, got, want map[trace.GID][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d goroutines, want %d", what, len(got), len(want))
	}
	for g, w := range want {
		gs := got[g]
		if slices.Equal(gs, w) {
			continue
		}
		i := 0
		for i < len(gs) && i < len(w) && gs[i] == w[i] {
			i++
		}
		t.Fatalf("%s: goroutine %d: %d events, want %d; first difference at %d: got %q, want %q",
			what, g, len(gs), len(w), i, at(gs, i), at(w, i))
	}
}

// edged is tr without the edges sample.Edges drops. A sampled run drops
// them as it records, but for the acquires it keeps when an object it
// synchronizes on shares its slot of edgeVer with another (a heap
// address may).
func edged(tr *trace.Trace) *trace.Trace {
	out, _ := sample.EdgesKept(tr)
	return out
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(end)"
}

func all(*trace.Event) bool { return true }

func notAccess(e *trace.Event) bool { return !e.Op.IsAccess() }

// offline applies the offline sampler to a full trace.
func offline(t *testing.T, full *trace.Trace, name string, seed int64) (*trace.Trace, sample.Stats) {
	t.Helper()
	f, err := sample.NewFilter(name, seed)
	if err != nil {
		t.Fatal(err)
	}
	out := &trace.Trace{M: full.M}
	for i := range full.Events {
		if f.Keep(&full.Events[i]) {
			out.Events = append(out.Events, full.Events[i])
		}
	}
	return out, f.Stats()
}

// The decisions made while recording are the offline filter's: for every
// sampler whose decisions depend only on a goroutine's own calls (the
// thread-local and random ones), a sampled run of a workload whose
// goroutines behave deterministically records, goroutine by goroutine,
// exactly the events the offline sampler keeps from a full run: the same
// accesses in the same frames, and every other event (sync, fork, begin,
// end, and the function boundaries of every frame that holds a recorded
// event: perGShown) of a full run without dedup. With dedup on in the
// sampled run, the same up to what dedup may vary (perGEpochs: the words
// each epoch accesses). The goroutines run concurrently, so the two runs
// interleave differently; only each goroutine's sequence is compared.
func TestSampledEqualsOffline(t *testing.T) {
	for _, dedup := range []bool{true, false} {
		shown := perGShown
		if dedup {
			shown = perGEpochs
		}
		full := recordSampled(t, false, "", 0, "", sampleWorkload(3))
		for _, name := range []string{"tl-ad", "tl-fx", "ucp", "rnd10", "rnd25"} {
			t.Run(fmt.Sprintf("%s/dedup=%v", name, dedup), func(t *testing.T) {
				const seed = 7
				got := recordSampled(t, dedup, name, seed, "", sampleWorkload(3))
				want, st := offline(t, full, name, seed)
				if st.Logged == 0 || st.Logged == st.Accesses {
					t.Fatalf("offline %s logged %d of %d accesses: the workload does not exercise sampling", name, st.Logged, st.Accesses)
				}
				if st.RootAccesses == 0 {
					t.Fatal("no access outside every frame")
				}
				comparePerG(t, name, shown(got, all), shown(want, all))
			})
		}
		// gs-ad shares counters among the goroutines of one go statement,
		// tp-ad among those that run one after another: on a workload
		// where those of one go statement do, their decisions too are the
		// offline filter's, goroutine by goroutine.
		for _, name := range []string{"gs-ad", "tp-ad"} {
			t.Run(fmt.Sprintf("%s/dedup=%v", name, dedup), func(t *testing.T) {
				full := recordSampled(t, false, "", 0, "", sampleWorkloadSites(3))
				got := recordSampled(t, dedup, name, 1, "", sampleWorkloadSites(3))
				want, st := offline(t, full, name, 1)
				_, tl := offline(t, full, "tl-ad", 1)
				if st.Logged == 0 || st.Logged == st.Accesses || st.RootAccesses == 0 {
					t.Fatalf("offline %s stats %+v: the workload does not exercise sampling", name, st)
				}
				if st.Logged >= tl.Logged {
					t.Fatalf("offline %s logged %d accesses, tl-ad %d: the workers of one go statement do not share counters", name, st.Logged, tl.Logged)
				}
				if g := perG(got, all); len(g) != 3+2 {
					t.Fatalf("%d goroutines, want 5", len(g))
				}
				comparePerG(t, name, shown(got, all), shown(want, all))
			})
		}
	}
}

// gs-ad's counters are shared by the goroutines of a go statement however
// they interleave: with two go statements each starting ngor goroutines at
// once that call F calls times, each call writing a word no other call
// writes, the recorded writes of each statement's goroutines are exactly
// as many as the schedule samples of ngor·calls calls (tl-ad would sample
// ngor times the schedule's count of calls). And every event but accesses
// of a full run of sampleWorkload is recorded, goroutine by goroutine.
func TestSiteSamplerCountsPerSite(t *testing.T) {
	const ngor, calls = 4, 500
	var words [2 * ngor * calls]uint64
	siteOf := map[trace.GID]int{}
	tr := recordSampled(t, true, "gs-ad", 1, "", func(uint32) {
		base := RegisterFile("g.go", []string{"F"}, make([]uint32, 3*4))
		var wg sync.WaitGroup
		for st := 0; st < 2; st++ {
			site := base + 1 + uint32(st)
			for k := 0; k < ngor; k++ {
				WaitGroupAdd(&wg, 1, site, true)
				c := Fork(site)
				siteOf[c.gid] = st
				go func() {
					Begin(c)
					defer End(c)
					defer WaitGroupDone(&wg, site, true)
					for i := 0; i < calls; i++ {
						Enter(base)
						W(&words[(st*ngor+k)*calls+i], base+3, true)
						Leave(base)
					}
					c.Ok()
				}()
			}
		}
		WaitGroupWait(&wg, base+1, true)
	})
	p, _ := sample.Lookup("gs-ad")
	count := func(n int) int { return sampledCalls(p, 0, n) }
	var got [2]int
	for _, e := range tr.Events {
		if e.Op == trace.OpWrite {
			got[siteOf[e.G]]++
		}
	}
	want := count(ngor * calls)
	if got[0] != want || got[1] != want || want >= ngor*count(calls) {
		t.Errorf("sampled calls per go statement %v, want %d each (tl-ad: %d)", got, want, ngor*count(calls))
	}

	full := recordSampled(t, true, "", 0, "", sampleWorkload(3))
	sampled := recordSampled(t, true, "gs-ad", 1, "", sampleWorkload(3))
	comparePerG(t, "gs-ad, sync", perGShown(sampled, notAccess), perGShown(full, notAccess))
	n, nf := 0, 0
	for _, e := range sampled.Events {
		if e.Op.IsAccess() {
			n++
		}
	}
	for _, e := range full.Events {
		if e.Op.IsAccess() {
			nf++
		}
	}
	if n == 0 || n >= nf {
		t.Errorf("gs-ad recorded %d of %d accesses", n, nf)
	}
}

// tp-ad's slots at run time: ngor goroutines of one go statement alive at
// once (each waits for all to have made their calls before it ends) hold
// ngor slots, so each samples as a tl-ad goroutine does; ngor more started
// after those ended take their slots and go on where they stopped.
// Goroutines born in untraced code calling in at once each hold a slot of
// the roots' pool for the call; calling in one after another, they share
// one.
func TestSlotSamplerPools(t *testing.T) {
	const ngor, calls = 4, 50
	p, _ := sample.Lookup("tp-ad")
	count := func(from, to int) int { return sampledCalls(p, from, to) }
	var words [2 * ngor * calls]uint64
	batchOf := map[trace.GID]int{}
	tr := recordSampled(t, true, "tp-ad", 1, "", func(uint32) {
		base := RegisterFile("p.go", []string{"F"}, make([]uint32, 3*3))
		var wg sync.WaitGroup
		for batch := 0; batch < 2; batch++ {
			var made sync.WaitGroup  // untraced: all calls made before any End
			var ended sync.WaitGroup // untraced: the next batch starts after every End
			made.Add(ngor)
			ended.Add(ngor)
			for k := 0; k < ngor; k++ {
				WaitGroupAdd(&wg, 1, base+1, true)
				c := Fork(base + 1)
				batchOf[c.gid] = batch
				go func() {
					defer ended.Done()
					Begin(c)
					defer End(c)
					defer WaitGroupDone(&wg, base+1, true)
					for i := 0; i < calls; i++ {
						Enter(base)
						W(&words[(batch*ngor+k)*calls+i], base+2, true)
						Leave(base)
					}
					made.Done()
					made.Wait()
					c.Ok()
				}()
			}
			WaitGroupWait(&wg, base+1, true)
			ended.Wait()
		}
	})
	var got [2]int
	for _, e := range tr.Events {
		if e.Op == trace.OpWrite {
			got[batchOf[e.G]]++
		}
	}
	if want := [2]int{ngor * count(0, calls), ngor * count(calls, 2*calls)}; got != want || want[1] >= want[0] {
		t.Errorf("sampled calls per batch %v, want %v", got, want)
	}

	// Roots: goroutine A, born in untraced code, calls F 12 times from
	// untraced code, making its slot hot. Then B, born in untraced code
	// too, calls F 5 times: while A is inside F (its 13th call), B holds a
	// slot of its own, cold; with A back in untraced code, B takes A's.
	// Under gs-ad and tl-ad, B has its own counters either way. With F a
	// leaf with two copies (leaf), A gives its slot back after each call
	// of the copy too, in Sampled's general path and in its fast one.
	for _, c := range []struct {
		name     string
		together bool
		want     int
		leaf     bool
	}{{"tp-ad", true, 5, false}, {"tp-ad", false, 0, false}, {"gs-ad", false, 5, false}, {"tl-ad", false, 5, false}, {"tp-ad", false, 0, true}} {
		together, leaf := c.together, c.leaf
		var rw [12 + 1 + 5]uint64
		var bSite uint32
		tr := recordSampled(t, true, c.name, 1, "", func(uint32) {
			base := RegisterFile("r.go", []string{"F"}, make([]uint32, 3*3))
			bSite = base + 2
			call := func(i int, site uint32, wait func()) {
				if leaf {
					if !Sampled(base) {
						rw[i] = 1
						return
					}
					EnterSampled(base)
				} else {
					Enter(base)
				}
				W(&rw[i], site, true)
				wait()
				Leave(base)
			}
			inside, bDone, aDone := make(chan struct{}), make(chan struct{}), make(chan struct{}) // untraced
			go func() {
				defer close(aDone)
				for i := 0; i < 12; i++ {
					call(i, base+1, func() {})
				}
				if together {
					call(12, base+1, func() { close(inside); <-bDone })
				} else {
					close(inside)
				}
			}()
			go func() {
				defer close(bDone)
				<-inside
				if !together {
					<-aDone
				}
				for i := 0; i < 5; i++ {
					call(13+i, base+2, func() {})
				}
			}()
			<-aDone
			<-bDone
		})
		byB := 0
		for _, e := range tr.Events {
			if e.Op == trace.OpWrite && uint32(e.Site) == bSite {
				byB++
			}
		}
		if byB != c.want {
			t.Errorf("%s, B calling in while A is inside F: %v, F a leaf: %v; %d of B's 5 calls sampled, want %d", c.name, together, leaf, byB, c.want)
		}
	}
}

// sampledCalls is how many of calls from..to-1 (counting from 0) of one
// region p's schedule samples.
func sampledCalls(p sample.Policy, from, to int) int {
	var c sample.Counter
	k := 0
	for i := 0; i < to; i++ {
		if c.Next(&p.Schedule) && i >= from {
			k++
		}
	}
	return k
}

// The global samplers' decisions depend on how goroutines interleave their
// calls; with one goroutine they too equal the offline filter's.
func TestGlobalSamplerOneGoroutine(t *testing.T) {
	full := recordSampled(t, false, "", 0, "", sampleWorkload(0))
	for _, name := range []string{"g-ad", "g-fx"} {
		got := recordSampled(t, true, name, 1, "", sampleWorkload(0))
		want, _ := offline(t, full, name, 1)
		comparePerG(t, name, perGEpochs(got, all), perGEpochs(want, all))
	}
}

// A global sampler's counter of a function counts the calls of every
// goroutine, updated by compare-and-swap: however they interleave, of the
// N calls in all, exactly as many are sampled as the schedule samples of N
// calls. Each call writes a word no other call writes, so the recorded
// writes count the sampled calls.
func TestGlobalSamplerCountsAllGoroutines(t *testing.T) {
	const ngor, calls = 4, 500
	var words [ngor * calls]uint64
	for _, name := range []string{"g-ad", "g-fx"} {
		tr := recordSampled(t, true, name, 1, "", func(uint32) {
			base := RegisterFile("g.go", []string{"F"}, make([]uint32, 3*4))
			var wg sync.WaitGroup
			for k := 0; k < ngor; k++ {
				WaitGroupAdd(&wg, 1, base+1, true)
				c := Fork(base + 1)
				go func() {
					Begin(c)
					defer End(c)
					defer WaitGroupDone(&wg, base+1, true)
					for i := 0; i < calls; i++ {
						Enter(base)
						W(&words[k*calls+i], base+2, true)
						Leave(base)
					}
					c.Ok()
				}()
			}
			WaitGroupWait(&wg, base+1, true)
		})
		p, _ := sample.Lookup(name)
		var c sample.Counter
		want := 0
		for i := 0; i < ngor*calls; i++ {
			if c.Next(&p.Schedule) {
				want++
			}
		}
		got := 0
		for _, e := range tr.Events {
			if e.Op == trace.OpWrite {
				got++
			}
		}
		if got != want || want == 0 || want == ngor*calls {
			t.Errorf("%s: %d sampled calls of %d, want %d", name, got, ngor*calls, want)
		}
	}
}

// Synchronization is never sampled away: with RACEKIT_SAMPLE_MODE=sync no
// access is recorded, and every other event of the full run is, goroutine
// by goroutine, in the same frames; the frames holding none are not. (But
// for the redundant edges on the global objects: TestEdgesSampled.)
func TestSyncModeKeepsEverySync(t *testing.T) {
	full := recordSampled(t, true, "", 0, "", sampleWorkload(3))
	got := recordSampled(t, true, "tl-ad", 1, "sync", sampleWorkload(3))
	for _, e := range got.Events {
		if e.Op.IsAccess() {
			t.Fatalf("sync mode recorded %v", e)
		}
	}
	comparePerG(t, "sync mode", perGShown(got, notAccess), perGShown(full, notAccess))
	// Unsampled code records only synchronization: no frame without an
	// event in it but a Frameless one, and fewer frames than the full run
	// (here none: the workload's frames hold locks and accesses only).
	comparePerG(t, "sync mode, frames", perG(edged(got), notAccess), perGShown(got, notAccess))
	enters := func(tr *trace.Trace) (n int) {
		for _, e := range tr.Events {
			if e.Op == trace.OpFuncEnter {
				n++
			}
		}
		return n
	}
	if n, nf := enters(got), enters(full); n != 0 || nf == 0 {
		t.Errorf("sync mode recorded %d function entries, the full run %d", n, nf)
	}
}

// An atomic operation in an unsampled frame keeps its synchronization
// events and the data access recorded with them (atomicRecord); a plain
// access next to it is dropped.
func TestSampledAtomicKept(t *testing.T) {
	tr := recordSampled(t, true, "ucp", 1, "", func(uint32) {
		base := RegisterFile("a.go", []string{"F"}, make([]uint32, 3*3))
		Enter(base) // ucp: the first 10 calls are not sampled
		AtomicAddInt32(&smpI32, 1, base+1)
		W(&smpArr[0], base+2, true)
		Leave(base)
	})
	var ops []string
	for _, e := range tr.Events {
		switch e.Op {
		case trace.OpBegin, trace.OpFuncEnter, trace.OpFuncExit, trace.OpSyncAcquire, trace.OpSyncRelease:
			continue // the goroutine's life, and its edges with untraced code (Enter)
		}
		ops = append(ops, e.Op.String())
	}
	want := []string{"acq", "armw", "w", "rel"}
	if fmt.Sprint(ops) != fmt.Sprint(want) {
		var names []string
		for _, e := range tr.Events {
			names = append(names, e.Op.String())
		}
		t.Fatalf("events %v (all: %v), want %v", ops, names, want)
	}
}

// In dispatch-only mode nothing is traced, and Enter and Leave keep the
// goroutine's stack of decisions.
func TestDispatchOnly(t *testing.T) {
	probeGoid()
	savedOn := on
	on = false
	defer func() { on = savedOn }()
	if err := setSampler("tl-ad", 1, "dispatch"); err != nil {
		t.Fatal(err)
	}
	defer resetSampling()
	var p sample.Policy
	p, _ = sample.Lookup("tl-ad")
	var c sample.Counter
	for i := 0; i < 100; i++ {
		Enter(5)
		Enter(6)
		want := c.Next(&p.Schedule)
		if d := dcur(); d.samp.inRecorded(trace.GID(d.goid), d.depth) != want {
			got := !want
			t.Fatalf("call %d of 6: sampled %v, want %v", i, got, want)
		}
		Leave(6)
		Leave(5)
	}
	if d := dcur(); d.depth != 0 || d.samp.rootDone {
		t.Fatalf("after the calls: depth %d, start routine checked %v", d.depth, d.samp.rootDone)
	}
}

func TestBadSampler(t *testing.T) {
	defer resetSampling()
	if err := setSampler("nosuch", 1, ""); err == nil || sampling {
		t.Fatal("an unknown sampler was accepted")
	}
	if err := setSampler("tl-ad", 1, "fast"); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
	if err := setFilter("bush", ""); err == nil || treeOn {
		t.Fatal("an unknown filter was accepted")
	}
}

// The per-goroutine counter table finds every function's own counter as
// it grows.
func TestCounterTable(t *testing.T) {
	var tab counterTable
	ref := map[uint32]*sample.Counter{}
	p, _ := sample.Lookup("tl-ad")
	for i := 0; i < 20000; i++ {
		fn := uint32((i * 7919) % 3001)
		if i%5 == 0 {
			fn = ^uint32(0) - 1 // the largest site ID a table may see
		}
		c := ref[fn]
		if c == nil {
			c = new(sample.Counter)
			ref[fn] = c
		}
		if got, want := tab.get(fn).Next(&p.Schedule), c.Next(&p.Schedule); got != want {
			t.Fatalf("call %d of %d: %v, want %v", i, fn, got, want)
		}
	}
	if tab.n != len(ref) {
		t.Fatalf("%d entries, want %d", tab.n, len(ref))
	}
}

// TREE in the writer: the trace on disk is the offline filter's output on
// the full trace. The goroutines run one after another, so the merged
// order (TREE's input) is the same in both runs.
func TestTreeWhileRecording(t *testing.T) {
	work := func(uint32) {
		base := RegisterFile("s.go", []string{"A", "B", "C"}, make([]uint32, 3*smpNSites))
		for k := 1; k <= 3; k++ {
			wg := &smpWG
			WaitGroupAdd(wg, 1, base+smpSiteFork, true)
			c := Fork(base + smpSiteFork)
			ended := make(chan struct{}) // untraced: End recorded before main goes on
			go func() {
				defer close(ended)
				Begin(c)
				defer End(c)
				defer WaitGroupDone(wg, base+smpSiteFork, true)
				sampleBody(base, k)
				c.Ok()
			}()
			WaitGroupWait(wg, base+smpSiteFork, true)
			<-ended
			sampleBody(base, 0)
		}
	}
	wgMisuse = false // interleaving-dependent events (recordSampled)
	defer func() { wgMisuse = true }()
	for _, algo := range []string{"hb", "fasttrack", "hybrid", "lockset", "all"} {
		full := record(t, false, work)
		if err := setFilter("tree", algo); err != nil {
			t.Fatal(err)
		}
		got := record(t, false, work)
		setFilter("", "")
		r := filter.NewReader(full.Iter(), tree.New(tree.OptionsFor(algo)))
		want, err := trace.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if r.DroppedAccesses() == 0 && algo != "lockset" {
			t.Errorf("%s: TREE dropped nothing", algo)
		}
		comparePerG(t, "tree for "+algo, perG(got, all), perG(want, all))
		for i, e := range got.Events {
			if e.Seq != uint64(i+1) {
				t.Fatalf("%s: event %d has Seq %d", algo, i, e.Seq)
			}
		}
	}
}

// BenchmarkEnter is the cost of an Enter/Leave pair: not traced, traced,
// traced with tl-ad's dispatch check (tl-ad-general: without the fast
// paths), and the check alone.
func BenchmarkEnter(b *testing.B) {
	for _, mode := range []string{"off", "full", "tl-ad", "tl-ad-general", "gs-ad", "tp-ad", "g-ad", "dispatch", "dispatch-gs-ad"} {
		b.Run(mode, func(b *testing.B) {
			savedOn := on
			switch mode {
			case "off":
				on = false
			case "dispatch", "dispatch-gs-ad":
				probeGoid()
				on = false
				name := "tl-ad"
				if mode == "dispatch-gs-ad" {
					name = "gs-ad"
				}
				if err := setSampler(name, 1, "dispatch"); err != nil {
					b.Fatal(err)
				}
				if mode == "dispatch-gs-ad" {
					// Fork does not run in this mode: the goroutine
					// takes a go statement's counters as a forked one.
					dcur().samp.born(1001)
				}
			case "tl-ad", "tl-ad-general", "gs-ad", "tp-ad", "g-ad":
				if err := setSampler(strings.TrimSuffix(mode, "-general"), 1, ""); err != nil {
					b.Fatal(err)
				}
				// -general: Enter's and Leave's general paths on every
				// call, the baseline of their fast ones in the same run.
				quickCheck = quickCheck && !strings.HasSuffix(mode, "-general")
				benchStart(b, true)
			default:
				benchStart(b, true)
			}
			defer func() { on = savedOn; resetSampling() }()
			loop := func() {
				for i := 0; i < b.N; i++ {
					Enter(uint32(i & 63))
					Leave(uint32(i & 63))
				}
			}
			if mode == "gs-ad" {
				// A forked goroutine, which gs-ad counts with its go
				// statement's counters (a goroutine born in untraced
				// code counts alone, as under tl-ad).
				c := Fork(1001)
				done := make(chan struct{})
				b.ResetTimer()
				go func() {
					defer close(done)
					Begin(c)
					defer End(c)
					loop()
					c.Ok()
				}()
				<-done
			} else {
				// An outer frame: the goroutine (the benchmark's, born
				// in untraced code) stays in traced code, so the pairs
				// below record no edge with untraced code (see Enter).
				Enter(1000)
				defer Leave(1000)
				b.ResetTimer()
				loop()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

// BenchmarkEnterParallel is BenchmarkEnter's pairs made by GOMAXPROCS
// goroutines at once, forked by one go statement, each calling the same 64
// functions: tl-ad's counters are each goroutine's own; gs-ad's are shared
// by the goroutines of the go statement (here all of them), g-ad's by all
// goroutines, so these two contend on the same words.
func BenchmarkEnterParallel(b *testing.B) {
	for _, mode := range []string{"full", "tl-ad", "gs-ad", "tp-ad", "g-ad"} {
		b.Run(mode, func(b *testing.B) {
			if mode != "full" {
				if err := setSampler(mode, 1, ""); err != nil {
					b.Fatal(err)
				}
				defer resetSampling()
			}
			benchStart(b, true)
			n := runtime.GOMAXPROCS(0)
			var wg sync.WaitGroup
			b.ResetTimer()
			for k := 0; k < n; k++ {
				c := Fork(1001)
				wg.Add(1)
				go func() {
					defer wg.Done()
					Begin(c)
					defer End(c)
					for i := k; i < b.N; i += n {
						Enter(uint32(i & 63))
						Leave(uint32(i & 63))
					}
					c.Ok()
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

// BenchmarkAccessSampled is BenchmarkAccess (distinct words, nothing
// deduplicated) inside a frame: recorded in full, recorded with tl-ad in
// a sampled frame, and skipped in an unsampled one (the guarded path's
// cost: dedup's table, then the check).
func BenchmarkAccessSampled(b *testing.B) {
	for _, mode := range []string{"full", "sampled", "unsampled"} {
		b.Run(mode, func(b *testing.B) {
			if mode != "full" {
				name := "tl-ad" // the first 10 calls are sampled
				if mode == "unsampled" {
					name = "ucp" // the first 10 are not
				}
				if err := setSampler(name, 1, ""); err != nil {
					b.Fatal(err)
				}
				defer resetSampling()
			}
			benchStart(b, true)
			buf := make([]int, 1<<16)
			Enter(1)
			defer Leave(1)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				R(&buf[i&(1<<16-1)], 0, true)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "hooks/s")
		})
	}
}

// BenchmarkUnsampledCall measures LiteRace's choice between two copies of
// each function and racekit's guarded path (sample.go), per call of a
// function making k reads, under tl-ad after its bursts (almost every call
// unsampled; each call reads k words past the last call's, so dedup does
// not drop them):
//
//	plain    the function uninstrumented: the floor
//	guarded  what racekit emits: Enter, whose result (false: not sampled)
//	         each of the k access hooks takes and returns at once on,
//	         Leave
//	lookup   the guarded path before Enter returned the decision: each
//	         hook finds its goroutine and its dedup entry, then checks
//	         the goroutine's sampling mode (hooks given true still do)
//	frames   Enter and Leave around the plain body
//	copies   LiteRace's dispatch, as leaf functions have it: Sampled,
//	         then an uninstrumented copy of the body when the call is not
//	         sampled (nothing recorded), the instrumented one with
//	         EnterSampled when it is
//	copies-general  the same with Sampled's fast path off: the check
//	         through decide, as before the fast path (the baseline of
//	         copies in the same run)
func BenchmarkUnsampledCall(b *testing.B) {
	for _, k := range []int{4, 16} {
		for _, mode := range []string{"plain", "guarded", "lookup", "copies", "copies-general", "frames"} {
			b.Run(fmt.Sprintf("k=%d/%s", k, mode), func(b *testing.B) {
				if err := setSampler("tl-ad", 1, ""); err != nil {
					b.Fatal(err)
				}
				defer resetSampling()
				if mode == "copies-general" {
					quickCheck = false // Sampled's general path on every call
				}
				benchStart(b, true)
				buf := make([]int, 1<<16)
				const mask = 1<<16 - 1
				sum := 0
				plain := func(i int) {
					for j := 0; j < k; j++ {
						sum += buf[(i*k+j)&mask]
					}
				}
				instrumented := func(i int) {
					rec := Enter(7)
					for j := 0; j < k; j++ {
						sum += *R(&buf[(i*k+j)&mask], 0, rec)
					}
					Leave(7)
				}
				lookup := func(i int) {
					Enter(7)
					for j := 0; j < k; j++ {
						sum += *R(&buf[(i*k+j)&mask], 0, true)
					}
					Leave(7)
				}
				Enter(1000) // an outer frame, as in BenchmarkEnter
				defer Leave(1000)
				b.ResetTimer()
				switch mode {
				case "plain":
					for i := 0; i < b.N; i++ {
						plain(i)
					}
				case "guarded":
					for i := 0; i < b.N; i++ {
						instrumented(i)
					}
				case "lookup":
					for i := 0; i < b.N; i++ {
						lookup(i)
					}
				case "frames":
					for i := 0; i < b.N; i++ {
						Enter(7)
						plain(i)
						Leave(7)
					}
				case "copies", "copies-general":
					for i := 0; i < b.N; i++ {
						if !Sampled(7) {
							plain(i)
							continue
						}
						rec := EnterSampled(7)
						for j := 0; j < k; j++ {
							sum += *R(&buf[(i*k+j)&mask], 0, rec)
						}
						Leave(7)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/call")
				if sum == -1 {
					b.Log(sum)
				}
			})
		}
	}
}

// An access hook given true (not its frame's decision: rt's own accesses,
// a hook outside a function body) asks the bit of its frame, which Enter
// set or cleared, in its general path and in its fast one. F and G, each
// called from traced code (two frames deep) or from untraced code (one),
// write a word per call with true; G starts at F's 50th call, so its burst
// sets the bit of the depth they share while F is in a gap, and F's next
// call must clear it. Exactly the sampled calls' writes are recorded.
func TestAccessGivenTrueAsksFrame(t *testing.T) {
	const calls, gFrom = 200, 50
	for _, name := range []string{"tl-ad", "tp-ad"} {
		for _, depth := range []int{1, 2} {
			tr := recordSampled(t, false, name, 1, "", func(uint32) {
				base := RegisterFile("t.go", []string{"F", "G", "caller"}, make([]uint32, 3*3))
				if depth == 2 {
					Enter(base + 2)
					defer Leave(base + 2)
				}
				for i := 0; i < calls; i++ {
					Enter(base)
					W(&smpArr[i], base, true)
					Leave(base)
					if i >= gFrom {
						Enter(base + 1)
						W(&smpArr[calls+i], base+1, true)
						Leave(base + 1)
					}
				}
			})
			got, _ := written(tr)
			byF := 0
			for _, k := range got {
				if k < calls {
					byF++
				}
			}
			p, _ := sample.Lookup(name)
			if want := sampledCalls(p, 0, calls); byF != want {
				t.Errorf("%s, depth %d: %d of F's %d calls' writes recorded, want the %d sampled", name, depth, byF, calls, want)
			}
			if want := sampledCalls(p, 0, calls-gFrom); len(got)-byF != want {
				t.Errorf("%s, depth %d: %d of G's %d calls' writes recorded, want the %d sampled", name, depth, len(got)-byF, calls-gFrom, want)
			}
		}
	}
}
