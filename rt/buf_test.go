package rt

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/rkt"
)

// The stress program: goroutines run seeded random scripts of plain
// writes, critical sections, atomic adds, channel hand-offs, forks,
// MethodBegins with address sets, blocking outside traced code, and
// Flushes. Every shared access is ordered by the synchronization rt
// records, and each step leaves a mark from which the checks below know
// the real order of the steps.
type stress struct {
	m     sync.Mutex
	n     int      // the critical sections' counter
	slots []uint64 // slots[v]: written in the critical section that saw n == v
	cnt   int64    // atomic counter
	ch    chan int
	sent  []uint64 // sent[t]: written before token t is sent, read after it is received
	got   []uint64 // got[t]: written after token t is received
	own   [][]uint64
	pre   []uint64 // pre[x]: written before fork x; read by the child
	kid   []uint64 // kid[x]: written by the child of fork x
	nfork atomic.Int64
	calls atomic.Int64 // MethodBegins recorded
}

const (
	stressSteps  = 1500
	stressTokens = 200 // per sending goroutine
)

func (st *stress) run(g, ngor int, seed int64, site uint32, wg *sync.WaitGroup) {
	defer wg.Done()
	rng := rand.New(rand.NewSource(seed))
	own := st.own[g]
	sends := 0
	recvs := 0
	var kids sync.WaitGroup
	for i := 0; i < stressSteps; i++ {
		*W(&own[i], site, true) = uint64(i) // program order
		switch op := rng.Intn(20); {
		case op < 6:
			MutexLock(&st.m, site, true)
			v := *R(&st.n, site, true)
			*W(&st.n, site, true) = v + 1
			*W(&st.slots[v], site, true) = 1
			MutexUnlock(&st.m, site, true)
		case op < 9:
			AtomicAddInt64(&st.cnt, 1, site)
		case op < 13:
			// Even goroutines send their tokens, odd ones receive as many.
			if g%2 == 0 && sends < stressTokens {
				t := g/2*stressTokens + sends
				sends++
				*W(&st.sent[t], site, true) = 1
				SendPreG(st.ch, site, true, nil)
				st.ch <- t
				SendPost(st.ch, site, nil)
			} else if g%2 == 1 && recvs < stressTokens {
				recvs++
				t := Recv(st.ch, site)
				_ = *R(&st.sent[t], site, true)
				*W(&st.got[t], site, true) = 1
			}
		case op < 15:
			x := int(st.nfork.Add(1) - 1)
			if x >= len(st.pre) {
				break
			}
			*W(&st.pre[x], site, true) = 1
			c := Fork(site)
			kids.Add(1)
			go func() {
				defer kids.Done()
				Begin(c)
				defer End(c)
				_ = *R(&st.pre[x], site, true)
				*W(&st.kid[x], site, true) = 1
				c.Ok()
			}()
		case op < 17:
			n := rng.Intn(8)
			addrs := make([]uint64, n)
			for j := range addrs {
				addrs[j] = uint64(g)<<32 | uint64(i)<<8 | uint64(j)
			}
			emitAddrs(trace.OpMethodBegin, 0, site, uint64(g+1), addrs)
			emit(trace.OpMethodEnd, 0, site, uint64(g+1))
			st.calls.Add(1)
		case op < 18 && rng.Intn(200) == 0:
			// Blocked outside traced code with an event not written: the
			// writer must steal this goroutine's word to go on.
			time.Sleep(3 * stealAfter)
		case op < 19 && rng.Intn(50) == 0:
			Flush()
		}
	}
	// Tokens left to send or receive (the counts of both sides match).
	for ; g%2 == 0 && sends < stressTokens; sends++ {
		t := g/2*stressTokens + sends
		*W(&st.sent[t], site, true) = 1
		SendPreG(st.ch, site, true, nil)
		st.ch <- t
		SendPost(st.ch, site, nil)
	}
	for ; g%2 == 1 && recvs < stressTokens; recvs++ {
		t := Recv(st.ch, site)
		_ = *R(&st.sent[t], site, true)
		*W(&st.got[t], site, true) = 1
	}
	parkCur(nil)
	kids.Wait()
}

// sameRange reports whether event i of evs is a word of the range event
// event i-1 is a word of (the writer's word runs: one Seq, one goroutine,
// one site, the reader handing out each word).
func sameRange(evs []trace.Event, i int) bool {
	if i == 0 {
		return false
	}
	e, p := &evs[i], &evs[i-1]
	return e.Seq == p.Seq && e.G == p.G && e.Op == p.Op && e.Site == p.Site && e.Op.IsAccess()
}

func addrOf(p *uint64) uint64 { return uint64(uintptr(unsafe.Pointer(p))) }

// TestStressLinearization records the stress program with many goroutines
// and checks that the trace is a linearization of what happened: each
// goroutine's events in program order, each critical section after the
// previous one, atomic operations on a word in their real order, each
// receive after its send, each child after its fork; and that the hb
// detector, which relies on all of that, finds no race in the race-free
// program.
func TestStressLinearization(t *testing.T) {
	seeds := []int64{1, 2, 3}
	ngor := 8
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			st := &stress{
				slots: make([]uint64, ngor*stressSteps),
				ch:    make(chan int, 3),
				sent:  make([]uint64, ngor/2*stressTokens),
				got:   make([]uint64, ngor/2*stressTokens),
				own:   make([][]uint64, ngor),
				pre:   make([]uint64, 400),
				kid:   make([]uint64, 400),
			}
			for g := range st.own {
				st.own[g] = make([]uint64, stressSteps)
			}
			tr := record(t, true, func(site uint32) {
				var wg sync.WaitGroup
				for g := 0; g < ngor; g++ {
					wg.Add(1)
					go st.run(g, ngor, seed*100+int64(g), site, &wg)
				}
				wg.Wait()
			})
			checkStress(t, st, tr, ngor)
		})
	}
}

func checkStress(t *testing.T, st *stress, tr *trace.Trace, ngor int) {
	t.Helper()
	where := map[uint64]func(e *trace.Event, i int){}
	// Program order: own[g][i] written in i order, all by one goroutine.
	ownG := make([]trace.GID, ngor)
	ownNext := make([]int, ngor)
	for g := range st.own {
		ownG[g] = ^trace.GID(0)
		for i := range st.own[g] {
			g, i := g, i
			where[addrOf(&st.own[g][i])] = func(e *trace.Event, _ int) {
				if e.Op != trace.OpWrite {
					return
				}
				if ownG[g] == ^trace.GID(0) {
					ownG[g] = e.G
				}
				if e.G != ownG[g] || i != ownNext[g] {
					t.Fatalf("seq %d: G%d writes own[%d][%d], want G%d writing own[%d][%d]", e.Seq, e.G, g, i, ownG[g], g, ownNext[g])
				}
				ownNext[g]++
			}
		}
	}
	// Critical sections in the order they ran.
	nextSlot := 0
	for v := range st.slots {
		v := v
		where[addrOf(&st.slots[v])] = func(e *trace.Event, _ int) {
			if v != nextSlot {
				t.Fatalf("seq %d: the critical section that saw %d is placed where %d's should be", e.Seq, v, nextSlot)
			}
			nextSlot++
		}
	}
	sentAt := make([]int, len(st.sent))
	gotAt := make([]int, len(st.got))
	for i := range st.sent {
		i := i
		where[addrOf(&st.sent[i])] = func(e *trace.Event, at int) {
			if e.Op == trace.OpWrite {
				sentAt[i] = at
			}
		}
		where[addrOf(&st.got[i])] = func(e *trace.Event, at int) { gotAt[i] = at }
	}
	preAt := make([]int, len(st.pre))
	kidAt := make([]int, len(st.kid))
	for i := range st.pre {
		i := i
		where[addrOf(&st.pre[i])] = func(e *trace.Event, at int) {
			if e.Op == trace.OpWrite {
				preAt[i] = at
			}
		}
		where[addrOf(&st.kid[i])] = func(e *trace.Event, at int) { kidAt[i] = at }
	}
	cnt := addrOf((*uint64)(unsafe.Pointer(&st.cnt)))
	var lastCnt uint64
	holder := ^trace.GID(0)
	mAddr := uint64(uintptr(unsafe.Pointer(&st.m)))
	forkAt := map[uint64]int{}
	calls := 0
	var last uint64
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.Seq != last+1 && !sameRange(tr.Events, i) {
			t.Fatalf("seq %d after %d", e.Seq, last)
		}
		last = e.Seq
		if f := where[e.Obj]; f != nil && e.Op.IsAccess() {
			f(e, i)
		}
		switch {
		case e.Op == trace.OpAtomicRMW && e.Obj == cnt:
			if e.Value != lastCnt+1 {
				t.Fatalf("seq %d: atomic add returned %d after %d", e.Seq, e.Value, lastCnt)
			}
			lastCnt = e.Value
		case e.Op == trace.OpAcquire && e.Obj == mAddr:
			if holder != ^trace.GID(0) {
				t.Fatalf("seq %d: G%d locks while G%d holds the lock", e.Seq, e.G, holder)
			}
			holder = e.G
		case e.Op == trace.OpRelease && e.Obj == mAddr:
			if holder != e.G {
				t.Fatalf("seq %d: G%d unlocks a lock held by G%d", e.Seq, e.G, holder)
			}
			holder = ^trace.GID(0)
		case e.Op == trace.OpFork:
			forkAt[e.Obj] = i
		case e.Op == trace.OpBegin:
			if tr.M.Goroutine(e.G).Parent != trace.NoParent {
				at, ok := forkAt[uint64(e.G)]
				if !ok {
					t.Fatalf("seq %d: G%d begins before its fork", e.Seq, e.G)
				}
				_ = at
			}
		case e.Op == trace.OpMethodBegin:
			calls++
			g := e.Addrs
			if len(g) > 0 && !slices.IsSorted(g) {
				t.Fatalf("seq %d: addresses %x", e.Seq, g)
			}
		}
	}
	for g := range st.own {
		if ownNext[g] != stressSteps {
			t.Errorf("goroutine %d: %d of its %d plain writes recorded", g, ownNext[g], stressSteps)
		}
	}
	if nextSlot != st.n {
		t.Errorf("%d critical sections recorded, %d ran", nextSlot, st.n)
	}
	if int64(lastCnt) != st.cnt {
		t.Errorf("atomic adds recorded up to %d, counter is %d", lastCnt, st.cnt)
	}
	for i := range st.sent {
		if sentAt[i] == 0 || gotAt[i] == 0 || sentAt[i] > gotAt[i] {
			t.Fatalf("token %d: sent at event %d, received at %d", i, sentAt[i], gotAt[i])
		}
	}
	for i := range st.pre {
		if (preAt[i] == 0) != (kidAt[i] == 0) || preAt[i] > kidAt[i] {
			t.Fatalf("fork %d: parent's write at event %d, child's at %d", i, preAt[i], kidAt[i])
		}
	}
	if int64(calls) != st.calls.Load() {
		t.Errorf("%d MethodBegins recorded, %d made", calls, st.calls.Load())
	}
	c := finding.NewCollector()
	if _, err := detect.Run(tr.Iter(), hb.New(c)); err != nil {
		t.Fatal(err)
	}
	for _, g := range c.Groups() {
		t.Errorf("race on %#x: seq %d (G%d %s) and seq %d (G%d %s)", g.Addr, g.Prev.Seq, g.Prev.G, g.Prev.Kind(), g.Cur.Seq, g.Cur.G, g.Cur.Kind())
	}
}

// Addresses of a MethodBegin go through the buffers in records of their
// own, across chunk boundaries, and read back as the same set.
func TestMethodBeginAddrs(t *testing.T) {
	var sets [][]uint64
	for n := 0; n < 40; n++ {
		s := make([]uint64, n)
		for i := range s {
			s[i] = uint64(n)<<20 | uint64(i)*8 + 0x1000
		}
		sets = append(sets, s)
	}
	tr := record(t, false, func(site uint32) {
		for _, s := range sets {
			emitAddrs(trace.OpMethodBegin, 0, site, 7, s)
			emit(trace.OpMethodEnd, 0, site, 7)
		}
	})
	k := 0
	for _, e := range tr.Events {
		if e.Op != trace.OpMethodBegin {
			continue
		}
		if !slices.Equal(e.Addrs, sets[k]) && !(len(e.Addrs) == 0 && len(sets[k]) == 0) {
			t.Fatalf("MethodBegin %d: addresses %x, want %x", k, e.Addrs, sets[k])
		}
		k++
	}
	if k != len(sets) {
		t.Fatalf("%d MethodBegins, want %d", k, len(sets))
	}
}

// stealAfterSync has another goroutine release obj (and then run more, if
// given) while g holds records it has not committed, then Flushes, which
// steals g's word: what g commits next is redone past those events.
func stealAfterSync(t *testing.T, g *gstate, obj uint64, site uint32, more func()) {
	t.Helper()
	done := make(chan bool)
	go func() {
		SyncRelease(obj, site)
		if more != nil {
			more()
		}
		done <- true
	}()
	<-done
	Flush()
	if w := g.word.Load(); !isIdle(w) {
		t.Fatalf("word %#x not stolen by Flush", w)
	}
}

// A steal while a goroutine is between writing records and committing
// them: its plain record gets a key past what the writer wrote meanwhile,
// and its synchronization record a new seq, so both come after the
// events written in between, in program order.
func TestStealRekeys(t *testing.T) {
	var x, y uint64
	objA, objB := NewObject(), NewObject()
	tr := record(t, false, func(site uint32) {
		g := cur()
		// An uncommitted plain record, then one synchronization record
		// with a seq reserved now.
		g.prepPlain()
		g.putEvent(trace.OpWrite, trace.FlagValueUnknown, site, addrOf(&x), 0)
		s := seq.Add(1)
		g.raiseTo(s)
		g.putEvent(trace.OpSyncRelease, 0, site, objA, 0)
		// Meanwhile another goroutine synchronizes, and the writer
		// writes everything it may, stealing g's word.
		stealAfterSync(t, g, objB, site, func() { *W(&y, site, true) = 1 })
		g.commit(true)
		SyncAcquire(objB, site)
	})
	got := ops(tr, func(e *trace.Event) bool { return e.Op != trace.OpBegin })
	want := []string{"1 snd a", "1 w b", "0 w c", "0 snd d", "0 rcv a"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// Finish while other goroutines are still recording: it neither
// deadlocks nor loses what was recorded before it (each goroutine's first
// phase, and the events of one blocked with records not yet written),
// later hooks are no-ops, and the trace is complete and valid.
func TestFinishWhileRecording(t *testing.T) {
	const ngor, phase1 = 4, 3000
	marks := make([][]uint64, ngor)
	for g := range marks {
		marks[g] = make([]uint64, 1<<16)
	}
	var blocked [64]uint64
	var ready, stopped sync.WaitGroup
	stop := make(chan bool)
	release := make(chan bool)
	path := filepath.Join(t.TempDir(), "t.rkt")
	if err := start(path, true); err != nil {
		t.Fatal(err)
	}
	site := RegisterFile("x.go", []string{"p.f"}, []uint32{10, 2, 0})
	for g := 0; g < ngor; g++ {
		ready.Add(1)
		stopped.Add(1)
		go func() {
			defer stopped.Done()
			var ctr int64
			for i := range marks[g] {
				if i == phase1 {
					ready.Done()
				}
				select {
				case <-stop:
					return
				default:
				}
				*W(&marks[g][i], site, true) = 1
				if i%7 == 0 {
					AtomicAddInt64(&ctr, 1, site)
				}
			}
			<-stop
		}()
	}
	// One goroutine records and then blocks outside traced code, open.
	ready.Add(1)
	go func() {
		for i := range blocked {
			*W(&blocked[i], site, true) = 1
		}
		ready.Done()
		<-release
	}()
	ready.Wait()
	Finish()
	close(stop)
	stopped.Wait()
	close(release)
	var x int
	*W(&x, site, true) = 1 // no-op
	if Fork(site) != nil {
		t.Error("Fork after Finish")
	}
	Finish() // a second Finish is a no-op

	tr, warns := readBack(t, path)
	if len(warns) > 0 {
		t.Fatalf("trace not finished: %v", warns)
	}
	next := make([]int, ngor)
	index := map[uint64][2]int{}
	for g := range marks {
		for i := range marks[g] {
			index[addrOf(&marks[g][i])] = [2]int{g, i}
		}
	}
	nblocked := 0
	for _, e := range tr.Events {
		if e.Op != trace.OpWrite {
			continue
		}
		if e.Obj >= addrOf(&blocked[0]) && e.Obj <= addrOf(&blocked[len(blocked)-1]) {
			nblocked++
			continue
		}
		if gi, ok := index[e.Obj]; ok {
			if gi[1] != next[gi[0]] {
				t.Fatalf("goroutine %d: mark %d after %d", gi[0], gi[1], next[gi[0]]-1)
			}
			next[gi[0]]++
		}
	}
	for g, n := range next {
		if n < phase1 {
			t.Errorf("goroutine %d: %d marks, want at least the %d recorded before Finish", g, n, phase1)
		}
	}
	if nblocked != len(blocked) {
		t.Errorf("blocked goroutine: %d of its %d writes", nblocked, len(blocked))
	}
	c := finding.NewCollector()
	if _, err := detect.Run(tr.Iter(), hb.New(c)); err != nil {
		t.Fatal(err)
	}
	if c.Len() != 0 {
		t.Errorf("%d races in a race-free run", c.Len())
	}
}

// Without Flush or Finish, events reach the file: a goroutine that
// recorded and then blocked outside traced code is stolen from, and the
// writer flushes within its delay, so a run killed now would leave them.
func TestTimedFlushOfBlockedGoroutine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.rkt")
	if err := start(path, true); err != nil {
		t.Fatal(err)
	}
	defer Finish()
	site := RegisterFile("x.go", []string{"p.f"}, []uint32{10, 2, 0})
	var xs [10]uint64
	release := make(chan bool)
	defer close(release)
	wrote := make(chan bool)
	go func() {
		for i := range xs {
			*W(&xs[i], site, true) = 1
		}
		wrote <- true
		<-release // blocked, open, with its writes committed but not written
	}()
	<-wrote
	for deadline := time.Now().Add(20 * time.Second); ; {
		n := countWrites(t, path)
		if n == len(xs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d writes in the file", n, len(xs))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// countWrites reads the (unfinished) trace at path.
func countWrites(t *testing.T, path string) int {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.ReadAll(rkt.NewReader(f, path))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range tr.Events {
		if e.Op == trace.OpWrite {
			n++
		}
	}
	return n
}

// A goroutine born in untraced code is placed after the events recorded
// before it, and the events of other goroutines recorded after it (they
// see the new generation) are placed after its Begin.
func TestUntracedBeginOrder(t *testing.T) {
	x, y := escape[uint64](), escape[uint64]()
	tr := record(t, false, func(site uint32) {
		*W(x, site, true) = 1 // goroutine 0, open
		done := make(chan bool)
		begun := make(chan bool)
		go func() {
			*W(y, site, true) = 1 // goroutine 1: born in untraced code
			begun <- true
			<-done
		}()
		<-begun
		*W(x, site, true) = 2 // after G1's Begin
		close(done)
	})
	got := ops(tr, func(e *trace.Event) bool { return true })
	// G1's write and G0's second one are both after G1's Begin, in
	// either order.
	want1 := []string{"0 begin a", "0 w b", "1 begin a", "1 w c", "0 w b"}
	want2 := []string{"0 begin a", "0 w b", "1 begin a", "0 w b", "1 w c"}
	if !slices.Equal(got, want1) && !slices.Equal(got, want2) {
		t.Fatalf("events %q, want %q", got, want1)
	}
}

// BenchmarkAccessParallel is BenchmarkAccess from several goroutines at
// once: each records into its own buffer.
func BenchmarkAccessParallel(b *testing.B) {
	benchStart(b, true)
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]int, 1<<16)
		for i := 0; pb.Next(); i++ {
			R(&buf[i&(1<<16-1)], 0, true)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkMatMul is the CPU-bound subject (e2e/testdata/subjects/cpu)
// as its instrumented code runs: two forked goroutines multiply halves of
// a matrix product through R1/W1 hooks, recording about a third of the
// accesses after dedup. It reports recorded events per second, writing
// included (Finish is inside the timed loop).
func BenchmarkMatMul(b *testing.B) {
	const n = 120
	mat := func() [][]float64 {
		m := make([][]float64, n)
		for i := range m {
			m[i] = make([]float64, n)
			for j := range m[i] {
				m[i][j] = float64(i + j)
			}
		}
		return m
	}
	a, bm, c := mat(), mat(), mat()
	mul := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := *R1(&c[i], 1, true)
			for j := 0; j < n; j++ {
				s := 0.0
				for k := 0; k < n; k++ {
					s += (*R1(&(*R1(&a[i], 2, true))[k], 3, true)) * (*R1(&(*R1(&bm[k], 4, true))[j], 5, true))
				}
				*W1(&row[j], 6, true) = s
			}
		}
	}
	var events uint64
	dir := b.TempDir()
	for it := 0; it < b.N; it++ {
		if err := start(filepath.Join(dir, "b.rkt"), true); err != nil {
			b.Fatal(err)
		}
		RegisterFile("x.go", nil, make([]uint32, 3*8))
		var wg sync.WaitGroup
		for _, r := range [][2]int{{0, n / 2}, {n / 2, n}} {
			wg.Add(1)
			ch := Fork(1)
			go func() {
				Begin(ch)
				defer End(ch)
				defer WaitGroupDone(&wg, 1, true)
				mul(r[0], r[1])
				ch.Ok()
			}()
		}
		WaitGroupWait(&wg, 1, true)
		Finish()
		events += outSeq
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// throttled makes the writer's limit small for the test (the writer falls
// behind at once) and returns the slices its 4 goroutines write, 30000
// words each.
func throttled(t *testing.T) [][]uint64 {
	saved := maxPending
	maxPending = 2 * bigChunk
	t.Cleanup(func() { maxPending = saved })
	marks := make([][]uint64, 4)
	for g := range marks {
		marks[g] = make([]uint64, 30000)
	}
	return marks
}

// When goroutines record faster than the writer writes, they wait for it
// (idle, so that the frontier does not wait for them), and nothing is
// lost.
func TestThrottle(t *testing.T) {
	marks := throttled(t)
	tr := record(t, true, func(site uint32) {
		var wg sync.WaitGroup
		for g := range marks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range marks[g] {
					*W(&marks[g][i], site, true) = 1
				}
			}()
		}
		wg.Wait()
	})
	index := map[uint64][2]int{}
	for g := range marks {
		for i := range marks[g] {
			index[addrOf(&marks[g][i])] = [2]int{g, i}
		}
	}
	next := make([]int, len(marks))
	for _, e := range tr.Events {
		if gi, ok := index[e.Obj]; ok {
			if gi[1] != next[gi[0]] {
				t.Fatalf("goroutine %d: write %d after %d", gi[0], gi[1], next[gi[0]]-1)
			}
			next[gi[0]]++
		}
	}
	for g, k := range next {
		if n := len(marks[g]); k != n {
			t.Errorf("goroutine %d: %d of %d writes", g, k, n)
		}
	}
}

// Throttled goroutines in a synctest bubble wait without time.Sleep: a
// sleep there runs on the bubble's fake clock, which advanced while they
// waited, and once the bubble's main goroutine had returned, goroutines
// asleep in throttleWait made synctest panic with "deadlock: main bubble
// goroutine has exited but blocked goroutines remain" (held-out
// golang.org/x/net's TestServerRFC9218PrioritySmallPayload).
func TestThrottleInBubble(t *testing.T) {
	marks := throttled(t)
	var elapsed time.Duration
	tr := record(t, true, func(site uint32) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			var wg sync.WaitGroup
			for g := range marks {
				wg.Go(func() {
					for i := range marks[g] {
						*W(&marks[g][i], site, true) = 1
					}
				})
			}
			wg.Wait()
			elapsed = time.Since(start)
		})
	})
	if elapsed != 0 {
		t.Errorf("the bubble's clock advanced %v while its goroutines recorded, want 0", elapsed)
	}
	writes := 0
	for _, e := range tr.Events {
		if e.Op == trace.OpWrite {
			writes++
		}
	}
	if want := len(marks) * len(marks[0]); writes < want {
		t.Errorf("%d writes recorded, want %d", writes, want)
	}
}

// In a synctest bubble, whose clock stands still while its goroutines
// run, the rounds throttled goroutines run there still steal the frontier
// from a goroutine blocked where rt does not see it (a channel of
// untraced code, here) after stealAfter of real time (nanotime), and
// write what was recorded: with rounds timed on time.Now they never
// stole, wrote nothing, and every later event throttled again.
func TestBubbleRoundSteals(t *testing.T) {
	marks := throttled(t)
	var wrote bool
	record(t, true, func(site uint32) {
		wmu.Lock()
		stopWriterTimer() // no round but the bubble's (its goroutines do not arm the timer)
		wmu.Unlock()
		synctest.Test(t, func(t *testing.T) {
			block := make(chan bool)
			blocked := make(chan bool)
			go func() {
				Enter(site) // in traced code
				defer Leave(site)
				*W(&marks[1][0], site, true) = 1 // holds the frontier
				blocked <- true
				<-block // untraced: rt does not see it wait
			}()
			<-blocked
			written := func() uint64 {
				wmu.Lock()
				defer wmu.Unlock()
				return outSeq
			}
			start := written()
			for deadline := nanotime() + int64(5*time.Second); nanotime() < deadline && !wrote; {
				SyncRelease(NewObject(), site) // keys past the blocked goroutine's
				for i := range marks[0] {
					*W(&marks[0][i], site, true) = 1
				}
				wrote = written()-start > 100 // a sweep is written as a few range events (wordRun)
			}
			close(block)
		})
	})
	if !wrote {
		t.Errorf("at most 100 events written in 5 s of throttled recording in a bubble beside a goroutine blocked unseen")
	}
}

// helpWrite reports how many events its round wrote: throttleWait runs
// another round at once only after one that wrote (a round that writes
// nothing waits for a goroutine holding the frontier, and looks at every
// goroutine each time).
func TestHelpWriteReportsWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.rkt")
	if err := start(path, false); err != nil {
		t.Fatal(err)
	}
	defer Finish()
	site := RegisterFile("x.go", []string{"p.f"}, []uint32{10, 2, 0})
	x := escape[uint64]()
	for i := 0; i < 10; i++ {
		W(x, site, true)
	}
	parkCur(nil) // idle: the frontier passes this goroutine's records
	wmu.Lock()
	stopWriterTimer() // no round but ours
	wmu.Unlock()
	n, ok := helpWrite()
	if !ok || n < 10 {
		t.Fatalf("helpWrite after 10 writes: wrote %d (ran: %v), want at least 10", n, ok)
	}
	if n, ok := helpWrite(); !ok || n != 0 {
		t.Fatalf("helpWrite with nothing new: wrote %d (ran: %v), want 0", n, ok)
	}
}

// A FuncExit is not committed by itself (gstate.frame). The goroutine's
// next event commits it; a steal meanwhile (Flush) leaves it to be redone
// past what the writer wrote, still in the goroutine's program order;
// park commits it before the goroutine waits; Finish commits its caller's.
func TestFrameExitUncommitted(t *testing.T) {
	x, y, z, v := escape[uint64](), escape[uint64](), escape[uint64](), escape[uint64]()
	objB := NewObject()
	tr := record(t, false, func(site uint32) {
		Enter(1) // an outer frame, left open
		g := cur()
		Enter(2)
		*W(x, site, true) = 1
		Leave(2)
		if g.written == g.committed {
			t.Fatal("a FuncExit committed by itself")
		}
		stealAfterSync(t, g, objB, site, nil)
		*W(y, site, true) = 1 // its commit fails: the exit is redone first
		Enter(3)
		*W(z, site, true) = 1
		Leave(3)
		parkCur(nil)
		if g.written != g.committed || !isIdle(g.word.Load()) {
			t.Fatalf("park left %d records uncommitted (word %#x)", g.written-g.committed, g.word.Load())
		}
		Enter(4)
		*W(v, site, true) = 1
		Leave(4) // committed by Finish
	})
	got := ops(tr, func(e *trace.Event) bool { return e.Op != trace.OpBegin })
	want := []string{"0 enter a", "0 rcv b", "0 enter c", "0 w d", "1 snd e", "0 exit c", "0 w f",
		"0 enter g", "0 w h", "0 exit g", "0 enter i", "0 w j", "0 exit i"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// A goroutine born in untraced code that returns there (a test function,
// an HTTP handler) commits its last FuncExit and goes idle: the writer
// need not wait to steal its word while it waits in untraced code.
func TestReturnToUntracedIdle(t *testing.T) {
	x := escape[uint64]()
	record(t, false, func(site uint32) {
		done := make(chan bool)
		go func() { // born in untraced code: Enter at depth 1 records its edge
			defer close(done)
			Enter(1)
			*W(x, site, true) = 1
			Leave(1)
			g := cur()
			if g.written != g.committed || !isIdle(g.word.Load()) {
				t.Errorf("back in untraced code with %d records uncommitted, word %#x", g.written-g.committed, g.word.Load())
			}
		}()
		<-done
	})
}

// A steal's redo that is shorter than the records it replaces (their key
// markers merged into one) ends in an earlier chunk than they did; the
// chunk they had run on into must not be where the goroutine, or the
// writer, goes next. Before the fix the goroutine filled the earlier chunk
// while its old link stayed, the writer freed it once read and followed
// the link, and read the stale record left there in place of the
// goroutine's next event (a trace with a stale value record stops with
// "invalid op 254"; one with a stale access has an event that never
// happened).
func TestStealRedoShorter(t *testing.T) {
	var pad, y [3]uint64
	var z, w uint64
	tr := record(t, false, func(site uint32) {
		g := cur()
		// Committed events until the chunk has five free records.
		for i := 0; len(g.wc.recs)-g.wi != 5; i++ {
			if i > 10000 {
				t.Fatalf("chunk of %d records at %d", len(g.wc.recs), g.wi)
			}
			g.plain(trace.OpWrite, 0, site, addrOf(&pad[0]), 0)
		}
		// Six uncommitted records, three key markers and three writes:
		// five in this chunk, one in the next.
		for i := range y {
			g.raiseTo(seq.Add(1))
			g.putEvent(trace.OpWrite, trace.FlagValueUnknown, site, addrOf(&y[i]), 0)
		}
		Flush() // steals g's word
		g.commit(false)
		// The redo wrote one key and three writes; one record is left.
		if n := len(g.wc.recs) - g.wi; n != 1 {
			t.Fatalf("%d records left in the chunk after the redo, want 1", n)
		}
		g.plain(trace.OpWrite, 0, site, addrOf(&z), 0) // fills the chunk, committed
		Flush()                                        // reads it to its end
		g.plain(trace.OpWrite, 0, site, addrOf(&w), 0) // in a new chunk
	})
	var got []uint64
	for _, e := range tr.Events {
		if e.Op == trace.OpWrite && e.Obj != addrOf(&pad[0]) {
			got = append(got, e.Obj)
		}
	}
	want := []uint64{addrOf(&y[0]), addrOf(&y[1]), addrOf(&y[2]), addrOf(&z), addrOf(&w)}
	if !slices.Equal(got, want) {
		t.Fatalf("writes %x, want %x", got, want)
	}
}

// TestStealRandom drives the test goroutine's buffer through random mixes
// of committed events, uncommitted ones under several keys (some with a
// value record) that a Flush steals before they are committed, Flushes,
// and runs up to a few records short of a chunk's end; the trace must hold
// exactly its events, in order, with their values. (TestStealRedoShorter
// is one such path, by hand.)
func TestStealRandom(t *testing.T) {
	seeds := 12
	if testing.Short() || raceEnabled {
		seeds = 2
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		rng := rand.New(rand.NewSource(seed))
		words := make([]uint64, 1<<12)
		lo, hi := addrOf(&words[0]), addrOf(&words[len(words)-1])
		var want [][2]uint64 // address, value
		next := 0
		tr := record(t, false, func(site uint32) {
			g := cur()
			ev := func() (uint64, uint64) {
				a, v := addrOf(&words[next%len(words)]), uint64(rng.Intn(3))
				next++
				want = append(want, [2]uint64{a, v})
				return a, v
			}
			for range 2000 {
				switch rng.Intn(4) {
				case 0: // committed one by one
					for k := rng.Intn(40); k > 0; k-- {
						a, v := ev()
						g.plain(trace.OpWrite, 0, site, a, v)
					}
				case 1: // uncommitted, stolen, then committed
					g.prepPlain()
					for k := 1 + rng.Intn(6); k > 0; k-- {
						if rng.Intn(2) == 0 {
							g.raiseTo(seq.Add(1))
						}
						a, v := ev()
						g.putEvent(trace.OpWrite, 0, site, a, v)
					}
					Flush()
					g.commit(false)
				case 2:
					Flush()
				case 3: // close to a chunk's end
					for left := 1 + rng.Intn(8); len(g.wc.recs)-g.wi > left; {
						a, v := ev()
						g.plain(trace.OpWrite, 0, site, a, v)
					}
				}
			}
		})
		var got [][2]uint64
		for _, e := range tr.Events {
			if e.Op == trace.OpWrite && e.Obj >= lo && e.Obj <= hi {
				got = append(got, [2]uint64{e.Obj, e.Value})
			}
		}
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d writes in the trace, want %d", seed, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d: write %d is %x, want %x", seed, i, got[i], want[i])
			}
		}
	}
}

// A goroutine that records only atomic operations (a spin on a lock word,
// as xsync's lockBucket) is throttled like any other: with no writer but
// throttling's own rounds, what waits to be written stays bounded. Before,
// atomic hooks never looked at the throttle flag, so such a goroutine's
// unread records grew without bound and, past 2^22 (the count its word
// holds, cntBits), the writer read a wrong count of them: events out of
// key order (a false race between two atomics of one word) and a value
// record read as an event ("invalid op 254").
func TestThrottleAtomics(t *testing.T) {
	saved := maxPending
	maxPending = 2 * bigChunk
	defer func() { maxPending = saved }()
	const n = 20000
	var word uint64
	peak := int64(0)
	tr := record(t, true, func(site uint32) {
		wt := wtimer.Swap(nil) // no writer rounds but throttling's
		wt.t.Stop()
		defer wtimer.Store(wt)
		for i := 0; i < n; i++ {
			AtomicLoadUint64(&word, site)
			peak = max(peak, pending.Load())
		}
	})
	if limit := maxPending + 3*bigChunk; peak > limit {
		t.Errorf("%d records waited to be written at the peak, want at most %d", peak, limit)
	}
	loads := 0
	for _, e := range tr.Events {
		if e.Op == trace.OpAtomicLoad && e.Obj == addrOf(&word) {
			loads++
		}
	}
	if loads != n {
		t.Errorf("%d atomic loads in the trace, want %d", loads, n)
	}
}

// Goroutines blocked forever when the trace is finished, in a Lock, a
// WaitGroup.Wait, a send on a nil channel and a receive from one, get a
// block event each, after every other event; a select with a nil case that
// another case completes gets none.
func TestBlockEvents(t *testing.T) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var nilc chan int
	ready := make(chan int, 1)
	tr := record(t, false, func(site uint32) {
		MutexLock(&mu, site, true)
		wg.Add(1)
		go func() { MutexLock(&mu, site, true) }()
		go func() { WaitGroupWait(&wg, site, true) }()
		go func() {
			g := SendPreG(nilc, site, true, nil)
			nilc <- 1
			SendPost(nilc, site, g)
		}()
		go func() { _ = RecvG(nilc, site, nil) }()
		ready <- 1
		select { // a select's nil case is no block
		case <-nilc:
		case <-ready:
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			n := 0
			regMu.Lock()
			for _, g := range reg {
				if g.blockObj.Load() != 0 {
					n++
				}
			}
			regMu.Unlock()
			if n == 4 {
				break
			}
		}
	})
	var kinds []trace.BlockKind
	last := true
	for i, e := range tr.Events {
		if e.Op == trace.OpBlock {
			kinds = append(kinds, trace.BlockKind(e.Value))
			last = last && i >= len(tr.Events)-4
		}
	}
	slices.Sort(kinds)
	want := []trace.BlockKind{trace.BlockLock, trace.BlockWait, trace.BlockNilSend, trace.BlockNilRecv}
	if !slices.Equal(kinds, want) || !last {
		t.Errorf("block events %v (the last events: %v), want %v, last", kinds, last, want)
	}
}

// A sync.Map entry stored while another goroutine is inside Range, which
// then visits it: Range loads each entry as it gets to it, so the
// callback's read of what the Store published is ordered after it (no
// race), as under -race, where sync.Map's atomics order them. Before each
// visit acquired, only Range's start did, and the read raced with the
// write before the Store (go-metrics' PrometheusSink, corpus session 29).
func TestSyncMapRangeVisitAcquires(t *testing.T) {
	var m sync.Map
	m.Store("a", 0)
	m.Store("b", 0)
	m.Range(func(k, v any) bool { return true }) // both keys in the read map
	obj := escape[int64]()
	var races []finding.Group
	for range 3 {
		tr := record(t, false, func(site uint32) {
			base := RegisterFile("m.go", []string{"A", "B", "C"}, make([]uint32, 3*smpNSites))
			store, stored := make(chan string), make(chan bool) // not traced
			wait := goForked(base, func() {
				k := <-store
				*W1(obj, site, true) = 1
				SyncMapStore(&m, k, obj, site)
				stored <- true
			})
			first := true
			SyncMapRange(&m, func(k, v any) bool {
				if first {
					first = false
					other := map[any]string{"a": "b", "b": "a"}[k]
					store <- other // the other key's entry changes before Range gets to it
					<-stored
					return true
				}
				if p, ok := v.(*int64); ok {
					_ = *R1(p, site, true)
				}
				return true
			}, site)
			wait()
		})
		c := finding.NewCollector()
		if _, err := detect.Run(tr.Iter(), hb.New(c)); err != nil {
			t.Fatal(err)
		}
		races = append(races, c.Groups()...)
	}
	if len(races) > 0 {
		t.Errorf("%d races reported between the write before the Store and the read in Range's callback, want none", len(races))
	}
}

// TestSyncMapLayoutKnown: under the toolchain the tests run with (Go 1.24
// on, sync.Map a HashTrieMap), rt tells a map's first operation from the
// map itself, so that Loads record loads (mapOp); were the layout
// different, every method would record a read-modify-write.
func TestSyncMapLayoutKnown(t *testing.T) {
	if !mapLayoutKnown {
		t.Fatal("sync.Map's first word is not the HashTrieMap's inited flag")
	}
	var m sync.Map
	if mapInited(&m) {
		t.Fatal("a new map reads as initialized")
	}
	m.Store(1, 2)
	if !mapInited(&m) {
		t.Fatal("a map after a Store reads as not initialized")
	}
}

// BenchmarkGoroutines is a goroutine's life as instrumented code records
// it (Fork, Begin, one write, GoEnd), for goroutines that record little:
// each takes a first chunk and the writer frees it (arena.go's lists, a
// sync.Pool before them).
func BenchmarkGoroutines(b *testing.B) {
	benchStart(b, true)
	xs := make([]int, 1024)
	var wg sync.WaitGroup
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		wg.Add(1)
		c := Fork(1)
		go func() {
			Begin(c)
			defer wg.Done()
			defer GoEnd(c)
			W(&xs[i&1023], 2, true)
		}()
		if i&63 == 63 {
			wg.Wait() // at most 64 at once, as a worker pool's bursts
		}
	}
	wg.Wait()
}

// BenchmarkFieldLoop is two loops over a slice of 4096 structs, one that
// reads a field of each and one that writes another (stride 24: a sparse
// span each, wordRun)
// against the same loop recorded as word events (RACEKIT_RANGES=0, what
// the writer made of a stride over 8 bytes before sparse spans), in the
// same run: the time with writing included (Finish inside the loop), and
// the trace's bytes per op.
func BenchmarkFieldLoop(b *testing.B) {
	type item struct{ key, val, pad int64 }
	for _, mode := range []string{"words", "ranges"} {
		b.Run(mode, func(b *testing.B) {
			saved := wordEvents
			wordEvents = mode == "words"
			defer func() { wordEvents = saved }()
			items := make([]item, 4096)
			path := filepath.Join(b.TempDir(), "b.rkt")
			var size int64
			for it := 0; it < b.N; it++ {
				if err := start(path, false); err != nil {
					b.Fatal(err)
				}
				RegisterFile("x.go", nil, make([]uint32, 3*4))
				var sum int64
				for i := range items {
					sum += *R1(&items[i].key, 1, true)
				}
				for i := range items {
					*W1(&items[i].val, 2, true) = sum
				}
				Finish()
				fi, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				size += fi.Size()
			}
			b.ReportMetric(float64(size)/float64(b.N), "trace-bytes/op")
		})
	}
}
