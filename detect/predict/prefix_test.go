package predict

import "testing"

// TestPrefixAllocs: after an Alloc, every byte of its range reads zero
// (known) until a later write; bytes outside it, or written after it, do
// not take it. Small objects are indexed per byte, large ones listed; the
// answers match a scan of every Alloc, as value() did before the index.
func TestPrefixAllocs(t *testing.T) {
	type alloc struct{ lo, hi uint64 }
	allocs := []alloc{{0x1000, 0x1001}, {0x1001, 0x1002}, {0x1008, 0x1020}, {0x2000, 0x2000 + 2*smallAlloc}, {0x1003, 0x1005}}
	p := newPrefix()
	for i, a := range allocs {
		p.addAlloc(a.lo, a.hi, i*10)
	}
	p.mem[memKey{addr: 0x1008}] = memVal{val{kind: valKnown, v: 7}, 25} // written after the third alloc
	p.mem[memKey{addr: 0x1000}] = memVal{val{kind: valKnown, v: 3}, 5}  // written after the first alloc
	scan := func(addr uint64) valKind {
		m, ok := p.mem[memKey{addr: addr}]
		at := -1
		if ok {
			at = m.at
		}
		for i := len(allocs) - 1; i >= 0 && i*10 > at; i-- {
			if addr >= allocs[i].lo && addr < allocs[i].hi {
				return valKnown
			}
		}
		if ok {
			return m.kind
		}
		return valNone
	}
	for addr := uint64(0xff8); addr < 0x2000+2*smallAlloc+16; addr++ {
		if addr > 0x1030 && addr < 0x1ff0 {
			continue
		}
		got := p.value(memKey{addr: addr})
		if want := scan(addr); got.kind != want {
			t.Fatalf("value(%#x) = %v, want kind %v", addr, got, want)
		}
	}
	if v := p.value(memKey{addr: 0x1008}); v.kind != valKnown || v.v != 7 {
		t.Errorf("a write after the alloc: %+v, want 7", v)
	}
	if v := p.value(memKey{addr: 0x1004}); v.kind != valKnown || v.v != 0 {
		t.Errorf("an alloc's byte never written: %+v, want known 0", v)
	}
}
