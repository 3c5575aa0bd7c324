package shadow

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestShadowTableKeepsEveryAddress checks the shadow table against a Go
// map: every address, including 0 and addresses that collide in the hash,
// keeps its own state across growth.
func TestShadowTableKeepsEveryAddress(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var tab Table[uint64]
	want := map[uint64]uint64{}
	addrs := []uint64{0, 1, ^uint64(0), 8, 16}
	for i := range uint64(5000) {
		addrs = append(addrs, 0x1000+8*i, r.Uint64(), i<<54) // i<<54 share low bits
	}
	for i, a := range addrs {
		*tab.Get(a) += uint64(i) + 1
		want[a] += uint64(i) + 1
	}
	if tab.Len() != len(want) {
		t.Fatalf("len = %d, want %d", tab.Len(), len(want))
	}
	for a, v := range want {
		if got := *tab.Get(a); got != v {
			t.Fatalf("address %#x holds %d, want %d", a, got, v)
		}
	}
	if tab.Len() != len(want) {
		t.Fatalf("lookups added addresses: len = %d, want %d", tab.Len(), len(want))
	}
}

// TestShadowMemKeepsEveryAddress checks the paged shadow memory against a
// Go map: aligned words (dense and scattered), unaligned addresses sharing
// a word, address 0 and the top of the address space each keep their own
// state, and len counts each once.
func TestShadowMemKeepsEveryAddress(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var mem Mem[uint64]
	want := map[uint64]uint64{}
	addrs := []uint64{0, 1, 7, 8, ^uint64(0), ^uint64(7)}
	for i := range uint64(3000) {
		addrs = append(addrs, 0x1000+8*i, 0x1001+8*i, 0x1004+8*i, r.Uint64(), r.Uint64()&^7)
	}
	for round := range 2 {
		for i, a := range addrs {
			*mem.Get(a) += uint64(i+1) << round
			want[a] += uint64(i+1) << round
		}
	}
	if mem.Len() != len(want) {
		t.Fatalf("len = %d, want %d", mem.Len(), len(want))
	}
	for a, v := range want {
		if got := *mem.Get(a); got != v {
			t.Fatalf("address %#x holds %d, want %d", a, got, v)
		}
	}
}

// Mem's Lookup finds exactly the addresses Get was asked for (adding
// none), and Each visits each of them once with its state.
func TestMemLookupEach(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var mem Mem[uint64]
	want := map[uint64]uint64{}
	for i := range uint64(2000) {
		for _, a := range []uint64{0x2000 + 8*i, 0x2003 + 16*i, r.Uint64(), r.Uint64() &^ 7} {
			*mem.Get(a) = a ^ 0x5a
			want[a] = a ^ 0x5a
		}
	}
	*mem.Get(0) = 0x5a
	want[0] = 0x5a
	for i := range uint64(2000) {
		for _, a := range []uint64{0x2000 + 8*i + 4, 0x9000000 + 8*i, r.Uint64() | 1} {
			if _, ok := want[a]; !ok && mem.Lookup(a) != nil {
				t.Fatalf("Lookup(%#x) found an address never asked for", a)
			}
		}
	}
	for a, v := range want {
		if p := mem.Lookup(a); p == nil || *p != v {
			t.Fatalf("Lookup(%#x) = %v, want %d", a, p, v)
		}
	}
	if mem.Len() != len(want) {
		t.Fatalf("lookups added addresses: len %d, want %d", mem.Len(), len(want))
	}
	seen := map[uint64]bool{}
	mem.Each(func(a uint64, v *uint64) {
		if seen[a] || want[a] != *v {
			t.Fatalf("Each: address %#x (again: %v) holds %d, want %d", a, seen[a], *v, want[a])
		}
		seen[a] = true
	})
	if len(seen) != len(want) {
		t.Fatalf("Each visited %d addresses, want %d", len(seen), len(want))
	}
}

func TestMemClear(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lo, hi uint64
	}{
		{"one word", 0x1000, 0x1008},
		{"tiny object", 0x1003, 0x1005},
		{"across pages", 0x1070, 0x1110},
		{"huge range", 0x100, 1 << 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Mem[int]
			addrs := []uint64{0xff8, 0x1000, 0x1003, 0x1004, 0x1005, 0x1008, 0x1070, 0x1078, 0x1100, 0x1108, 0x1110, 0x2000}
			for i, a := range addrs {
				*m.Get(a) = i + 1
			}
			m.Clear(tc.lo, tc.hi)
			for i, a := range addrs {
				want := i + 1
				if a >= tc.lo && a < tc.hi {
					want = 0
				}
				if got := *m.Get(a); got != want {
					t.Errorf("after Clear(%#x, %#x): state of %#x = %d, want %d", tc.lo, tc.hi, a, got, want)
				}
			}
		})
	}
}

func TestTableClearRangeMatchesLoop(t *testing.T) {
	var tab Table[int]
	for a := uint64(0); a < 3000; a += 7 {
		*tab.Get(a) = int(a) + 1
	}
	// A range shorter than the table (address loop) and one longer (slot scan).
	for _, r := range [][2]uint64{{100, 200}, {0, 1 << 20}} {
		tab.ClearRange(r[0], r[1], func(a uint64) bool { return a%2 == 1 })
		for a := uint64(0); a < 3000; a += 7 {
			v := tab.Lookup(a)
			want := int(a) + 1
			if a >= r[0] && a < r[1] && a%2 == 1 {
				want = 0
			}
			if a >= 100 && a < 200 && a%2 == 1 {
				want = 0 // cleared by the first range
			}
			if v == nil || *v != want {
				t.Fatalf("range %v: %#x = %v, want %d", r, a, v, want)
			}
		}
	}
	if tab.Lookup(5) != nil {
		t.Fatal("Lookup added an address")
	}
}

// Mem against a map under random Gets and Clears of aligned and unaligned
// addresses in a few pages and far apart: every state, Lookup and Each
// agree after each step.
func TestMemClearMatchesMap(t *testing.T) {
	// Small ranges among a few pages; and ranges of up to 256 KiB (a
	// large allocation's) among thousands of pages in hundreds of groups,
	// which Clear walks group by group rather than the table.
	t.Run("small", func(t *testing.T) { memClearMatchesMap(t, 2048, 600, 20000) })
	t.Run("large", func(t *testing.T) { memClearMatchesMap(t, 4<<20, 256<<10, 60000) })
}

func memClearMatchesMap(t *testing.T, window, span uint64, steps int) {
	r := rand.New(rand.NewPCG(7, 8))
	var m Mem[uint64]
	want := map[uint64]uint64{}
	gone := map[uint64]bool{} // cleared and not asked for since
	addr := func() uint64 {
		if r.IntN(4) == 0 {
			return r.Uint64() >> 8
		}
		return 0x10000 + r.Uint64N(window)
	}
	for step := range steps {
		if r.IntN(20) == 0 {
			lo := addr()
			hi := lo + r.Uint64N(span)
			if r.IntN(10) == 0 {
				hi = lo + r.Uint64N(1<<40)
			}
			m.Clear(lo, hi)
			for a := range want {
				if a >= lo && a < hi {
					// The address goes (its state is let go, zeroed
					// when handed out again).
					delete(want, a)
					gone[a] = true
				}
			}
			continue
		}
		a := addr()
		v := uint64(step + 1)
		if p := m.Get(a); gone[a] && *p != 0 {
			t.Fatalf("Get(%#x) after its Clear = %d, want 0", a, *p)
		} else {
			*p = v
		}
		want[a], gone[a] = v, false
	}
	for a, g := range gone {
		if p := m.Lookup(a); g && p != nil && *p != 0 {
			t.Fatalf("Lookup(%#x) after its Clear = %d, want nil or 0", a, *p)
		}
	}
	checkMemHolds(t, &m, want)
}

// checkMemHolds checks that m holds exactly want: through Lookup, Each
// and Len.
func checkMemHolds(t *testing.T, m *Mem[uint64], want map[uint64]uint64) {
	t.Helper()
	for a, v := range want {
		if p := m.Lookup(a); p == nil || *p != v {
			t.Fatalf("Lookup(%#x) = %v, want %#x", a, p, v)
		}
	}
	n := 0
	m.Each(func(a uint64, p *uint64) {
		n++
		if w, ok := want[a]; !ok || *p != w {
			t.Fatalf("Each: %#x = %#x, want %#x (held %v)", a, *p, w, ok)
		}
	})
	if n != len(want) || m.Len() != len(want) {
		t.Fatalf("Each visited %d, Len %d, want %d", n, m.Len(), len(want))
	}
}

// Odd pages grow their state arrays by doubling, reusing the arrays other
// pages outgrew (growOdd): filling many pages byte by byte, in an order
// that interleaves them, keeps every state apart.
func TestMemOddPagesGrowApart(t *testing.T) {
	var m Mem[uint64]
	const pages = 40
	for off := range uint64(1 << pageShift) {
		for p := range uint64(pages) {
			*m.Get(0x40000 + p<<pageShift + off) = p<<8 | off
		}
	}
	for p := range uint64(pages) {
		for off := range uint64(1 << pageShift) {
			a := 0x40000 + p<<pageShift + off
			if got := *m.Get(a); got != p<<8|off {
				t.Fatalf("address %#x holds %#x, want %#x", a, got, p<<8|off)
			}
		}
	}
	if want := pages << pageShift; m.Len() != want {
		t.Fatalf("len = %d, want %d", m.Len(), want)
	}
}

// Odd pages whose addresses come scattered (short byte slices of a tiny
// allocator's blocks) are indexed, and turn dense past indexedMax states;
// those whose first addresses come side by side (a byte-wise loop) turn
// dense at once: in each, every state stays its address's, through Get,
// Lookup, Each and a Clear of part of a page.
func TestMemOddPagesIndexed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int  // odd offsets set per page
		walk    bool // in order, side by side
		indexed bool // each page indexed at the end
		dense   bool
	}{
		{"few", oddScan, false, false, false},
		{"scattered", 30, false, true, false},
		{"full index", indexedMax, false, true, false},
		{"past the index", indexedMax + 1, false, false, true},
		{"every odd offset", 112, false, false, true},
		{"walk", 20, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Mem[uint64]
			r := rand.New(rand.NewPCG(3, uint64(tc.n)))
			var odd []uint64
			for off := range uint64(1 << pageShift) {
				if off&7 != 0 {
					odd = append(odd, off)
				}
			}
			const pages = 30
			want := map[uint64]uint64{}
			for p := range uint64(pages) {
				offs := slices.Clone(odd)
				if !tc.walk {
					r.Shuffle(len(offs), func(i, j int) { offs[i], offs[j] = offs[j], offs[i] })
				}
				for _, off := range offs[:tc.n] {
					a := 0x80000 + p<<pageShift + off
					*m.Get(a) = a ^ 0x5555
					want[a] = a ^ 0x5555
				}
			}
			for p := range uint64(pages) {
				op := *m.odd.Lookup(0x80000>>pageShift + p + 1)
				if (op.idx != nil) != tc.indexed || op.dense != tc.dense {
					t.Fatalf("page %d: indexed %v, dense %v; want %v, %v", p, op.idx != nil, op.dense, tc.indexed, tc.dense)
				}
			}
			// Clear the first half of every other page.
			for p := uint64(0); p < pages; p += 2 {
				lo := 0x80000 + p<<pageShift
				m.Clear(lo, lo+1<<(pageShift-1))
				for a := range want {
					if a >= lo && a < lo+1<<(pageShift-1) {
						delete(want, a)
					}
				}
			}
			checkMemHolds(t, &m, want)
			// Cleared addresses come back zero.
			for p := uint64(0); p < pages; p += 2 {
				for off := uint64(1); off < 1<<(pageShift-1); off += 2 {
					if v := *m.Get(0x80000 + p<<pageShift + off); v != 0 {
						t.Fatalf("Get(%#x) after its Clear = %#x", 0x80000+p<<pageShift+off, v)
					}
				}
			}
		})
	}
}

// BenchmarkMemBytes is a byte-wise loop's lookups: every byte of a 64 KiB
// buffer in order, 7 of 8 of them unaligned (odd pages), as a masked or
// copied []byte names them.
func BenchmarkMemBytes(b *testing.B) {
	var m Mem[[6]uint64] // about the size of FastTrack's state
	const base, n = 0xc000100000, 64 << 10
	b.SetBytes(n)
	for b.Loop() {
		for a := uint64(base); a < base+n; a++ {
			m.Get(a)[0]++
		}
	}
}

// BenchmarkMemBytesFresh is a byte-wise loop over memory the shadow has
// not seen: every byte of 1 MiB, in order, in an empty Mem, as a
// compressor's loops over fresh buffers name them (klauspost/pgzip's trace
// touched 221,000 odd pages once each).
func BenchmarkMemBytesFresh(b *testing.B) {
	const base, n = 0xc000100000, 1 << 20
	b.SetBytes(n)
	for b.Loop() {
		var m Mem[[6]uint64]
		for a := uint64(base); a < base+n; a++ {
			m.Get(a)[0]++
		}
	}
}

// BenchmarkMemTinyBytes is the lookups of short byte slices that Go's
// tiny allocator packs into 16-byte blocks (a radix tree's keys): in each
// block, objects of 1 to 5 bytes side by side from a random offset, every
// byte of each named once, over 1 MiB. Most of the odd pages see a dozen
// or two of their 112 odd offsets, not in order: indexed, not dense
// (B/op is the states' memory).
func BenchmarkMemTinyBytes(b *testing.B) {
	const base, n = 0xc000100000, 1 << 20
	r := rand.New(rand.NewPCG(5, 6))
	var addrs []uint64
	for blk := uint64(base); blk < base+n; blk += 16 {
		for off := uint64(r.IntN(4)); off < 16; {
			size := 1 + uint64(r.IntN(5))
			for i := off; i < min(off+size, 16); i++ {
				addrs = append(addrs, blk+i)
			}
			off += size + uint64(r.IntN(8))
		}
	}
	b.SetBytes(int64(len(addrs)))
	b.ReportAllocs()
	for b.Loop() {
		var m Mem[[5]uint64]
		for _, a := range addrs {
			m.Get(a)[0]++
		}
	}
}

// BenchmarkMemClearLarge is Clear at an allocation of 256 KiB whose words
// were all touched before (a large block the garbage collector hands out
// again), then a write of its first word.
func BenchmarkMemClearLarge(b *testing.B) {
	var m Mem[[6]uint64]
	const base, n = 0xc000100000, 256 << 10
	for a := uint64(base); a < base+n; a += 8 {
		m.Get(a)[0]++
	}
	b.SetBytes(n)
	for b.Loop() {
		m.Clear(base, base+n)
		m.Get(base)[0]++
	}
}

// TestMemRunMatchesGet: Run and Strided hand out the states Get does,
// word by word (every stride-th) up to the end of the page, among Gets,
// Clears and Runs across page boundaries, with Len counting each word
// handed out once (Strided's only).
func TestMemRunMatchesGet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var m Mem[uint64]
	want := map[uint64]uint64{}
	const base, window = 0x10000, 2048
	for step := range 20000 {
		a := base + 8*r.Uint64N(window/8)
		v := uint64(step + 1)
		switch r.IntN(10) {
		case 0:
			hi := a + r.Uint64N(600)
			m.Clear(a, hi)
			for x := range want {
				if x >= a && x < hi {
					delete(want, x)
				}
			}
		case 1, 2, 3:
			*m.Get(a) = v
			want[a] = v
		case 4, 5:
			n, stride := 1+r.Uint64N(20), 1+r.Uint64N(5)
			cells, k := m.Strided(a, n, stride)
			if left := (16 - (a>>3)&15 + stride - 1) / stride; k != min(n, left) {
				t.Fatalf("step %d: Strided(%#x, %d, %d) gave %d states, want %d (to the end of the page)", step, a, n, stride, k, min(n, left))
			}
			for j := range k {
				i, x := j*stride, a+8*j*stride
				if cells[i] != want[x] {
					t.Fatalf("step %d: Strided(%#x)[%d] = %d, want %d", step, a, i, cells[i], want[x])
				}
				if r.IntN(2) == 0 {
					cells[i] = v
					want[x] = v
				} else if _, ok := want[x]; !ok {
					want[x] = 0 // handed out: counted
				}
			}
		default:
			n := 1 + r.Uint64N(40)
			cells := m.Run(a, n)
			if k := min(n, 16-(a>>3)&15); uint64(len(cells)) != k {
				t.Fatalf("step %d: Run(%#x, %d) gave %d states, want %d (to the end of the page)", step, a, n, len(cells), k)
			}
			for i := range cells {
				x := a + 8*uint64(i)
				if cells[i] != want[x] {
					t.Fatalf("step %d: Run(%#x)[%d] = %d, want %d", step, a, i, cells[i], want[x])
				}
				if r.IntN(2) == 0 {
					cells[i] = v
					want[x] = v
				} else if _, ok := want[x]; !ok {
					want[x] = 0 // handed out: counted
				}
			}
		}
		if m.Len() != len(want) {
			t.Fatalf("step %d: Len %d, want %d", step, m.Len(), len(want))
		}
	}
	for x, v := range want {
		if got := *m.Get(x); got != v {
			t.Fatalf("Get(%#x) = %d, want %d", x, got, v)
		}
	}
}

// OddLive and OddBits agree with Lookup of each unaligned address of a
// word, over random gets and clears (sparse and dense odd pages).
func TestMemOddLiveMatchesLookup(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var mem Mem[uint64]
	const base, size = 0x10000, 4096
	for step := range 20000 {
		a := base + r.Uint64N(size)
		switch r.IntN(10) {
		case 0:
			n := r.Uint64N(64)
			mem.Clear(a, a+n)
		default:
			*mem.Get(a) = uint64(step)
		}
		x := (base + r.Uint64N(size)) &^ 7
		if step%2 == 0 {
			mem.Get(x + 1 + r.Uint64N(7)) // the last odd page is x's
		}
		want := uint64(0)
		for b := uint64(1); b < 8; b++ {
			if mem.Lookup(x+b) != nil {
				want |= 1 << b
			}
		}
		if got := OddBits(mem.OddLive(x), x); got != want {
			t.Fatalf("step %d: OddBits(OddLive(%#x)) = %#b, Lookup finds %#b", step, x, got, want)
		}
	}
}
