package rt

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

type fieldsObj struct {
	A  int
	mu sync.RWMutex
	B  [3]byte
	C  string
}

// fieldsLayout encodes a Fields layout as the instrumenter does.
func fieldsLayout(lock byte, lockOff uintptr, items ...[4]uint64) string {
	var b []byte
	if lock != 0 {
		b = binary.AppendUvarint(append(b, lock), uint64(lockOff))
	}
	for _, it := range items {
		b = append(b, byte(it[0]))
		for _, v := range it[1:] {
			b = binary.AppendUvarint(b, v)
		}
	}
	return string(b)
}

// Fields records the struct's own lock around the fields' accesses, each
// at its address (a byte array's every byte), and nothing for a nil
// pointer.
func TestFieldsLayout(t *testing.T) {
	p := escape[fieldsObj]()
	var o fieldsObj
	lay := fieldsLayout('s', unsafe.Offsetof(o.mu),
		[4]uint64{'r', uint64(unsafe.Offsetof(o.A)), 8, 1},
		[4]uint64{'w', uint64(unsafe.Offsetof(o.B)), 1, 3},
		[4]uint64{'r', uint64(unsafe.Offsetof(o.C)), 8, 1})
	tr := record(t, false, func(site uint32) {
		if Fields(p, lay, site, true) != p {
			t.Error("Fields does not return its operand")
		}
		Fields[fieldsObj](nil, lay, site, true)
	})
	base := uint64(uintptr(unsafe.Pointer(p)))
	var got []string
	for _, e := range tr.Events {
		if e.Op.IsAccess() || e.Op == trace.OpAcquire || e.Op == trace.OpRelease {
			got = append(got, fmt.Sprintf("%v+%d read=%v", e.Op, e.Obj-base, e.ReadLock()))
		}
	}
	mu, b, c := unsafe.Offsetof(o.mu), unsafe.Offsetof(o.B), unsafe.Offsetof(o.C)
	want := []string{
		fmt.Sprintf("%v+%d read=true", trace.OpAcquire, mu),
		fmt.Sprintf("%v+0 read=false", trace.OpRead),
		fmt.Sprintf("%v+%d read=false", trace.OpWrite, b),
		fmt.Sprintf("%v+%d read=false", trace.OpWrite, b+1),
		fmt.Sprintf("%v+%d read=false", trace.OpWrite, b+2),
		fmt.Sprintf("%v+%d read=false", trace.OpRead, c),
		fmt.Sprintf("%v+%d read=true", trace.OpRelease, mu),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
}

type lazyObj struct {
	M    map[string]int
	N    int
	Next *fieldsObj
	Nil  *fieldsObj
}

// 'z' writes a field while it is zero and reads it after; 'R' and 'W'
// name what a pointer or map field holds (nothing for a nil one).
func TestFieldsLazyAndDeref(t *testing.T) {
	p := escape[lazyObj]()
	p.M = map[string]int{}
	p.Next = escape[fieldsObj]()
	var o lazyObj
	lay := fieldsLayout(0, 0,
		[4]uint64{'z', uint64(unsafe.Offsetof(o.N)), 8, 1},
		[4]uint64{'W', uint64(unsafe.Offsetof(o.M)), 8, 1},
		[4]uint64{'R', uint64(unsafe.Offsetof(o.Next)), 8, 1},
		[4]uint64{'W', uint64(unsafe.Offsetof(o.Nil)), 8, 1})
	tr := record(t, false, func(site uint32) {
		Fields(p, lay, site, true)
		p.N = 3
		Fields(p, lay, site, true)
	})
	n := uint64(uintptr(unsafe.Pointer(&p.N)))
	m := uint64(uintptr(*(*unsafe.Pointer)(unsafe.Pointer(&p.M))))
	next := uint64(uintptr(unsafe.Pointer(p.Next)))
	var got []string
	for _, e := range tr.Events {
		if !e.Op.IsAccess() {
			continue
		}
		name := map[uint64]string{n: "N", m: "map", next: "next"}[e.Obj]
		if name == "" {
			name = fmt.Sprintf("%#x", e.Obj)
		}
		got = append(got, e.Op.String()+" "+name)
	}
	r, w := trace.OpRead.String(), trace.OpWrite.String()
	want := []string{w + " N", w + " map", r + " next", r + " N", w + " map", r + " next"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// RAnyMap reads the map an interface holds, and nothing for other values.
func TestRAnyMap(t *testing.T) {
	m := map[string]int{"a": 1}
	escapeSink = m // on the heap: rt records nothing in a stack
	tr := record(t, false, func(site uint32) {
		if RAnyMap(m, site, true) == nil {
			t.Error("RAnyMap does not return its operand")
		}
		RAnyMap(escape[fieldsObj](), site, true)
		RAnyMap(nil, site, true)
		var nilMap map[string]int
		RAnyMap(nilMap, site, true)
	})
	var got []string
	for _, e := range tr.Events {
		if e.Op.IsAccess() {
			got = append(got, fmt.Sprintf("%v %#x", e.Op, e.Obj))
		}
	}
	want := fmt.Sprintf("%v %#x", trace.OpRead, uintptr(*(*unsafe.Pointer)(unsafe.Pointer(&m))))
	if len(got) != 1 || got[0] != want {
		t.Errorf("accesses %q, want one: %q", got, want)
	}
}

func TestLayoutUvarint(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 1 << 20, 1<<64 - 1} {
		s := string(binary.AppendUvarint(nil, v)) + "z"
		got, rest := layoutUvarint(s)
		if got != v || rest != "z" {
			t.Errorf("%d: got %d, rest %q", v, got, rest)
		}
	}
	if _, rest := layoutUvarint("\x80"); rest != "" {
		t.Errorf("truncated: rest %q", rest)
	}
}
