package vc

import (
	"math/rand/v2"
	"testing"

	"github.com/racekit/racekit/trace"
)

// joinLoop is the entry-by-entry join JoinShared uses for a part of a
// chunk: the reference joinFull must agree with, and its benchmark's
// baseline.
func joinLoop(w []uint32, b *chunk) (up, down uint32) {
	for j, c := range b.use() {
		x := w[j]
		up |= b2u(c > x)
		down |= b2u(x > c)
		w[j] = max(x, c)
	}
	for _, x := range w[b.n:] {
		down |= b2u(x > 0)
	}
	return up, down
}

// randChunk draws a chunk of n entries, each 0 or small, so that equal
// entries are common.
func randChunk(r *rand.Rand, n int) *chunk {
	c := &chunk{n: n}
	for j := range n {
		if r.IntN(3) > 0 {
			c.v[j] = uint32(r.IntN(4))
		}
	}
	return c
}

// TestFullAgainstLoop: joinFull and cmpFull give what the loops give, on
// chunks of every length, drawn so that either side may hold more, both,
// or neither.
func TestFullAgainstLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for i := range 20000 {
		a, b := randChunk(r, r.IntN(chunkLen+1)), randChunk(r, r.IntN(chunkLen+1))
		switch i % 3 {
		case 1: // b ⊒ a
			for j := range a.n {
				b.v[j] = max(b.v[j], a.v[j])
			}
			b.n = max(a.n, b.n)
		case 2: // a ⊒ b
			for j := range b.n {
				a.v[j] = max(a.v[j], b.v[j])
			}
			a.n = max(a.n, b.n)
		}
		wantA, wantB := false, false
		{
			var ao, bo uint32
			for j := range chunkLen {
				ao |= b2u(a.v[j] > b.v[j])
				bo |= b2u(b.v[j] > a.v[j])
			}
			wantA, wantB = ao == 0, bo == 0
		}
		if gotA, gotB := cmpChunks(a, b); gotA != wantA || gotB != wantB {
			t.Fatalf("case %d: cmpChunks(%v, %v) = %v, %v, want %v, %v", i, a.use(), b.use(), gotA, gotB, wantA, wantB)
		}
		w1, w2 := a.v, a.v
		up1, down1 := joinLoop(w1[:], b)
		up2, down2 := joinFull(&w2, &b.v)
		if w1 != w2 || (up1 != 0) != (up2 != 0) || (down1 != 0) != (down2 != 0) {
			t.Fatalf("case %d: joinFull(%v, %v) = %v up %d down %d, want %v up %d down %d", i, a.v, b.v, w2, up2, down2, w1, up1, down1)
		}
	}
}

// BenchmarkJoinSharedWide: a goroutine's clock of 1,024 entries joins
// shared clocks as wide (a worker pool's), all chunks full, each join
// raising some entries of some chunks. "loop" joins chunk by chunk with
// joinLoop, the same work without the whole-chunk path.
func BenchmarkJoinSharedWide(b *testing.B) {
	const width, nSrc, nDst = 1024, 64, 16
	r := rand.New(rand.NewPCG(1, 2))
	srcs := make([]Shared, nSrc)
	for i := range srcs {
		for g := range width {
			srcs[i].Set(trace.GID(g), uint32(1+r.IntN(1000)))
		}
		srcs[i] = srcs[i].Clone()
	}
	fresh := func() []VectorClock {
		dsts := make([]VectorClock, nDst)
		for i := range dsts {
			dsts[i] = make(VectorClock, width)
			for g := range width {
				dsts[i][g] = uint32(r.IntN(1000))
			}
		}
		return dsts
	}
	b.Run("full", func(b *testing.B) {
		dsts := fresh()
		for i := 0; b.Loop(); i++ {
			dsts[i%nDst].JoinShared(srcs[(i*7)%nSrc], nil)
		}
	})
	b.Run("loop", func(b *testing.B) {
		dsts := fresh()
		for i := 0; b.Loop(); i++ {
			v := dsts[i%nDst]
			for k, c := range srcs[(i*7)%nSrc].ch {
				joinLoop(v[k<<chunkShift:(k+1)<<chunkShift], c)
			}
		}
	})
}
