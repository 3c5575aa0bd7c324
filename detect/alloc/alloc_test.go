package alloc

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

func allocEv(seq, addr, size uint64, site trace.SiteID) *trace.Event {
	return &trace.Event{Seq: seq, Op: trace.OpAlloc, Obj: addr, Value: size, Site: site, G: 1}
}

// Each query gets the last allocation before its access that holds its
// address: not a later one (the memory reused after the access), not one
// that ends before the address, none for an address never allocated.
func TestFinder(t *testing.T) {
	f := New([]Query{
		{Addr: 0x1010, Before: 10}, // inside the block at 0x1000 of seq 5
		{Addr: 0x2000, Before: 3},  // allocated at seq 2, again at seq 6 (after)
		{Addr: 0x3000, Before: 10}, // never allocated
		{Addr: 0x1040, Before: 10}, // just past the 64 bytes at 0x1000
		{Addr: 0x1000, Before: 5},  // the allocation at seq 5 is not before it
	})
	for _, e := range []*trace.Event{
		allocEv(1, 0x1000, 64, 7),
		allocEv(2, 0x2000, 8, 8),
		allocEv(5, 0x1000, 64, 9),
		allocEv(6, 0x2000, 8, 10),
		{Seq: 7, Op: trace.OpWrite, Obj: 0x3000},
	} {
		f.Handle(e)
	}
	want := []struct {
		ok   bool
		seq  uint64
		site trace.SiteID
	}{{true, 5, 9}, {true, 2, 8}, {false, 0, 0}, {false, 0, 0}, {true, 1, 7}}
	for i, w := range want {
		b, ok := f.Block(i)
		if ok != w.ok || ok && (b.Seq != w.seq || b.Site != w.site) {
			t.Errorf("query %d: %+v %v, want seq %d site %d ok %v", i, b, ok, w.seq, w.site, w.ok)
		}
	}
	if b, _ := f.Block(0); b.Addr != 0x1000 || b.Size != 64 {
		t.Errorf("block %+v, want 64 bytes at 0x1000", b)
	}
}

// Differential: the Finder against a scan of every allocation, on random
// traces of overlapping blocks and queries.
func TestFinderBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 200; iter++ {
		var evs []*trace.Event
		for i := 0; i < 1+rng.IntN(30); i++ {
			evs = append(evs, allocEv(uint64(i+1), 0x100+8*uint64(rng.IntN(40)), 8*uint64(1+rng.IntN(8)), trace.SiteID(i+1)))
		}
		var qs []Query
		for i := 0; i < 1+rng.IntN(10); i++ {
			qs = append(qs, Query{Addr: 0x100 + uint64(rng.IntN(400)), Before: uint64(rng.IntN(len(evs) + 2))})
		}
		f := New(qs)
		for _, e := range evs {
			f.Handle(e)
		}
		for i, q := range qs {
			var want *trace.Event
			for _, e := range evs {
				if e.Seq < q.Before && e.Obj <= q.Addr && q.Addr < e.Obj+e.Value {
					want = e
				}
			}
			b, ok := f.Block(i)
			if ok != (want != nil) || ok && (b.Seq != want.Seq || b.Addr != want.Obj || b.Size != want.Value) {
				t.Fatalf("iter %d query %+v: got %+v %v, want %+v", iter, q, b, ok, want)
			}
		}
	}
}

// writeTrace writes b's trace to a file and returns its path.
func writeTrace(t testing.TB, b *trace.Builder) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.rkt")
	if err := tracefile.Save(path, b.Trace()); err != nil {
		t.Fatal(err)
	}
	return path
}

// Differential: on random traces of allocations among accesses and
// ranges, written to a file, the Log kept over a first pass (complete,
// and past LogMax, where Locate reads the file again) and the second pass
// that stops past the latest access asked about answer each query as a
// Finder handed every event does.
func TestLocateAgainstFinder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	defer func(n int) { LogMax = n }(LogMax)
	for iter := 0; iter < 100; iter++ {
		b := trace.NewBuilder()
		b.Begin("M")
		g := b.G("M")
		for i := 0; i < 1+rng.IntN(60); i++ {
			addr := 0x1000 + 8*uint64(rng.IntN(64))
			switch rng.IntN(4) {
			case 0, 1:
				b.Add(trace.Event{G: g, Op: trace.OpAlloc, Obj: addr, Value: 8 * uint64(1+rng.IntN(8)), Site: b.Site("new.go:1")})
			case 2:
				b.Add(trace.Event{G: g, Op: trace.OpWrite, Obj: addr, Site: b.Site("w.go:2"), Flags: trace.FlagValueUnknown})
			case 3:
				sp, _ := trace.MakeSpan(1, uint64(1+rng.IntN(40)))
				b.Add(trace.Event{G: g, Op: trace.OpReadRange, Obj: addr + uint64(rng.IntN(8)), Value: uint64(sp), Site: b.Site("r.go:3")})
			}
		}
		n := uint64(len(b.Trace().Events))
		var qs []Query
		for i := 0; i < 1+rng.IntN(6); i++ {
			qs = append(qs, Query{Addr: 0x1000 + uint64(rng.IntN(600)), Before: uint64(rng.IntN(int(n) + 2))})
		}
		ref := New(qs)
		for _, e := range b.Trace().Events {
			ref.Handle(&e)
		}
		path := writeTrace(t, b)
		check := func(how string, got []Block, ok []bool, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("iter %d %s: %v", iter, how, err)
			}
			for i := range qs {
				if want, wok := ref.Block(i); ok[i] != wok || got[i] != want {
					t.Fatalf("iter %d %s query %+v: %+v %v, want %+v %v", iter, how, qs[i], got[i], ok[i], want, wok)
				}
			}
		}
		got, ok, err := Blocks(path, qs)
		check("second pass", got, ok, err)
		for _, max := range []int{1 << 20, rng.IntN(4)} {
			LogMax = max
			f, err := tracefile.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			log := &Log{}
			if _, err := detect.Run(f, log); err != nil {
				t.Fatal(err)
			}
			f.Close()
			allocs := 0
			for _, e := range b.Trace().Events {
				if _, _, isAlloc := e.AllocRange(); isAlloc {
					allocs++
				}
			}
			if log.Complete() != (allocs <= max) {
				t.Fatalf("iter %d: %d allocations, LogMax %d: complete %v", iter, allocs, max, log.Complete())
			}
			got, ok, err := Locate(path, log, qs)
			check(fmt.Sprintf("log of at most %d", max), got, ok, err)
		}
	}
}

// The log answers without the trace: a path that does not exist is not
// read when the log is complete, and is when it is not.
func TestLocateFromLogOnly(t *testing.T) {
	log := &Log{}
	log.Handle(allocEv(1, 0x1000, 64, 7))
	got, ok, err := Locate("/nonexistent/x.rkt", log, []Query{{Addr: 0x1008, Before: 2}})
	if err != nil || !ok[0] || got[0].Site != 7 {
		t.Fatalf("complete log: %+v %v %v", got, ok, err)
	}
	if _, _, err := Locate("/nonexistent/x.rkt", nil, []Query{{Addr: 0x1008, Before: 2}}); err == nil {
		t.Fatal("no log: the trace was not read")
	}
}

// The second pass stops once it is past the latest access asked about:
// on a trace of 3 * detect.ProgressEvery accesses, a query about the
// first few events reads about one stretch of ProgressEvery, and finds
// its allocation; the allocation of the same address after it is not
// taken.
func TestBlocksStopsEarly(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	g := b.G("M")
	b.Add(trace.Event{G: g, Op: trace.OpAlloc, Obj: 0x1000, Value: 64, Site: b.Site("early.go:1")})
	for i := 0; i < 3*detect.ProgressEvery; i++ {
		b.Add(trace.Event{G: g, Op: trace.OpWrite, Obj: 0x1000, Site: b.Site("w.go:2"), Flags: trace.FlagValueUnknown})
	}
	late := b.Site("late.go:3")
	b.Add(trace.Event{G: g, Op: trace.OpAlloc, Obj: 0x1000, Value: 64, Site: late})
	path := writeTrace(t, b)
	got, ok, n, err := blocks(path, []Query{{Addr: 0x1010, Before: 5}})
	if err != nil || !ok[0] || got[0].Seq != 1 {
		t.Fatalf("%+v %v %v", got, ok, err)
	}
	if n > 2*detect.ProgressEvery {
		t.Errorf("read %d events of %d", n, 3*detect.ProgressEvery+3)
	}
	got, ok, n, err = blocks(path, []Query{{Addr: 0x1010, Before: 1 << 40}})
	if err != nil || !ok[0] || got[0].Site != late || n != int64(3*detect.ProgressEvery+3) {
		t.Fatalf("a query past the end: %+v %v %d %v", got, ok, n, err)
	}
}

// The log keeps a trace's allocations while they are few: past logWarm,
// one per logDensity events at most (an allocation-heavy trace is read
// again instead, cheaply); under that it keeps every one.
func TestLogDensity(t *testing.T) {
	dense, sparse := &Log{}, &Log{}
	for i := uint64(0); i < 2*logWarm; i++ {
		dense.Handle(allocEv(8*i, 0x1000+64*i, 64, 1))
		sparse.Handle(allocEv(logDensity*i, 0x1000+64*i, 64, 1))
	}
	if dense.Complete() {
		t.Errorf("an allocation every 8 events, %d of them: the log kept them all", 2*logWarm)
	}
	if !sparse.Complete() || len(sparse.blocks) != 2*logWarm {
		t.Errorf("an allocation every %d events: the log kept %d of %d (complete %v)", logDensity, len(sparse.blocks), 2*logWarm, sparse.Complete())
	}
}
