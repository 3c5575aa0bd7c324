package vc

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/racekit/racekit/trace"
)

// TestSharedAgainstFlat runs random operations on goroutine clocks (flat,
// each with its Image) and object clocks (Shared), and the same on plain
// VectorClocks, the reference: after each, every clock must read the same.
// Widths cross several chunks; values stay small so that chunks are often
// equal, ordered or not (every branch of joinChunk and JoinShared). Joins
// are Join or JoinCopy, and clocks are emptied by Reset or Release.
func TestSharedAgainstFlat(t *testing.T) {
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 7))
		width := 1 + r.IntN(4*chunkLen)
		const nThreads, nObjs = 4, 6
		type thread struct {
			c   VectorClock
			img Image
			ver uint64
		}
		var ths [nThreads]thread
		var refT [nThreads]VectorClock
		var objs [nObjs]Shared
		var refO [nObjs]VectorClock
		var vers uint64
		// check compares the clocks a step touched (ti, oi, and o2 or u
		// when it used one), and every clock each 50 steps: a chunk
		// modified in place while shared shows in another clock, and stays.
		check := func(step int, what string, touched ...int) {
			t.Helper()
			full := step%50 == 0
			for i := range ths {
				if !full && !slices.Contains(touched, i) {
					continue
				}
				for g := range width + 8 {
					if got, want := ths[i].c.Get(trace.GID(g)), refT[i].Get(trace.GID(g)); got != want {
						t.Fatalf("seed %d step %d (%s): thread %d entry %d = %d, want %d", seed, step, what, i, g, got, want)
					}
				}
			}
			tail := func(who string, chs []*chunk) {
				for i, c := range chs {
					if c == nil {
						continue
					}
					for j, x := range c.v[c.n:] {
						if x != 0 {
							t.Fatalf("seed %d step %d (%s): %s chunk %d: entry %d past n=%d is %d", seed, step, what, who, i, c.n+j, c.n, x)
						}
					}
				}
			}
			for i := range ths {
				tail("image", ths[i].img.ch)
			}
			for i := range objs {
				if !full && !slices.Contains(touched, nThreads+i) {
					continue
				}
				tail("object", objs[i].ch)
				flat := objs[i].FlatInto(nil) // as WCP reads the incoming clock
				for g := range width + 8 {
					if got, want := objs[i].Get(trace.GID(g)), refO[i].Get(trace.GID(g)); got != want || flat.Get(trace.GID(g)) != want {
						t.Fatalf("seed %d step %d (%s): object %d entry %d = %d (flat %d), want %d", seed, step, what, i, g, got, flat.Get(trace.GID(g)), want)
					}
				}
			}
		}
		for step := range 1000 {
			ti, oi := r.IntN(nThreads), r.IntN(nObjs)
			other := -1 // the second clock a step used
			th := &ths[ti]
			g := trace.GID(r.IntN(width))
			var what string
			switch op := r.IntN(10); op {
			case 0, 1: // tick: the own entry changes without a new version
				what = "tick"
				own := trace.GID(ti * width / nThreads)
				th.c.Inc(own)
				refT[ti].Inc(own)
				th.img.Sync(th.c, th.ver, own)
			case 2: // a raise elsewhere, with a new version
				what = "raise"
				c := th.c.Get(g) + uint32(r.IntN(3))
				th.c.Set(g, c)
				refT[ti].Set(g, c)
				vers++
				th.ver = vers
			case 3: // release: o := C_t
				what = "copy"
				th.img.Sync(th.c, th.ver, trace.GID(ti*width/nThreads))
				th.img.CopyTo(&objs[oi], th.c)
				refO[oi].Copy(refT[ti])
			case 4: // release: o ⊔= C_t
				what = "join to"
				th.img.Sync(th.c, th.ver, trace.GID(ti*width/nThreads))
				changed := th.img.JoinTo(&objs[oi], th.c)
				if want := refO[oi].JoinChanged(refT[ti]); changed != want {
					t.Fatalf("seed %d step %d: JoinTo changed %v, want %v", seed, step, changed, want)
				}
			case 5: // acquire: C_t ⊔= o
				what = "acquire"
				var m *Image
				if r.IntN(4) > 0 {
					m = &th.img
				}
				changed := th.c.JoinShared(objs[oi], m)
				want := refT[ti].JoinChanged(refO[oi])
				if changed != want {
					t.Fatalf("seed %d step %d: JoinShared changed %v, want %v", seed, step, changed, want)
				}
				if changed {
					vers++
					if m != nil {
						m.Advance(th.ver, vers)
					}
					th.ver = vers
				}
			case 6: // o ⊔= o'
				what = "object join"
				o2 := r.IntN(nObjs)
				other = o2
				if r.IntN(2) == 0 {
					// (Join may say it changed when it took a chunk of zeros.)
					objs[oi].Join(objs[o2])
					refO[oi].Join(refO[o2])
				} else {
					what = "object join copy"
					changed := objs[oi].JoinCopy(objs[o2])
					if want := refO[oi].JoinChanged(refO[o2]); changed != want {
						t.Fatalf("seed %d step %d (%s): changed %v, want %v", seed, step, what, changed, want)
					}
				}
			case 7: // an object's own entry set
				what = "set"
				c := objs[oi].Get(g) + uint32(r.IntN(3))
				objs[oi].Set(g, c)
				refO[oi].Set(g, c)
			case 8:
				what = "reset, release or clone"
				if k := r.IntN(3); k < 2 {
					// Release hands back the chunks only objs[oi] has: a
					// later own takes them, and a chunk another clock still
					// read would show there as wrong entries.
					if k == 0 {
						objs[oi].Reset()
					} else {
						objs[oi].Release()
					}
					refO[oi] = refO[oi][:0]
				} else {
					o2 := r.IntN(nObjs)
					objs[oi] = objs[o2].Clone()
					refO[oi] = refO[o2].Clone()
				}
			case 9: // a fork: a new clock from a thread's
				what = "fork"
				u := r.IntN(nThreads)
				other = u
				if u == ti {
					continue
				}
				ths[u] = thread{c: th.c.Clone()}
				ths[u].img.Fork(&th.img)
				refT[u] = refT[ti].Clone()
				vers++
				ths[u].ver = vers
			}
			check(step, what, ti, nThreads+oi, other, nThreads+other)
		}
	}
}

// TestSharedChunksShared: clocks copied from one goroutine's share its
// chunks but the one of its own entry, which each gets a copy of, updated
// in place at the next copy; an acquire of a clock whose chunks the
// goroutine's image holds reads none of them.
func TestSharedChunksShared(t *testing.T) {
	var c VectorClock
	for g := range 10 * chunkLen {
		c.Set(trace.GID(g), uint32(g+1))
	}
	var m Image
	m.Sync(c, 1, 0)
	var a, b Shared
	m.CopyTo(&a, c)
	m.CopyTo(&b, c)
	for i := range a.ch {
		if shared := a.ch[i] == b.ch[i] && a.ch[i] == m.ch[i]; shared != (i > 0) {
			t.Fatalf("chunk %d shared: %v", i, shared)
		}
	}
	own0 := a.ch[0]
	c.Inc(0)
	m.Sync(c, 1, 0)
	m.CopyTo(&a, c)
	if a.ch[0] != own0 || a.Get(0) != 2 || m.ch[1] != b.ch[1] {
		t.Fatalf("a tick: a's chunk 0 in place %v, a(0) = %d, chunk 1 kept %v", a.ch[0] == own0, a.Get(0), m.ch[1] == b.ch[1])
	}
	b.Set(5, 99) // b's own chunk 0; a's is unchanged
	if a.Get(5) != 6 || b.Get(5) != 99 {
		t.Fatalf("a(5) = %d, b(5) = %d, want 6, 99", a.Get(5), b.Get(5))
	}
	b.Set(70, 99) // chunk 1 is shared: b gets a copy
	if a.Get(70) != 71 || m.ch[1].v[70-chunkLen] != 71 {
		t.Fatalf("a shared chunk was modified: a(70) = %d", a.Get(70))
	}
	if c.JoinShared(a, &m) {
		t.Fatal("joining an older copy changed the clock")
	}
}
