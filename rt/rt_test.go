package rt

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/rkt"
)

// record starts tracing into a fresh file, runs f, finishes the trace and
// reads it back.
// escape returns a new T in the heap: the compiler keeps a variable that
// does not escape in the stack, where rt records nothing (onStack).
func escape[T any]() *T {
	p := new(T)
	escapeSink = p
	return p
}

var escapeSink any

func record(t *testing.T, withDedup bool, f func(site uint32)) *trace.Trace {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.rkt")
	if err := start(path, withDedup); err != nil {
		t.Fatal(err)
	}
	site := RegisterFile("x.go", []string{"p.f"}, []uint32{10, 2, 0, 11, 3, 0})
	f(site)
	Finish()
	tr, _ := readBack(t, path)
	return tr
}

// readBack reads the trace at path back, with the reader's warnings.
func readBack(t *testing.T, path string) (*trace.Trace, []string) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r := rkt.NewReader(file, path)
	tr, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return tr, r.Warnings()
}

// ops returns the trace's events as "G op obj" strings with objects
// renamed by first appearance, for comparison.
func ops(tr *trace.Trace, keep func(e *trace.Event) bool) []string {
	names := map[uint64]string{}
	var out []string
	for i := range tr.Events {
		e := &tr.Events[i]
		if !keep(e) {
			continue
		}
		n, ok := names[e.Obj]
		if !ok {
			n = string(rune('a' + len(names)))
			names[e.Obj] = n
		}
		out = append(out, strconv.Itoa(int(e.G))+" "+e.Op.String()+" "+n)
	}
	return out
}

func TestGoidMatchesRuntimeStack(t *testing.T) {
	probeGoid()
	if haveGetg && goidOff == 0 {
		t.Fatal("the goid offset was not found")
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a, b := goid(), goidSlow(); a != b {
				t.Errorf("goid() = %d, runtime.Stack says %d", a, b)
			}
		}()
	}
	wg.Wait()
}

// A forked goroutine is defined with its parent and the go statement's
// site, and its Begin comes after the Fork; a goroutine rt never saw
// forked has no parent.
func TestForkAndUntracedGoroutines(t *testing.T) {
	var x int
	tr := record(t, false, func(site uint32) {
		W(&x, site, true)
		c := Fork(site + 1)
		done := make(chan bool)
		go func() {
			defer func() { done <- true }() // after End
			Begin(c)
			defer End(c)
			R(&x, site, true)
			c.Ok()
		}()
		<-done
		go func() {
			R(&x, site, true) // started by a plain go statement
			done <- true
		}()
		<-done
	})
	got := ops(tr, func(e *trace.Event) bool { return e.Op != trace.OpFuncEnter })
	want := []string{"0 begin a", "0 w b", "0 fork c", "1 begin a", "1 r b", "1 end a", "2 begin a", "2 r b"}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %q, want %q", got, want)
		}
	}
	m := tr.M
	if g := m.Goroutine(1); g.Parent != 0 || m.Site(g.Site).Line != 11 {
		t.Errorf("forked goroutine: %+v, want parent 0 at x.go:11", g)
	}
	if g := m.Goroutine(2); g.Parent != trace.NoParent {
		t.Errorf("untraced goroutine: parent %d, want NoParent", g.Parent)
	}
}

// A release always precedes, in Seq, the acquire it enables: the mutex
// hooks record the release before unlocking and the acquire after locking.
func TestReleaseBeforeAcquire(t *testing.T) {
	var m sync.Mutex
	var n int
	tr := record(t, false, func(site uint32) {
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					MutexLock(&m, site, true)
					n++
					MutexUnlock(&m, site, true)
				}
			}()
		}
		wg.Wait()
	})
	holder := trace.GID(^uint32(0))
	var last uint64
	for i, e := range tr.Events {
		if e.Seq <= last && !sameRange(tr.Events, i) {
			t.Fatalf("seq %d after %d", e.Seq, last)
		}
		last = e.Seq
		switch e.Op {
		case trace.OpAcquire:
			if holder != ^trace.GID(0) {
				t.Fatalf("seq %d: G%d acquires while G%d holds the lock", e.Seq, e.G, holder)
			}
			holder = e.G
		case trace.OpRelease:
			if holder != e.G {
				t.Fatalf("seq %d: G%d releases a lock held by G%d", e.Seq, e.G, holder)
			}
			holder = ^trace.GID(0)
		}
	}
	if n != 800 {
		t.Fatal(n)
	}
}

// Repeated accesses to one word between two synchronization events of a
// goroutine are recorded once (a write covers a later read); a new epoch
// records them again, and so does an allocation the words it makes new.
func TestDedup(t *testing.T) {
	x, y := escape[int](), escape[int]()
	tr := record(t, true, func(site uint32) {
		W(x, site, true)
		R(x, site, true) // covered by the write
		W(x, site, true) // covered
		R(y, site, true)
		R(y, site, true) // covered
		W(y, site, true) // a write is not covered by a read
		SyncRelease(NewObject(), site)
		R(x, site, true) // new epoch
		R(y, site, true)
		Alloc(y, site, true) // y is a new object, its value written: x's epoch goes on
		R(x, site, true)     // covered
		R(y, site, true)     // covered by the new object's initial write
	})
	got := ops(tr, func(e *trace.Event) bool {
		return e.Op.IsAccess() || e.Op == trace.OpSyncRelease || e.Op == trace.OpAlloc
	})
	want := []string{"0 w a", "0 r b", "0 w b", "0 snd c", "0 r a", "0 r b", "0 alloc b", "0 w b"}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %q, want %q", got, want)
		}
	}
}

// With RACEKIT_DEDUP=release an epoch ends only at a release: an access
// repeated after a lock's acquisition, an atomic load, a sync object's
// acquire or a channel receive is one FastTrack skips (dedupAcquires), and
// is not recorded; after an Unlock, a send or an atomic store it is. By
// default each of those operations starts a new epoch.
func TestDedupAcquires(t *testing.T) {
	x, a := escape[int](), escape[int32]()
	var m sync.Mutex
	body := func(site uint32) {
		ch := make(chan int, 1)
		obj := NewObject()
		R(x, site, true)
		MutexLock(&m, site, true)
		R(x, site, true) // acquire only
		AtomicLoadInt32(a, site)
		R(x, site, true) // acquire only
		SyncAcquire(obj, site)
		R(x, site, true) // acquire only
		MutexUnlock(&m, site, true)
		R(x, site, true) // after a release
		g := SendPreG(ch, site, true, nil)
		ch <- 1
		SendPost(ch, site, g)
		R(x, site, true) // after a send
		if Recv(ch, site) != 1 {
			panic("recv")
		}
		R(x, site, true) // after a receive's completion (its begin published)
		AtomicStoreInt32(a, 1, site)
		R(x, site, true) // after an atomic store
	}
	reads := func(tr *trace.Trace) int {
		n := 0
		for _, e := range tr.Events {
			if e.Op == trace.OpRead && e.Obj == ptr(unsafe.Pointer(x)) {
				n++
			}
		}
		return n
	}
	if n := reads(record(t, true, body)); n != 8 {
		t.Errorf("default dedup: %d reads of x, want 8 (one per epoch)", n)
	}
	dedupAcquires = true
	defer func() { dedupAcquires = false }()
	if n := reads(record(t, true, body)); n != 5 {
		t.Errorf("RACEKIT_DEDUP=release: %d reads of x, want 5 (one per release)", n)
	}
}

// A goroutine that sweeps a working set wider than a small table many
// times in one epoch (a matrix product's inner loops) records each word
// about once per table size it passes through, not once per sweep: its
// table grows (seenSizes). With RACEKIT_DEDUP_MAX at 2048 the table stays
// small and every sweep records the words again; a new epoch records them
// again at any size.
func TestDedupTableGrows(t *testing.T) {
	const words, sweeps = 20000, 40
	data := make([]uint64, words)
	escapeSink = data
	body := func(site uint32) {
		for s := 0; s < sweeps; s++ {
			for i := range data {
				R(&data[i], site, true)
			}
		}
		SyncRelease(NewObject(), site) // a new epoch
		for i := range data {
			R(&data[i], site, true)
		}
	}
	reads := func(tr *trace.Trace) int {
		n := 0
		for _, e := range tr.Events {
			if e.Op == trace.OpRead {
				n++
			}
		}
		return n
	}
	defer setDedupMax("")
	setDedupMax("")
	// Growth re-records until the table passes the working set's width: a
	// few sweeps' worth in the first epoch, one in the second.
	if n := reads(record(t, true, body)); n < 2*words || n > 6*words {
		t.Errorf("grown table: %d reads of %d words swept %d times, then once in a new epoch; want between %d and %d", n, words, sweeps, 2*words, 6*words)
	}
	// Many short epochs over a few words (a ping-pong) conflict in no
	// table: it stays at the second size.
	level := -1
	record(t, true, func(site uint32) {
		for e := 0; e < 20000; e++ {
			for i := range 3 {
				R(&data[i], site, true)
			}
			SyncRelease(NewObject(), site)
		}
		level = cur().seen.level
	})
	if level != 1 {
		t.Errorf("short epochs: the table is at size %d, want %d", seenSizes[level].size, seenSizes[1].size)
	}
	setDedupMax("2048")
	if n := reads(record(t, true, body)); n < sweeps*words {
		t.Errorf("table kept at 2048: %d reads, want every sweep's %d", n, (sweeps+1)*words)
	}
}

// An access of more than rangeMinWords words is one range event, which
// the reader hands on as the words it covers: a copy of 1000 words records
// all of them, where word events stopped at maxRangeEvents; dedup drops a
// range event that repeats one of the epoch. Smaller ones record their
// words one by one, which dedup drops when repeated, and a copy records its
// writes first, so that a copy within one slice records each word once;
// without dedup a copy records its reads, then its writes.
func TestRangeEvents(t *testing.T) {
	s := escape[[4]uint64]()[:]
	big := escape[[3]uint64]()
	long := escape[[1000]uint64]()[:]
	body := func(site uint32) {
		Copy(s[1:], s[:3], site, true) // keys moving right
		Copy(s[:3], s[1:], site, true) // and back: only s[0] is new, as a write
		W(big, site, true)             // three words, all new
		R(big, site, true)             // covered
		Copy(long[1:], long[:999], site, true)
		Copy(long[1:], long[:999], site, true) // a repeat in the epoch: dropped with dedup
	}
	want := map[bool][]string{
		true: {"0 w a", "0 w b", "0 w c", "0 r d", "0 w d", "0 w e", "0 w f", "0 w g"},
		false: {"0 r d", "0 r a", "0 r b", "0 w a", "0 w b", "0 w c",
			"0 r a", "0 r b", "0 r c", "0 w d", "0 w a", "0 w b",
			"0 w e", "0 w f", "0 w g", "0 r e", "0 r f", "0 r g"},
	}
	for _, withDedup := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "t.rkt")
		if err := start(path, withDedup); err != nil {
			t.Fatal(err)
		}
		body(RegisterFile("x.go", []string{"p.f"}, []uint32{10, 2, 0, 11, 3, 0}))
		Finish()
		file, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r := rkt.NewReader(file, path)
		tr, err := trace.ReadAll(r)
		file.Close()
		if err != nil {
			t.Fatal(err)
		}
		names := map[uint64]string{}
		for i, p := range []*uint64{&s[1], &s[2], &s[3], &s[0], &big[0], &big[1], &big[2]} {
			names[uint64(uintptr(unsafe.Pointer(p)))] = string(rune('a' + i))
		}
		var got []string
		longReads, longWrites := map[uint64]bool{}, map[uint64]bool{}
		longEvents := 0
		lo, hi := uint64(uintptr(unsafe.Pointer(&long[0]))), uint64(uintptr(unsafe.Pointer(&long[999])))
		for _, e := range tr.Events {
			switch {
			case !e.Op.IsAccess():
			case e.Obj >= lo && e.Obj <= hi:
				longEvents++
				if e.Op == trace.OpRead {
					longReads[e.Obj] = true
				} else {
					longWrites[e.Obj] = true
				}
			default:
				got = append(got, fmt.Sprintf("%d %s %s", e.G, e.Op, names[e.Obj]))
			}
		}
		if !slices.Equal(got, want[withDedup]) {
			t.Errorf("dedup %v: events %q, want %q", withDedup, got, want[withDedup])
		}
		if len(longReads) != 999 || len(longWrites) != 999 || !longReads[lo] || !longWrites[hi] {
			t.Errorf("dedup %v: the long copy read %d words and wrote %d, want 999 each", withDedup, len(longReads), len(longWrites))
		}
		// Range events of 999 words each: 2 with dedup, 4 without.
		ranges := 4
		if withDedup {
			ranges = 2
		}
		if recs, evs := r.Events(), uint64(len(tr.Events)); longEvents != 999*ranges || evs-recs != uint64(998*ranges) {
			t.Errorf("dedup %v: %d events of the long copies, %d events from %d records; want %d range events of 999 words", withDedup, longEvents, evs, recs, ranges)
		}
	}
}

// An atomic operation is its sync event plus a data access of the word
// inside a critical section of the word's private lock.
func TestAtomicEvents(t *testing.T) {
	var v int64
	var b atomic.Bool
	tr := record(t, false, func(site uint32) {
		AtomicAddInt64(&v, 2, site)
		AtomicLoadInt64(&v, site)
		AtomicBoolStore(&b, true, site)
	})
	got := ops(tr, func(e *trace.Event) bool { return e.Op != trace.OpBegin })
	want := []string{
		"0 acq a", "0 armw b", "0 w b", "0 rel a",
		"0 acq a", "0 aload b", "0 r b", "0 rel a",
		"0 acq c", "0 astore d", "0 w d", "0 rel c",
	}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %q, want %q", got, want)
		}
	}
	if v != 2 || !b.Load() {
		t.Fatal("the operations were not performed")
	}
	var vals []uint64
	for _, e := range tr.Events {
		if e.Op.IsAtomic() || e.Op.IsAccess() {
			vals = append(vals, e.Value)
		}
	}
	if want := []uint64{2, 2, 2, 2, 1, 1}; !slices.Equal(vals, want) {
		t.Errorf("values %v, want %v", vals, want)
	}
}

// Channel hooks: a send releases c and acquires c+1 after; a receive
// releases c+1 before and acquires c after; close writes and releases c.
// The first hook to see the channel records its allocation at c, before
// the send's read of c.
func TestChannelEvents(t *testing.T) {
	ch := make(chan int, 1)
	var cp uint64
	tr := record(t, false, func(site uint32) {
		cp = chanAddr(ch)
		SendPreG(ch, site, true, nil)
		ch <- 1
		SendPost(ch, site, nil)
		if Recv(ch, site) != 1 {
			t.Error("wrong value")
		}
		Close(ch, site, true)
	})
	var got []string
	for _, e := range tr.Events {
		if e.Op == trace.OpBegin {
			continue
		}
		off := "c"
		if e.Obj == cp+1 {
			off = "c+1"
		} else if e.Obj != cp {
			off = "?"
		}
		got = append(got, e.Op.String()+" "+off)
	}
	want := []string{"alloc c", "r c", "snd c", "rcv c+1", "snd c+1", "rcv c", "w c", "snd c"}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %q, want %q", got, want)
		}
	}
}

// Without a trace, hooks only do the operation.
func TestDisabledHooks(t *testing.T) {
	saved := on
	on = false
	defer func() { on = saved }()
	var m sync.Mutex
	var x int
	MutexLock(&m, 1, true)
	*W(&x, 1, true) = 3
	MutexUnlock(&m, 1, true)
	if Fork(1) != nil || x != 3 {
		t.Fatal("hooks misbehave without a trace")
	}
}

func benchStart(b *testing.B, withDedup bool) {
	if err := start(filepath.Join(b.TempDir(), "b.rkt"), withDedup); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(Finish)
}

// BenchmarkAccess is the cost of recording one access (distinct words, so
// nothing is deduplicated).
func BenchmarkAccess(b *testing.B) {
	benchStart(b, true)
	buf := make([]int, 1<<16)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		R(&buf[i&(1<<16-1)], 0, true)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkCallAccess is the cost of a call that records one access (a
// distinct word each time): its FuncEnter, the access and its FuncExit,
// the events of call-heavy code (a parser's small functions). BenchmarkAccess
// is the access alone.
func BenchmarkCallAccess(b *testing.B) {
	benchStart(b, true)
	buf := make([]int, 1<<22) // more words than dedup's table remembers
	Enter(1000)               // an outer frame: no edge with untraced code per call (see Enter)
	defer Leave(1000)
	g := cur()
	before := g.written
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Enter(uint32(i & 63))
		R(&buf[i&(1<<22-1)], 0, true)
		Leave(uint32(i & 63))
	}
	b.ReportMetric(float64(g.written-before)/float64(b.N), "records/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkAccessRepeat is the cost of an access deduplicated away.
func BenchmarkAccessRepeat(b *testing.B) {
	benchStart(b, true)
	var x int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		R(&x, 0, true)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "hooks/s")
}

// BenchmarkAccessBytes reads the bytes of a 4 KiB buffer in turn, again
// and again in one epoch (a byte loop): after the first pass every read is
// a repeat, which dedup drops if the bytes of a word do not push one
// another out of the table (seenEntry's byte bits). records/op is what the
// goroutine wrote per hook; BenchmarkAccess and BenchmarkAccessRepeat are
// the baselines of a recorded and a dropped access.
func BenchmarkAccessBytes(b *testing.B) {
	benchStart(b, true)
	buf := make([]byte, 4096)
	escapeSink = buf
	R(&buf[0], 0, true) // the goroutine's state and table
	g := cur()
	before := g.written
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		R(&buf[i&4095], 0, true)
	}
	b.ReportMetric(float64(g.written-before)/float64(b.N), "records/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "hooks/s")
}

// BenchmarkMutex is a Lock/Unlock pair with its events.
func BenchmarkMutex(b *testing.B) {
	benchStart(b, true)
	var m sync.Mutex
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		MutexLock(&m, 0, true)
		MutexUnlock(&m, 0, true)
	}
	// Lock and Unlock each record a read of the lock and its acquire or
	// release.
	b.ReportMetric(float64(4*b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkCur is the goroutine lookup every hook but the access hooks'
// inlined path makes (cur). BenchmarkPipeline's sampled message makes ten
// (its channel hooks and lock hooks), which record almost nothing: 3.4 ns
// each on the 2-core VM, 34 of the 80-115 ns the hooks add per message.
func BenchmarkCur(b *testing.B) {
	benchStart(b, true)
	var g *gstate
	for i := 0; i < b.N; i++ {
		g = cur()
	}
	if g == nil {
		b.Fatal("no goroutine")
	}
}

// BenchmarkDisabled is a hook when the program is not traced.
func BenchmarkDisabled(b *testing.B) {
	saved := on
	on = false
	defer func() { on = saved }()
	var x int
	for i := 0; i < b.N; i++ {
		R(&x, 0, true)
	}
}

// A channel hook handed the goroutine's state of an earlier trace (a
// goroutine blocked in a send while a test started another trace) looks
// the goroutine up again: its event is in the new trace.
func TestChanHookStaleState(t *testing.T) {
	c := make(chan int, 1)
	var old *gstate
	record(t, false, func(site uint32) {
		old = SendPreG(c, site, false, nil)
		c <- 1
		SendPost(c, site, old)
		<-c
	})
	if old == nil {
		t.Fatal("SendPreG returned no state while tracing")
	}
	tr := record(t, false, func(site uint32) { SendPost(c, site, old) })
	for _, e := range tr.Events {
		if e.Op == trace.OpSyncAcquire && e.Obj == chanAddr(c)+1 {
			return
		}
	}
	t.Fatalf("the acquire of a hook given an earlier trace's state is not in the new trace: %v", tr.Events)
}

// EnterG hands the hooks of its function the goroutine's state: the one
// cur finds while tracing (in a forked goroutine, its own), nil when
// nothing is traced. A G hook handed nil, or a state of an earlier trace
// (sampled, so that the lock goes through releaseLock's rule), records in
// the current trace as the hook without the state does.
func TestHooksTakeEnterState(t *testing.T) {
	if _, g := EnterG(1); g != nil {
		t.Fatal("EnterG returned a state with nothing traced")
	}
	Leave(1)
	var mu sync.Mutex
	c := make(chan int, 1)
	var old *gstate
	record(t, false, func(site uint32) {
		child := Fork(site)
		done := make(chan struct{}) // untraced
		go func() {
			defer close(done)
			Begin(child)
			defer End(child)
			_, g := EnterG(site)
			if g != cur() || g.gid != child.gid {
				t.Errorf("EnterG in a forked goroutine returned %p, its state is %p", g, cur())
			}
			Leave(site)
			child.Ok()
		}()
		<-done
		var rec bool
		rec, old = EnterG(site)
		MutexLockG(&mu, site, rec, old)
		MutexUnlockG(&mu, site, rec, old)
		Leave(site)
	})
	if old == nil {
		t.Fatal("EnterG returned no state while tracing")
	}
	if err := setSampler("tl-ad", 1, ""); err != nil {
		t.Fatal(err)
	}
	defer resetSampling()
	for _, g := range []*gstate{old, nil} {
		tr := record(t, false, func(site uint32) {
			MutexLockG(&mu, site, true, g)
			MutexUnlockG(&mu, site, true, g)
			s := SendPreG(c, site, true, g)
			c <- 1
			SendPost(c, site, s)
			if v, ok := Recv2G(c, site, g); v != 1 || !ok {
				t.Errorf("Recv2G = %d, %v", v, ok)
			}
			c <- 2
			if v := RecvG(c, site, g); v != 2 {
				t.Errorf("RecvG = %d", v)
			}
			for r := RecvRangeG(c, site, g); r == nil; r = nil {
				t.Error("RecvRangeG returned no state while tracing")
			}
		})
		var acq, rel, snd, rcv int
		for _, e := range tr.Events {
			switch {
			case e.Op == trace.OpAcquire && e.Obj == ptr(unsafe.Pointer(&mu)):
				acq++
			case e.Op == trace.OpRelease && e.Obj == ptr(unsafe.Pointer(&mu)):
				rel++
			case e.Op == trace.OpSyncRelease && e.Obj == chanAddr(c):
				snd++
			case e.Op == trace.OpSyncAcquire && e.Obj == chanAddr(c):
				rcv++
			}
		}
		if acq != 1 || rel != 1 || snd != 1 || rcv != 1 {
			t.Errorf("hooks handed %p (old %p): %d acquires, %d releases of the lock, %d sends, %d receives recorded; want 1 each (the rest add no edge)\n%v", g, old, acq, rel, snd, rcv, tr.Events)
		}
	}
}

// TestAppendGrowthIsAnAllocation: an append that moves the slice to a new
// array records that array, its whole capacity, as a new object (sampled
// or not), before the elements it stores; an append within capacity
// records none. Without it, memory of a dead object handed out again by
// the garbage collector keeps the old object's accesses (issue 28).
func TestAppendGrowthIsAnAllocation(t *testing.T) {
	var grownTo, inPlace []int64
	var str []byte
	tr := record(t, false, func(site uint32) {
		grownTo = Append([]int64(nil), site, true, 1, 2, 3)
		inPlace = Append(grownTo[:1:cap(grownTo)], site, true, 7)
		_ = AppendSlice(inPlace, []int64{4, 5, 6, 7, 8, 9}, site, false) // grows, unsampled
		str = AppendString([]byte(nil), "hello", site, true)
	})
	type alloc struct{ lo, hi uint64 }
	var allocs []alloc
	firstWrite := -1
	for i := range tr.Events {
		e := &tr.Events[i]
		if lo, hi, ok := e.AllocRange(); ok {
			allocs = append(allocs, alloc{lo, hi})
		}
		if e.Op == trace.OpWrite && firstWrite < 0 {
			firstWrite = i
			if len(allocs) != 1 {
				t.Fatalf("the first element stored before its array's allocation: %d allocations before it", len(allocs))
			}
		}
	}
	if len(allocs) != 3 {
		t.Fatalf("%d allocations, want 3 (two growths and the string's; none for the append within capacity): %v", len(allocs), allocs)
	}
	p := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(grownTo))))
	if allocs[0] != (alloc{p, p + 8*uint64(cap(grownTo))}) {
		t.Errorf("first allocation %#x-%#x, want the new array %#x-%#x", allocs[0].lo, allocs[0].hi, p, p+8*uint64(cap(grownTo)))
	}
	if p := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(str)))); allocs[2].lo != p || allocs[2].hi != p+uint64(cap(str)) {
		t.Errorf("string append's allocation %#x-%#x, want %#x-%#x", allocs[2].lo, allocs[2].hi, p, p+uint64(cap(str)))
	}
}

// Accesses and allocations in the goroutine's own stack are not recorded
// (onStack): no other goroutine can reach them, and a moved stack's memory
// goes to other goroutines' stacks. The same accesses to a heap object are.
func TestStackNotRecorded(t *testing.T) {
	if !stackKnown {
		probeGoid()
	}
	if !stackKnown {
		t.Skip("no getg on this platform")
	}
	h := escape[[2]uint64]()
	tr := record(t, false, func(site uint32) {
		var local [2]uint64 // stays in the stack: W and R do not keep p
		W(&local, site, true)
		R(&local[1], site, true)
		Alloc(&local, site, true)
		Elems(local[:], site, true)
		W(h, site, true)
		R(&h[1], site, true)
		Alloc(h, site, false) // its initial write not sampled

		Elems(h[:], site, true)
		// A stack that grows moves: the accesses after it are still not
		// recorded, at their new addresses.
		grow(64)
		W(&local, site, true)
	})
	got := ops(tr, func(e *trace.Event) bool { return e.Op.IsAccess() || e.Op == trace.OpAlloc })
	want := []string{"0 w a", "0 w b", "0 r b", "0 alloc a", "0 r a", "0 r b"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q (the heap object's only)", got, want)
	}
}

// grow uses n KB of stack.
func grow(n int) byte {
	var buf [1024]byte
	buf[n%1024] = byte(n)
	if n == 0 {
		return buf[0]
	}
	return grow(n-1) + buf[n%1024]
}

// NewFields records the allocation of the object and of the objects its
// named fields hold (a pointer's object, a slice's array, a map, a field
// of an embedded struct), none of a nil field's, the same at each call
// (the layout looked up once).
func TestNewFields(t *testing.T) {
	type inner struct {
		_ int32
		E []byte
	}
	type obj struct {
		U   *[3]uint64
		S   []uint32
		M   map[int]int
		Nil *uint64
		inner
	}
	o := escape[obj]()
	o.U, o.S, o.M, o.E = escape[[3]uint64](), make([]uint32, 2, 5), map[int]int{}, make([]byte, 1, 9)
	tr := record(t, false, func(site uint32) {
		NewFields(o, site, "U", "S", "M", "Nil", "E", "NotAField")
		NewFields(o, site, "U", "S", "M", "Nil", "E", "NotAField")
	})
	var got []string
	for _, e := range tr.Events {
		if e.Op == trace.OpAlloc {
			got = append(got, fmt.Sprintf("%#x+%d", e.Obj, e.Value))
		}
	}
	want := []string{
		fmt.Sprintf("%#x+%d", uintptr(unsafe.Pointer(o)), unsafe.Sizeof(*o)),
		fmt.Sprintf("%#x+%d", uintptr(unsafe.Pointer(o.U)), 24),
		fmt.Sprintf("%#x+%d", uintptr(unsafe.Pointer(unsafe.SliceData(o.S))), 20),
		fmt.Sprintf("%#x+%d", uintptr(mapPtr(o.M)), 1),
		fmt.Sprintf("%#x+%d", uintptr(unsafe.Pointer(unsafe.SliceData(o.E))), 9),
	}
	want = append(want, want...)
	if !slices.Equal(got, want) {
		t.Fatalf("allocations %q, want %q", got, want)
	}
}

// The Made hooks record a std call's fresh result allocated and then
// written: the whole object, the named fields' objects, a slice up to its
// length, a map that holds entries; with the flag false, no write.
func TestMadeHooks(t *testing.T) {
	type obj struct {
		U *[3]uint64
		S []uint32
		M map[int]int
	}
	o := escape[obj]()
	o.U, o.S, o.M = escape[[3]uint64](), make([]uint32, 2, 5), map[int]int{1: 1}
	s := make([]uint16, 3, 8)
	empty := map[int]int{}
	madeSink = []any{s, empty} // on the heap: rt drops stack addresses
	p := escape[[2]uint64]()
	for _, rec := range []bool{true, false} {
		tr := record(t, false, func(site uint32) {
			MadeFields(o, site, rec, "U", "S", "M")
			MadeSlice(s, site, rec)
			MadeMap(empty, site, rec)
			Made(p, site, rec)
		})
		var got []string
		for _, e := range tr.Events {
			switch e.Op {
			case trace.OpAlloc:
				got = append(got, fmt.Sprintf("alloc %#x+%d", e.Obj, e.Value))
			case trace.OpWrite:
				got = append(got, fmt.Sprintf("write %#x", e.Obj))
			}
		}
		var want []string
		alloc := func(p unsafe.Pointer, size uintptr) {
			want = append(want, fmt.Sprintf("alloc %#x+%d", uintptr(p), size))
		}
		write := func(p unsafe.Pointer, words int) {
			for i := range words {
				if rec {
					want = append(want, fmt.Sprintf("write %#x", uintptr(p)+uintptr(8*i)))
				}
			}
		}
		writeElems := func(p unsafe.Pointer, elem uintptr, n int) { // a slice's, element by element
			for i := range n {
				if rec {
					want = append(want, fmt.Sprintf("write %#x", uintptr(p)+elem*uintptr(i)))
				}
			}
		}
		sd := unsafe.Pointer(unsafe.SliceData(o.S))
		alloc(unsafe.Pointer(o), unsafe.Sizeof(*o))
		alloc(unsafe.Pointer(o.U), 24)
		alloc(sd, 20)
		alloc(mapPtr(o.M), 1)
		write(unsafe.Pointer(o), int(unsafe.Sizeof(*o)/8))
		write(unsafe.Pointer(o.U), 3)
		write(sd, 1) // its length, 2 of 5 elements (a field: words)
		write(mapPtr(o.M), 1)
		alloc(unsafe.Pointer(unsafe.SliceData(s)), 16)
		writeElems(unsafe.Pointer(unsafe.SliceData(s)), 2, 3) // 3 of 8
		alloc(mapPtr(empty), 1)                               // no entries: no write
		alloc(unsafe.Pointer(p), 16)
		write(unsafe.Pointer(p), 2)
		if !slices.Equal(got, want) {
			t.Errorf("rec %v: events\n%s\nwant\n%s", rec, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

var madeSink any

// A buffer a std object holds (bufio.Reader's) is recorded allocated when
// the program first sees it with its owner, the whole array from its
// start, and not again while the collector has not run: seeing it again
// must keep the accesses made since (a race through Peek's bytes stays
// visible).
func TestHeldArrayAllocatedOnce(t *testing.T) {
	br := bufio.NewReaderSize(strings.NewReader("0123456789abcdefghij"), 16)
	other := bufio.NewReaderSize(strings.NewReader("xyz"), 16)
	var first, again []byte
	gcWatch.Do(armGCEpoch)
	epoch := gcEpoch.Load()
	tr := record(t, false, func(site uint32) {
		first, _ = W1Arrays(br, site, true).Peek(4)
		first = first[:cap(first)]
		again, _ = W1Arrays(br, site, true).Peek(2)
		ArraysOf(other, site, true).Peek(1)
		R1Arrays(new(struct{ n int }), site, true) // no slice: nothing
	})
	if gcEpoch.Load() != epoch {
		t.Skip("a collection ran in between")
	}
	allocs := allocRanges(tr)
	p := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(first))))
	if len(allocs) != 2 || allocs[0] != [2]uint64{p, p + 16} {
		t.Fatalf("allocations %#x, want 2, the first %#x-%#x (br's buffer once, other's once)", allocs, p, p+16)
	}
	if &again[0] != &first[0] {
		t.Fatal("Peek moved the buffer")
	}
}

// An object std keeps and hands out (a listener's *net.TCPAddr, here a
// look-alike in an interface) is recorded allocated, with the array its
// slice field holds, the first time it is seen in a GC cycle, and not
// again; a nil or non-pointer value records nothing.
func TestHeldPtrAllocatedOnce(t *testing.T) {
	type addr struct {
		IP   []byte
		Port int
	}
	a := escape[addr]() // in the heap: rt records nothing in the goroutine's stack
	a.IP, a.Port = make([]byte, 16), 1
	var v fmt.Stringer
	gcWatch.Do(armGCEpoch)
	epoch := gcEpoch.Load()
	tr := record(t, false, func(site uint32) {
		HeldPtr(any(a), site)
		HeldPtr(any(a), site)
		HeldPtr(v, site)
		HeldPtr(3, site)
	})
	if gcEpoch.Load() != epoch {
		t.Skip("a collection ran in between")
	}
	allocs := allocRanges(tr)
	p := uint64(uintptr(unsafe.Pointer(a)))
	ip := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(a.IP))))
	want := [][2]uint64{{p, p + uint64(unsafe.Sizeof(*a))}, {ip, ip + 16}}
	if !slices.Equal(allocs, want) {
		t.Fatalf("allocations %#x, want %#x (the object and its IP's array, once)", allocs, want)
	}
}

// allocRanges returns the [lo, hi) ranges of tr's allocation events.
func allocRanges(tr *trace.Trace) [][2]uint64 {
	var out [][2]uint64
	for i := range tr.Events {
		if lo, hi, ok := tr.Events[i].AllocRange(); ok {
			out = append(out, [2]uint64{lo, hi})
		}
	}
	return out
}

// The objects package reflect allocates for a decoder (reflect.New,
// MakeSlice, MakeMap, a Grow that moves the array, MapKeys' slice) are recorded new, each
// once, as new(T) and make are in traced code; a Grow within capacity
// allocates nothing.
func TestReflectAllocations(t *testing.T) {
	var ptr, arr, m, grown, kept reflect.Value
	var keys []reflect.Value
	var appended, same, moved reflect.Value
	var gotArgs, results []reflect.Value
	tr := record(t, false, func(site uint32) {
		ptr = ReflectNew(reflect.TypeFor[[4]int64](), site)
		arr = ReflectMakeSlice(reflect.TypeFor[[]int32](), 2, 8, site)
		m = ReflectMakeMapWithSize(reflect.TypeFor[map[string]int](), 4, site)
		grown = ReflectNew(reflect.TypeFor[[]byte](), site).Elem()
		ReflectGrow(grown, 100, site, true)
		kept = ReflectNew(reflect.TypeFor[[]byte](), site).Elem()
		kept.Set(ReflectMakeSlice(reflect.TypeFor[[]byte](), 0, 64, site))
		ReflectGrow(kept, 10, site, true) // room enough: the same array
		keys = ReflectMapKeys(reflect.ValueOf(map[int]bool{1: true, 2: true}), site, false)
		appended = ReflectAppend(site, true)(reflect.ValueOf([]int64(nil)), reflect.ValueOf(int64(1)))
		same = ReflectAppendSlice(appended.Slice3(0, 0, appended.Cap()), reflect.ValueOf([]int64{2}), site, true)
		moved = ReflectAppendSlice(same, reflect.ValueOf(make([]int64, same.Cap())), site, true)
		made := ReflectMakeFunc(reflect.TypeFor[func(int, int) int](), func(args []reflect.Value) []reflect.Value {
			gotArgs = args
			return []reflect.Value{reflect.ValueOf(int(args[0].Int() + args[1].Int()))}
		}, site)
		results = ReflectCall(made, []reflect.Value{reflect.ValueOf(1), reflect.ValueOf(2)}, site, true)
	})
	at := func(v reflect.Value) uint64 { return uint64(uintptr(v.UnsafePointer())) }
	want := [][2]uint64{
		{at(ptr), at(ptr) + 32},
		{at(arr), at(arr) + 32},
		{at(m), at(m) + 1},
		{at(grown.Addr()), at(grown.Addr()) + 24},
		{at(grown), at(grown) + uint64(grown.Cap())},
		{at(kept.Addr()), at(kept.Addr()) + 24},
		{at(kept), at(kept) + 64},
		{at(reflect.ValueOf(keys)), at(reflect.ValueOf(keys)) + uint64(cap(keys))*uint64(unsafe.Sizeof(keys[0]))},
		{at(appended), at(appended) + 8*uint64(appended.Cap())}, // same: appended's array
		{at(moved), at(moved) + 8*uint64(moved.Cap())},
		{at(reflect.ValueOf(gotArgs)), at(reflect.ValueOf(gotArgs)) + uint64(cap(gotArgs))*uint64(unsafe.Sizeof(reflect.Value{}))},
		{at(reflect.ValueOf(results)), at(reflect.ValueOf(results)) + uint64(cap(results))*uint64(unsafe.Sizeof(reflect.Value{}))},
	}
	if got := allocRanges(tr); !slices.Equal(got, want) {
		t.Fatalf("allocations %#x, want %#x", got, want)
	}
	if len(results) != 1 || results[0].Int() != 3 {
		t.Fatalf("the made function's results %v, want [3]", results)
	}
	if at(same) != at(appended) || at(moved) == at(same) {
		t.Fatalf("the appends' arrays: %#x, %#x, %#x; want the first two the same, the third new", at(appended), at(same), at(moved))
	}
}

// A decoder's zero target: every object reachable from it after the call
// is recorded new, once (a map, the slice in it, the pointer in the
// slice); a target that held something before the call records nothing.
func TestDecodedTarget(t *testing.T) {
	type doc struct {
		M map[string][]*int64
		N []byte // pointer-free elements: its array, not its bytes
	}
	var d doc
	var full = doc{N: []byte{1}}
	var m map[string][]*int64
	tr := record(t, false, func(site uint32) {
		target := DecodeTarget(&d)
		d.M = map[string][]*int64{"a": {new(int64)}}
		d.N = make([]byte, 3, 8)
		Decoded(target, error(nil), site)
		m = d.M
		Decoded(DecodeTarget(&full), 0, site)
		Decoded(DecodeTarget(nil), 0, site)
	})
	at := func(v reflect.Value) uint64 { return uint64(uintptr(v.UnsafePointer())) }
	s := reflect.ValueOf(m["a"])
	p := reflect.ValueOf(m["a"][0])
	n := reflect.ValueOf(d.N)
	want := [][2]uint64{
		{at(reflect.ValueOf(m)), at(reflect.ValueOf(m)) + 1},
		{at(s), at(s) + 8},
		{at(p), at(p) + 8},
		{at(n), at(n) + 8},
	}
	if got := allocRanges(tr); !slices.Equal(got, want) {
		t.Fatalf("allocations %#x, want %#x", got, want)
	}
}

// NewUnlessArg records the result of bufio.NewWriter(w) new unless it is
// w itself (a big enough *bufio.Writer).
func TestNewUnlessArg(t *testing.T) {
	var made *bufio.Writer
	tr := record(t, false, func(site uint32) {
		big := bufio.NewWriterSize(io.Discard, 4096)
		var w io.Writer = big
		if NewUnlessArg(bufio.NewWriter(w), w, site) != big {
			t.Error("bufio.NewWriter did not return its argument")
		}
		w = io.Discard
		made = NewUnlessArg(bufio.NewWriter(w), w, site)
	})
	at := uint64(uintptr(unsafe.Pointer(made)))
	want := [][2]uint64{{at, at + uint64(unsafe.Sizeof(*made))}}
	if got := allocRanges(tr); !slices.Equal(got, want) {
		t.Fatalf("allocations %#x, want %#x", got, want)
	}
}

// An allocation noted for a goroutine is written before its next atomic
// operation too, not only before its next plain or synchronization event:
// the first access to a new object may be an atomic store into it (a
// runtime timer that time.NewTicker makes), and placed before the alloc
// event it met the accesses of the dead object that had its address.
func TestAllocBeforeAtomic(t *testing.T) {
	x := new([2]uint64)
	escapeSink = x
	markAll(x[:])
	tr := record(t, false, func(site uint32) {
		W1(&x[1], site, true) // something else first: the goroutine has a state
		onMalloc(unsafe.Pointer(&x[0]), 16)
		AtomicStoreUint64(&x[0], 1, site)
	})
	var got []string
	for i := range tr.Events {
		switch e := &tr.Events[i]; e.Op {
		case trace.OpAlloc:
			got = append(got, "alloc")
		case trace.OpAtomicStore:
			got = append(got, "astore")
		}
	}
	if want := []string{"alloc", "astore"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// The runtime's allocation hook (mallochook.go), called here as the patched
// runtime calls it: a goroutine's allocations are written before its next
// event, adjacent ones as one range, after the accesses before them; those
// of a goroutine rt has no state for, before the next event of any.
func TestAllocHook(t *testing.T) {
	x, y, untraced := new([4]uint64), new([4]uint64), new([2]uint64)
	allocHookSink = []*[4]uint64{x, y} // on the heap: rt drops stack addresses
	markAll(x[:], y[:], untraced[:])   // as if their memory held an object traced code named before
	const c = 0                        // the runtime's cycle counts, which rt does not use
	tr := record(t, false, func(site uint32) {
		W1(&x[0], site, true)
		onMalloc(unsafe.Pointer(&x[0]), 16)
		onMalloc(unsafe.Pointer(&x[2]), 16) // touches the first: one range
		onMalloc(unsafe.Pointer(&y[1]), 8)  // not touching x's, even if y follows x
		done := make(chan struct{})
		go func() { // no traced code runs here: rt has no state for it
			onMalloc(unsafe.Pointer(&untraced[0]), 16)
			close(done)
		}()
		<-done
		W1(&x[1], site, true)
	})
	addr := func(p *uint64) uint64 { return uint64(uintptr(unsafe.Pointer(p))) }
	var got []string
	for i := range tr.Events {
		e := &tr.Events[i]
		switch {
		case e.Op == trace.OpWrite:
			got = append(got, fmt.Sprintf("write %#x", e.Obj))
		case e.Op == trace.OpAlloc:
			lo, hi, _ := e.AllocRange()
			got = append(got, fmt.Sprintf("alloc %#x-%#x", lo, hi))
		}
	}
	first := []string{fmt.Sprintf("write %#x", addr(&x[0]))}
	allocs := []string{
		fmt.Sprintf("alloc %#x-%#x", addr(&x[0]), addr(&x[0])+32),
		fmt.Sprintf("alloc %#x-%#x", addr(&y[1]), addr(&y[1])+8),
		fmt.Sprintf("alloc %#x-%#x", addr(&untraced[0]), addr(&untraced[0])+16),
	}
	last := fmt.Sprintf("write %#x", addr(&x[1]))
	if len(got) != 5 || got[0] != first[0] || got[4] != last {
		t.Fatalf("events %q, want %q, the three allocations %q, then %q", got, first, allocs, last)
	}
	mid := slices.Clone(got[1:4])
	slices.Sort(mid)
	want := slices.Clone(allocs)
	slices.Sort(want)
	if !slices.Equal(mid, want) {
		t.Fatalf("allocations %q, want %q", mid, want)
	}
}

var allocHookSink []*[4]uint64

// An allocation of a goroutine rt has no state for is written before the
// next access of any traced goroutine, not only at its next
// synchronization: the object may have been handed to it unseen (an
// HTTP/2 client's read loop decodes a response's header that the caller
// of Do reads; held-out module connectrpc.com/connect).
func TestAllocHookUntracedHandoff(t *testing.T) {
	x, untraced := new([4]uint64), new([2]uint64)
	allocHookSink = []*[4]uint64{x}
	markAll(x[:], untraced[:])
	tr := record(t, false, func(site uint32) {
		W1(&x[0], site, true) // open, many plain events before the next slow path
		done := make(chan struct{})
		go func() {
			onMalloc(unsafe.Pointer(&untraced[0]), 16)
			close(done)
		}()
		<-done // unseen by rt
		W1(&untraced[0], site, true)
	})
	var got []string
	for i := range tr.Events {
		e := &tr.Events[i]
		switch e.Op {
		case trace.OpWrite:
			got = append(got, fmt.Sprintf("write %#x", e.Obj))
		case trace.OpAlloc:
			lo, hi, _ := e.AllocRange()
			got = append(got, fmt.Sprintf("alloc %#x-%#x", lo, hi))
		}
	}
	a := uint64(uintptr(unsafe.Pointer(&untraced[0])))
	want := []string{
		fmt.Sprintf("write %#x", uint64(uintptr(unsafe.Pointer(&x[0])))),
		fmt.Sprintf("alloc %#x-%#x", a, a+16),
		fmt.Sprintf("write %#x", a),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// markAll marks the granules of the words of each slice touched.
func markAll(ws ...[]uint64) {
	for _, w := range ws {
		for i := range w {
			markTouched(uint64(uintptr(unsafe.Pointer(&w[i]))))
		}
	}
}

// An allocation on memory no event ever named writes no event
// (touched.go); one that overlaps a named granule does, whole.
func TestAllocHookUntouched(t *testing.T) {
	if touchedHi == touchedLo {
		t.Skip("no window on a 32-bit platform")
	}
	free := touchedHi - 1<<leafShift // no heap of the test up there
	markTouched(free + 48)
	tr := record(t, false, func(site uint32) {
		noteAlloc(free, 48)    // granules 0-2: untouched
		noteAlloc(free+64, 32) // granules 4-5: untouched
		noteAlloc(free+40, 16) // granules 2-3: 3 named
		x := new([4]uint64)
		allocHookSink = []*[4]uint64{x} // on the heap: rt drops stack addresses
		W1(&x[0], site, true)           // an event, to write what was noted
	})
	if got, want := allocRanges(tr), [][2]uint64{{free + 40, free + 56}}; !slices.Equal(got, want) {
		t.Fatalf("allocations %#x, want %#x", got, want)
	}
}

// An alloc event clears the bits of the granules it covers whole: the
// next allocation there writes no event unless an event named the memory
// in between.
func TestAllocHookClears(t *testing.T) {
	if touchedHi == touchedLo {
		t.Skip("no window on a 32-bit platform")
	}
	x := new([4]uint64)
	allocHookSink = []*[4]uint64{x}
	free := touchedHi - 2<<leafShift // no heap of the test up there
	markTouched(free)
	markTouched(free + 64)
	tr := record(t, false, func(site uint32) {
		noteAlloc(free, 32) // written: granule 0 was named
		W1(&x[0], site, true)
		noteAlloc(free, 32) // nothing named it since: no event
		W1(&x[1], site, true)
		noteAlloc(free+64, 8) // written, and the granule, shared, keeps its bit
		W1(&x[2], site, true)
		noteAlloc(free+72, 8) // written again
		W1(&x[3], site, true)
	})
	want := [][2]uint64{{free, free + 32}, {free + 64, free + 72}, {free + 72, free + 80}}
	if got := allocRanges(tr); !slices.Equal(got, want) {
		t.Fatalf("allocations %#x, want %#x", got, want)
	}
}

// An allocation of a goroutine whose gtab slot another goroutine holds is
// noted in its own state, not in the shards of goroutines without one
// (slotTaken): a range there is written by whichever goroutine takes the
// shards next, maybe after this goroutine's accesses to the new object.
func TestAllocHookSlotTaken(t *testing.T) {
	if touchedHi == touchedLo {
		t.Skip("no window on a 32-bit platform")
	}
	free := touchedHi - 3<<leafShift // no heap of the test up there
	markTouched(free)
	x := new([4]uint64)
	allocHookSink = []*[4]uint64{x} // on the heap: rt drops stack addresses
	var inShards bool
	tr := record(t, false, func(site uint32) {
		g := cur()
		slot := &gtab[g.goid&(gtabSize-1)]
		slot.Store(&gstate{goid: g.goid + gtabSize, traceNo: g.traceNo}) // another goroutine's
		noteAlloc(free, 32)
		inShards = untracedMask.Load() != 0
		slot.Store(g)
		W1(&x[0], site, true) // writes what was noted
	})
	if inShards {
		t.Errorf("the allocation went to the shards of goroutines without a state")
	}
	if got, want := allocRanges(tr), [][2]uint64{{free, free + 32}}; !slices.Equal(got, want) {
		t.Fatalf("allocations %#x, want %#x", got, want)
	}
}

// BenchmarkAllocHook is an access after each allocation the runtime's hook
// reports (mallochook.go: noted, then written by the access's slow path),
// against the same accesses with no allocation between (baseline), and
// an allocation of a goroutine rt has no state for (a shard's lock).
func BenchmarkAllocHook(b *testing.B) {
	buf := make([]uint64, 1<<16)
	for _, mode := range []string{"baseline", "traced", "untraced"} {
		b.Run(mode, func(b *testing.B) {
			benchStart(b, true)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p := unsafe.Pointer(&buf[(i*3)&(1<<16-1)])
				switch mode {
				case "traced":
					onMalloc(p, 16)
				case "untraced":
					sh := &untracedShards[0]
					sh.mu.Lock()
					sh.rs = pushAlloc(sh.rs, allocRange{uint64(uintptr(p)), uint64(uintptr(p)) + 16})
					untracedMask.Or(1)
					sh.mu.Unlock()
				}
				W(&buf[i&(1<<16-1)], 0, true)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "accesses/s")
		})
	}
}

// CallerBuf, which a traced Read or Write method calls first, allocates
// nothing: it runs inside the program's testing.AllocsPerRun (fasthttp's
// TestFixedSizeBodyStreamWriteAllocations counted one per call).
func TestCallerBufAllocs(t *testing.T) {
	if err := start(filepath.Join(t.TempDir(), "t.rkt"), true); err != nil {
		t.Fatal(err)
	}
	defer Finish()
	buf := make([]byte, 64)
	if n := testing.AllocsPerRun(100, func() { CallerBuf(buf, 1) }); n != 0 {
		t.Errorf("CallerBuf: %v allocations per call, want 0", n)
	}
}

// A range event repeats one of the epoch only with the same address and
// span, a read after a read or write of it; an allocation inside it, or a
// new epoch, makes it new again.
func TestRangeRepeat(t *testing.T) {
	g := &gstate{}
	sp, _ := trace.MakeSpan(8, 10)
	other, _ := trace.MakeSpan(8, 11)
	third, _ := trace.MakeSpan(8, 12)
	set := func(a uint64) uint64 { return a * 0x9E3779B97F4A7C15 >> 61 }
	sameSet := uint64(0x2000)
	for set(sameSet) != set(0x1008) {
		sameSet += 8
	}
	steps := []struct {
		what  string
		do    func()
		a     uint64
		span  trace.Span
		write bool
		want  bool
	}{
		{"first read", nil, 0x1000, sp, false, false},
		{"read again", nil, 0x1000, sp, false, true},
		{"a write after the read", nil, 0x1000, sp, true, false},
		{"a read after the write", nil, 0x1000, sp, false, true},
		{"another span", nil, 0x1000, other, false, false},
		{"back to the first: still in its set's second way", nil, 0x1000, sp, false, true},
		{"a third span", nil, 0x1000, third, false, false},
		{"back to the first: two since took its set", nil, 0x1000, sp, false, false},
		{"after an allocation inside it", func() { g.forgetRanges(0x1048, 8) }, 0x1000, sp, false, false},
		{"an allocation past its end", func() { g.forgetRanges(0x1050, 8) }, 0x1000, sp, false, true},
		{"in a new epoch", func() { g.epoch++ }, 0x1000, sp, false, false},
		// A copy's destination and source in one set: both stay.
		{"a copy's destination", func() { g.epoch++ }, 0x1008, sp, true, false},
		{"its source, in the same set", nil, sameSet, sp, false, false},
		{"the copy again: its destination", nil, 0x1008, sp, true, true},
		{"the copy again: its source", nil, sameSet, sp, false, true},
	}
	for _, s := range steps {
		if s.do != nil {
			s.do()
		}
		if got := g.rangeRepeat(s.a, s.span, s.write); got != s.want {
			t.Fatalf("%s: repeat %v, want %v", s.what, got, s.want)
		}
	}
}

// BytesFirst, BytesFirstW and BytesLast record the bytes a call at the
// start or the end of a buffer may touch, not the buffer's whole length
// (binary.Uvarint(q.array[i:]) on a megabyte queue); ElemsUpTo those an
// index function read up to its match (ElemsUpTo).
func TestBytesBounded(t *testing.T) {
	buf := escape[[1 << 12]byte]()[:]
	short := escape[[3]byte]()[:]
	none := escape[[24]byte]()[:] // an index function found nothing in it
	nums := escape[[8]uint64]()[:]
	addr := func(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }
	tr := record(t, false, func(site uint32) {
		BytesFirst(buf[8:], 10, site, true)
		BytesFirstW(buf[1024:], 4, site, true)
		BytesLast(buf[:2048], 4, site, true)
		BytesFirst(short, 10, site, true)
		if ElemsUpTo(5, buf[3000:], 2, site, true) != 5 || ElemsUpTo(-1, none, 1, site, true) != -1 || ElemsUpTo(1, nums, 1, site, true) != 1 {
			t.Error("ElemsUpTo does not return the index")
		}
	})
	type span struct{ lo, hi uint64 } // the words [lo, hi) an access may name
	words := func(lo, n uint64) span { return span{lo &^ 7, (lo + n + 7) &^ 7} }
	want := []struct {
		op trace.Op
		s  span
	}{
		{trace.OpRead, words(addr(buf[8:]), 10)},
		{trace.OpWrite, words(addr(buf[1024:]), 4)},
		{trace.OpRead, words(addr(buf[2044:]), 4)},
		{trace.OpRead, words(addr(short), 3)},
		{trace.OpRead, words(addr(buf[3000:]), 7)},
		{trace.OpRead, words(addr(none), 24)},
		{trace.OpRead, words(uint64(uintptr(unsafe.Pointer(&nums[0]))), 16)},
	}
	seen := make([]int, len(want))
	for _, e := range tr.Events {
		if !e.Op.IsAccess() {
			continue
		}
		i := slices.IndexFunc(want, func(w struct {
			op trace.Op
			s  span
		}) bool {
			return w.op == e.Op && e.Obj >= w.s.lo && e.Obj < w.s.hi
		})
		if i < 0 {
			t.Errorf("%v of %#x: outside the bytes the calls touch", e.Op, e.Obj)
			continue
		}
		seen[i]++
	}
	for i, n := range seen {
		if n == 0 {
			t.Errorf("access %d (%v of %#x-%#x) not recorded", i, want[i].op, want[i].s.lo, want[i].s.hi)
		}
	}
}

// LoopRangeW and LoopRangeR record a fill loop's elements [lo, hi), cut
// at the slice's length (where the loop panics), nothing when lo < 0 or
// lo >= hi, and return lo.
func TestLoopRange(t *testing.T) {
	s := escape[[16]uint32]()[:10]
	addr := func(i int) uint64 { return uint64(uintptr(unsafe.Pointer(&s[0]))) + uint64(i)*4 }
	var firsts []int
	tr := record(t, false, func(site uint32) {
		firsts = append(firsts,
			LoopRangeW(s, 2, 5, site, true),   // s[2:5]
			LoopRangeR(s, 8, 100, site, true), // s[8:10]
			LoopRangeW(s, -1, 3, site, true),  // nothing: s[-1] panics first
			LoopRangeW(s, 6, 6, site, true))   // nothing: no iteration
	})
	if !slices.Equal(firsts, []int{2, 8, -1, 6}) {
		t.Errorf("returned %v, want each lo", firsts)
	}
	var got []string
	for _, e := range tr.Events {
		if !e.Op.IsAccess() {
			continue
		}
		lo, hi := addr(0), addr(16)
		if e.Obj < lo || e.Obj >= hi {
			t.Errorf("%v of %#x: outside s", e.Op, e.Obj)
			continue
		}
		got = append(got, fmt.Sprintf("%v %d", e.Op, (e.Obj-lo)/4))
	}
	// Range events are read back one per element.
	want := []string{"w 2", "w 3", "w 4", "r 8", "r 9"}
	if !slices.Equal(got, want) {
		t.Errorf("accesses %q, want %q", got, want)
	}
}

// LoopStepW, LoopStepR and the row hooks record the elements j+off of a
// loop j := lo; j < hi; j += step: every step-th element (a sparse range
// for 8-byte elements, an access each for others and for a few), cut at
// the slice's length, nothing when the first index is negative or the loop
// does not run; a row hook also records the read of the row itself.
func TestLoopStep(t *testing.T) {
	s := escape[[32]uint64]()[:]
	s4 := escape[[8]uint32]()[:]
	rows := escape[[2][]uint64]()[:]
	rows[1] = escape[[16]uint64]()[:]
	type region struct {
		name string
		lo   uint64
		size uintptr
		elem uint64
	}
	regions := []region{
		{"s", uint64(uintptr(unsafe.Pointer(&s[0]))), 32 * 8, 8},
		{"s4", uint64(uintptr(unsafe.Pointer(&s4[0]))), 8 * 4, 4},
		{"rows", uint64(uintptr(unsafe.Pointer(&rows[0]))), unsafe.Sizeof(rows[0]) * 2, uint64(unsafe.Sizeof(rows[0]))},
		{"row1", uint64(uintptr(unsafe.Pointer(&rows[1][0]))), 16 * 8, 8},
	}
	var firsts []int
	tr := record(t, false, func(site uint32) {
		firsts = append(firsts,
			LoopStepW(s, 1, 12, 2, 0, site, true),            // s[1], s[3], ... s[11]: sparse
			LoopStepR(s, 1, 100, 2, 1, site, true),           // s[2], s[4], ... s[30]: cut at len(s)
			LoopStepR(s, 0, 5, 3, 0, site, true),             // s[0], s[3]: two, one event each
			LoopStepW(s, 1, 9, 2, -2, site, true),            // nothing: s[-1] panics first
			LoopStepW(s4, 0, 8, 2, 1, site, true),            // s4[1], s4[3], s4[5], s4[7]: 4-byte elements
			LoopRowR(rows, 1, 0, 10, 2, 1, site, site, true), // rows[1], then rows[1][1], [3], ... [9]
			LoopRowW(rows, 5, 0, 10, 2, 0, site, site, true), // nothing: rows[5] panics first
			LoopRowW(rows, 0, 3, 3, 1, 0, site, site, true))  // nothing: no iteration
	})
	if !slices.Equal(firsts, []int{1, 1, 0, 1, 0, 0, 0, 3}) {
		t.Errorf("returned %v, want each lo", firsts)
	}
	var got []string
	for _, e := range tr.Events {
		if !e.Op.IsAccess() {
			continue
		}
		name := ""
		for _, r := range regions {
			if e.Obj >= r.lo && e.Obj < r.lo+uint64(r.size) {
				name = fmt.Sprintf("%s %d", r.name, (e.Obj-r.lo)/r.elem)
				break
			}
		}
		if name == "" {
			t.Errorf("%v of %#x: outside the slices", e.Op, e.Obj)
			continue
		}
		if len(got) == 0 || !strings.HasSuffix(got[len(got)-1], " "+name) || !strings.HasPrefix(got[len(got)-1], e.Op.String()+" ") {
			got = append(got, e.Op.String()+" "+name)
		}
	}
	want := []string{
		"w s 1", "w s 3", "w s 5", "w s 7", "w s 9", "w s 11",
		"r s 2", "r s 4", "r s 6", "r s 8", "r s 10", "r s 12", "r s 14", "r s 16", "r s 18", "r s 20", "r s 22", "r s 24", "r s 26", "r s 28", "r s 30",
		"r s 0", "r s 3",
		"w s4 1", "w s4 3", "w s4 5", "w s4 7",
		"r rows 1", "r row1 1", "r row1 3", "r row1 5", "r row1 7", "r row1 9",
	}
	if !slices.Equal(got, want) {
		t.Errorf("accesses\n%q\nwant\n%q", got, want)
	}
}

// LoopColR records a column of a slice of slices, rows[j+off][col] for a
// loop's j: each row's first word (a slice is read whole) and its element,
// cut where the loop panics: at the first row too short for col, whose
// read it records.
func TestLoopCol(t *testing.T) {
	rows := escape[[8][]uint64]()[:]
	for i := range rows {
		rows[i] = escape[[4]uint64]()[:]
	}
	rows[6] = rows[6][:2]
	name := func(a uint64) string {
		if lo := uint64(uintptr(unsafe.Pointer(&rows[0]))); a >= lo && a < lo+8*uint64(unsafe.Sizeof(rows[0])) {
			if off := (a - lo) % uint64(unsafe.Sizeof(rows[0])); off != 0 {
				return fmt.Sprintf("row header %d word %d", (a-lo)/uint64(unsafe.Sizeof(rows[0])), off/8)
			}
			return fmt.Sprintf("rows %d", (a-lo)/uint64(unsafe.Sizeof(rows[0])))
		}
		for i, r := range rows {
			if lo := uint64(uintptr(unsafe.Pointer(&r[0]))); a >= lo && a < lo+32 {
				return fmt.Sprintf("row%d %d", i, (a-lo)/8)
			}
		}
		return fmt.Sprintf("%#x", a)
	}
	var firsts []int
	tr := record(t, false, func(site uint32) {
		firsts = append(firsts,
			LoopColR(rows, 2, 0, 6, 1, 0, site, site, true),   // rows[0..5][2]: six rows, sparse
			LoopColW(rows, 3, 1, 6, 2, 0, site, site, true),   // rows[1][3], rows[3][3], rows[5][3]
			LoopColR(rows, 2, 4, 100, 1, 1, site, site, true), // rows[5][2], then rows[6] is too short: read, then a panic
			LoopColR(rows, 0, -1, 3, 1, 0, site, site, true))  // nothing: rows[-1] panics first
	})
	if !slices.Equal(firsts, []int{0, 1, 4, -1}) {
		t.Errorf("returned %v, want each lo", firsts)
	}
	var got []string
	for _, e := range tr.Events {
		if e.Op.IsAccess() {
			got = append(got, e.Op.String()+" "+name(e.Obj))
		}
	}
	want := []string{
		"r rows 0", "r rows 1", "r rows 2", "r rows 3", "r rows 4", "r rows 5",
		"r row0 2", "r row1 2", "r row2 2", "r row3 2", "r row4 2", "r row5 2",
		"r rows 1", "r rows 3", "r rows 5", "w row1 3", "w row3 3", "w row5 3",
		"r rows 5", "r rows 6", "r row5 2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("accesses\n%q\nwant\n%q", got, want)
	}
}

// BenchmarkAtomicAdd is an atomic.AddInt64 with its record (one event
// standing for four: trace.FlagGoAtomic), beside the bare operation.
func BenchmarkAtomicAdd(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		var x int64
		for i := 0; i < b.N; i++ {
			atomic.AddInt64(&x, 1)
		}
	})
	b.Run("recorded", func(b *testing.B) {
		benchStart(b, true)
		words := make([]int64, 1<<12)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			AtomicAddInt64(&words[i&(1<<12-1)], 1, 0)
		}
		b.ReportMetric(float64(4*b.N)/b.Elapsed().Seconds(), "events/s")
	})
}

// The writer makes one range event of a goroutine's word accesses one
// after another at one site whose addresses step by one stride (wordRun;
// a sparse span over 8 bytes): the reader hands out exactly the words recorded with
// word events (RACEKIT_RANGES=0), in their order, and the file holds one
// event per run. Runs stop at another site, another op, another stride, a
// synchronization, and are not made of fewer than minWordRun words.
func TestWordRuns(t *testing.T) {
	words := escape[[100]uint64]()[:]
	bytes := escape[[64]byte]()[:]
	wide := escape[[40]struct{ a, b uint64 }]()[:]
	var mu sync.Mutex
	body := func(site uint32) {
		for i := range words {
			W(&words[i], site, true) // one run
		}
		for i := range bytes {
			_ = *R(&bytes[i], site, true) // one run, stride 1
		}
		for i := range 3 {
			_ = *R(&words[i], site+1, true) // too short
		}
		for i := range wide {
			W(&wide[i].a, site, true) // stride 16: one run, a sparse span
		}
		for i := range 20 {
			W(&words[i], site+1, true) // a run of 10, a lock, a run of 10
			if i == 9 {
				mu.Lock()
				mu.Unlock()
			}
		}
		for i := range 12 {
			W(&words[50+i], site+uint32(i%2), true) // sites alternate: no run
		}
	}
	type word struct {
		op   trace.Op
		site trace.SiteID
		obj  uint64
	}
	run := func(wordEvts bool) ([]word, int) {
		old := wordEvents
		wordEvents = wordEvts
		defer func() { wordEvents = old }()
		path := filepath.Join(t.TempDir(), "t.rkt")
		if err := start(path, false); err != nil {
			t.Fatal(err)
		}
		body(RegisterFile("x.go", []string{"p.f"}, []uint32{10, 2, 0, 11, 3, 0}))
		Finish()
		read := func(keep bool) []trace.Event {
			file, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer file.Close()
			r := rkt.NewReader(file, path)
			if keep {
				r.KeepRanges() // trace.ReadAll would expand them
			}
			var evs []trace.Event
			for {
				var e trace.Event
				if err := r.Next(&e); err == io.EOF {
					return evs
				} else if err != nil {
					t.Fatal(err)
				}
				evs = append(evs, e)
			}
		}
		var got []word
		for _, e := range read(false) {
			if e.Op.IsAccess() {
				got = append(got, word{e.Op, e.Site, e.Obj})
			}
		}
		ranges := 0
		for _, e := range read(true) {
			if e.Op.IsRange() {
				ranges++
			}
		}
		return got, ranges
	}
	want, wantRanges := run(true)
	got, ranges := run(false)
	if len(want) != 100+64+3+40+20+12 || wantRanges != 0 {
		t.Fatalf("word events: %d accesses and %d range events", len(want), wantRanges)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the words of the word runs differ from the word events:\n got %v\nwant %v", got, want)
	}
	if ranges != 5 {
		t.Errorf("%d range events, want 5 (the 100 words, the 64 bytes, a field of the 40 structs, the two runs around the lock)", ranges)
	}
}

// bytesOrString is a source append and copy take as a byte slice or a
// string (go-json-experiment's jsontext.AppendFormat).
type bytesOrString interface{ ~[]byte | ~string }

func appendFrom[T bytesOrString](dst []byte, src T, site uint32) []byte {
	return AppendBytesOrString(dst, src, site, true)
}

func copyFrom[T bytesOrString](dst []byte, src T, site uint32) int {
	return CopyBytesOrString(dst, src, site, true)
}

// AppendBytesOrString and CopyBytesOrString read the source's bytes when it
// is a byte slice, nothing of a string's, and write what they store, as
// AppendSlice, AppendString, Copy and CopyString do.
func TestBytesOrString(t *testing.T) {
	type named []byte
	src := escape[[8]byte]()
	dst := make([]byte, 0, 64)
	escapeSink = dst
	var out []byte
	var n int
	tr := record(t, false, func(site uint32) {
		out = appendFrom(dst, named(src[:]), site)
		out = appendFrom(out, "text", site)
		n = copyFrom(out, named(src[:4]), site)
		n += copyFrom(out[4:], "te", site)
	})
	if string(out) != "\x00\x00\x00\x00te\x00\x00text" || n != 6 {
		t.Fatalf("append and copy gave %q, %d", out, n)
	}
	// Each access as its op and the byte it touches: s0.. of the source,
	// d0.. of the destination's array (the trace hands out a byte range
	// a byte at a time).
	s0, d0 := uint64(uintptr(unsafe.Pointer(src))), uint64(uintptr(unsafe.Pointer(unsafe.SliceData(dst))))
	var got []string
	for _, e := range tr.Events {
		switch {
		case !e.Op.IsAccess():
		case e.Obj-s0 < 8:
			got = append(got, fmt.Sprintf("%v s%d", e.Op, e.Obj-s0))
		case e.Obj-d0 < 64:
			got = append(got, fmt.Sprintf("%v d%d", e.Op, e.Obj-d0))
		default:
			got = append(got, fmt.Sprintf("%v elsewhere", e.Op))
		}
	}
	var want []string
	add := func(op string, base string, lo, hi int) {
		for i := lo; i < hi; i++ {
			want = append(want, fmt.Sprintf("%s %s%d", op, base, i))
		}
	}
	add("r", "s", 0, 8) // append(dst, named(src)...)
	add("w", "d", 0, 8)
	add("w", "d", 8, 12) // append(out, "text"...): no read
	add("r", "s", 0, 4)  // copy(out, named(src[:4])), as Copy records it without dedup
	add("w", "d", 0, 4)
	add("w", "d", 4, 6) // copy(out[4:], "te")
	if !slices.Equal(got, want) {
		t.Errorf("accesses %q, want %q", got, want)
	}
}

// A goroutine that sheds its buffer before a long wait (Shed: a paused
// parallel test) holds a small chunk meanwhile, not the big one it grew
// to; the writer frees the big one, and every event is still written, in
// order.
func TestShed(t *testing.T) {
	const gors, writes = 200, 3000
	data := make([]uint64, gors*writes)
	escapeSink = data
	var held int64
	tr := record(t, false, func(site uint32) {
		var wg sync.WaitGroup
		release := make(chan struct{})
		for i := range gors {
			c := Fork(site)
			wg.Add(1)
			go func() {
				Begin(c)
				defer End(c)
				for j := range writes {
					W(&data[i*writes+j], site, true)
				}
				SyncRelease(NewObject(), site) // committed
				Shed()
				wg.Done()
				<-release
			}()
		}
		wg.Wait()
		Flush()
		held = pending.Load()
		close(release)
	})
	if held > gors*512 {
		t.Errorf("%d records held by %d goroutines waiting after Shed, want at most %d", held, gors, gors*512)
	}
	n := 0
	for _, e := range tr.Events {
		if e.Op == trace.OpWrite {
			n++
		}
	}
	if n != gors*writes {
		t.Errorf("%d writes in the trace, want %d", n, gors*writes)
	}
}

// The bytes of one word read in turn, again and again in one epoch (a
// byte loop, a rolling hash over a window), are each recorded once: the
// word's table entry holds a bit per byte address, so one byte's read
// does not push out its neighbour's. A write of a byte read before is
// recorded, and a read of it after is not.
func TestDedupBytesOfAWord(t *testing.T) {
	b := escape[[16]byte]()
	tr := record(t, true, func(site uint32) {
		for range 4 {
			for i := range b {
				R(&b[i], site, true)
			}
		}
		W(&b[3], site, true)
		R(&b[3], site, true) // covered by the write
		R(&b[4], site, true) // read before
	})
	var reads, writes int
	for _, e := range tr.Events {
		switch e.Op {
		case trace.OpRead:
			reads++
		case trace.OpWrite:
			writes++
		}
	}
	if reads != 16 || writes != 1 {
		t.Errorf("%d reads and %d writes of 16 bytes read 4 times then one written, want 16 and 1", reads, writes)
	}
}

// arrayKey's slots spread arrays that differ from one another, and from
// their object, only above the low 14 bits (one offset in spans of
// different size classes): with the array's address XORed in unmixed,
// all 256 took one slot of internalArrays.
func TestArrayKeySpreads(t *testing.T) {
	buf := make([]byte, 257<<14) // the addresses: never read
	owner := unsafe.Pointer(&buf[0x340])
	slots := map[uint64]bool{}
	for k := 1; k <= 256; k++ {
		data := unsafe.Pointer(&buf[0x340+k<<14])
		slots[arrayKey(owner, data)&(uint64(len(internalArrays))-1)] = true
	}
	if len(slots) < 240 {
		t.Errorf("256 arrays of one object in %d slots of internalArrays, want at least 240", len(slots))
	}
}

// The patched runtime adds to generationWord at the first allocation after
// each GC cycle; rt sees it as a new generation, and an access repeated
// after it in the same epoch is recorded again.
func TestGenerationWord(t *testing.T) {
	before := generation.Load()
	atomic.AddUint32(generationWord(), 1)
	if got := generation.Load(); got != before+1 {
		t.Fatalf("generation %d after the runtime's add, want %d", got, before+1)
	}
	x := escape[uint64]()
	tr := record(t, true, func(site uint32) {
		W(x, site, true)
		W(x, site, true) // a repeat: dropped
		atomic.AddUint32(generationWord(), 1)
		W(x, site, true) // after a GC cycle: recorded
	})
	if got := ops(tr, func(e *trace.Event) bool { return e.Op == trace.OpWrite }); len(got) != 2 {
		t.Errorf("writes %q, want 2: the one after the cycle recorded again", got)
	}
}
