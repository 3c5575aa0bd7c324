package alloc

import (
	"math/rand/v2"
	"testing"

	"github.com/racekit/racekit/trace"
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
